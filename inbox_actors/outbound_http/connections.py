"""Keep-alive HTTP/1.1 connections: opening one (TCP, TLS for https), a request's exchange on it, and the idle ones
kept per (scheme, host, port).

- An exchange sends the request and its body and reads the response: its status and, when the caller keeps it,
  up to `max_body` bytes of its body (a longer body ends the exchange early and closes the connection).
- A connection goes back to its idle list only when both sides finished the exchange (not after
  `Connection: close` or an HTTP/1.0 answer); at most `max_idle_per_host` idle ones per host, each for at most
  `max_idle_seconds`, the most recently used lent first.
- An idle connection the server has closed (its EOF waiting to be read) is dropped rather than lent. A reused
  connection that fails before any byte of the response arrived is one the server closed while idle all the same:
  `StaleConnection` tells the caller to send once more on a new connection (`pooled_exchange` does, unless told
  the request must not go twice). A failure on a new connection is the caller's to judge.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import h11
import trio

log = logging.getLogger("inbox_actors.outbound_http.connections")

RECEIVE_SIZE = 64 * 1024
# Below the 5 s keep-alive timeout of Node, Apache and Hypercorn, so a connection taken from the pool is
# seldom one the server is closing at that moment (the resend on StaleConnection covers the rest).
DEFAULT_MAX_IDLE_SECONDS = 4.0

PoolKey = tuple[str, str, int]
"""(scheme, host, port)"""

# What a broken connection or a bad answer raises during an exchange.
EXCHANGE_FAILURES = (OSError, trio.BrokenResourceError, h11.RemoteProtocolError)


class StaleConnection(Exception):
    """A reused connection failed before any response byte: the server had closed it while it was idle."""


class ClosedWithoutAnswer(Exception):
    """The server closed the connection before the first byte of a response."""


class Connection:
    __slots__ = ("socket_stream", "stream", "protocol", "reused", "idle_since")

    def __init__(self, socket_stream: trio.SocketStream, stream: trio.abc.Stream) -> None:
        self.socket_stream = socket_stream
        self.stream = stream                 # the socket stream, or the TLS stream over it
        self.protocol = h11.Connection(h11.CLIENT)
        self.reused = False
        self.idle_since = 0.0

    def close(self) -> None:
        # Synchronous, so it also works in a cancelled scope; skipping TLS close_notify is harmless, since every
        # response was framed by its own length.
        self.socket_stream.socket.close()


@dataclass(frozen=True, slots=True)
class Answer:
    status_code: int
    body: bytes | None
    """The body when the caller kept it and it fit in `max_body`; None otherwise."""


class TlsContext:
    """The TLS context of https connections, made at the first one unless given."""

    def __init__(self, context: ssl.SSLContext | None = None) -> None:
        self._context = context

    def for_scheme(self, scheme: str) -> ssl.SSLContext | None:
        """The context for a connection of `scheme`; None for plain http."""
        if scheme != "https":
            return None
        if self._context is None:
            self._context = ssl.create_default_context()
        return self._context


async def open_connection(addresses: list[tuple[int, tuple]], *, tls: ssl.SSLContext | None,
                          server_hostname: str) -> Connection:
    """A connection to the first of `addresses` ((family, sockaddr), as getaddrinfo gives them) that accepts one,
    over TLS when `tls` is given; the first address's error if none does."""
    socket_stream = await _open_tcp(addresses)
    if tls is None:
        return Connection(socket_stream, socket_stream)
    tls_stream = trio.SSLStream(socket_stream, tls, server_hostname=server_hostname, https_compatible=True)
    handshaken = False
    try:
        await tls_stream.do_handshake()
        handshaken = True
    finally:
        if not handshaken:
            socket_stream.socket.close()
    return Connection(socket_stream, tls_stream)


async def exchange(connection: Connection, request: h11.Request, body: bytes, *, max_body: int,
                   keep_body: bool, before_write: Callable[[], None] | None = None) -> tuple[Answer, bool]:
    """Send `request` with `body` and read the answer; (the answer, whether the connection may be reused).
    Raises StaleConnection (a reused connection the server had closed), ClosedWithoutAnswer, or one of
    EXCHANGE_FAILURES; the caller closes the connection then. `before_write`: called once the connection is
    ready, right before the request's bytes are written (with no scheduling point between the two); what it raises
    is raised as it is, and nothing was written."""
    protocol = connection.protocol
    answered = False
    if before_write is not None:
        before_write()
    try:
        await connection.stream.send_all(
            protocol.send(request) + protocol.send(h11.Data(data=body)) + protocol.send(h11.EndOfMessage()))
        status_code = 0
        chunks: list[bytes] = []
        body_bytes = 0
        while True:
            event = protocol.next_event()
            if event is h11.NEED_DATA:
                data = await connection.stream.receive_some(RECEIVE_SIZE)
                if not data and not answered:
                    raise ClosedWithoutAnswer
                answered = True
                protocol.receive_data(data)
            elif type(event) is h11.Response:
                status_code = event.status_code
                if _declared_length(event) > max_body:
                    return Answer(status_code, None), False     # not worth reading: the connection is closed
            elif type(event) is h11.Data:
                body_bytes += len(event.data)
                if body_bytes > max_body:
                    return Answer(status_code, None), False
                if keep_body:
                    chunks.append(event.data)
            elif type(event) is h11.EndOfMessage:
                break
            # InformationalResponse (1xx) is skipped; ConnectionClosed cannot come before EndOfMessage.
    except trio.Cancelled:
        raise
    except (*EXCHANGE_FAILURES, ClosedWithoutAnswer) as err:
        if connection.reused and not answered:
            raise StaleConnection from err
        raise
    reusable = protocol.our_state is h11.DONE and protocol.their_state is h11.DONE
    if reusable:
        protocol.start_next_cycle()
    return Answer(status_code, b"".join(chunks) if keep_body else None), reusable


async def pooled_exchange(idle: IdleConnections, key: PoolKey, connect: Callable[[], Awaitable[Connection]],
                          request: h11.Request, body: bytes, *, max_body: int, keep_body: bool,
                          resend_stale: bool = True, before_write: Callable[[], None] | None = None) -> Answer:
    """One exchange on an idle connection to `key`, else on a new one from `connect()`; the connection goes back to
    `idle` when it may be reused, else is closed. An idle one the server turns out to have closed is replaced by a
    new one and the request sent once more, unless `resend_stale` is false: then its failure is raised as it is.
    `before_write` is called right before each write of the request (`exchange`)."""
    connection = idle.take(key)
    if connection is not None:
        connection.reused = resend_stale
        try:
            return await _exchange_and_keep(idle, key, connection, request, body, max_body, keep_body, before_write)
        except StaleConnection:
            _said_closed(key)
    return await _exchange_and_keep(idle, key, await connect(), request, body, max_body, keep_body, before_write)


def _said_closed(key: PoolKey) -> None:
    log.debug("an idle connection to %s:%s was closed by the server; sending on a new one", key[1], key[2])


async def _exchange_and_keep(idle: IdleConnections, key: PoolKey, connection: Connection, request: h11.Request,
                             body: bytes, max_body: int, keep_body: bool,
                             before_write: Callable[[], None] | None) -> Answer:
    reusable = False
    try:
        answer, reusable = await exchange(connection, request, body, max_body=max_body, keep_body=keep_body,
                                          before_write=before_write)
        return answer
    finally:
        if reusable:
            idle.put(key, connection)
        else:
            connection.close()


class IdleConnections:
    """Connections kept open between exchanges, per (scheme, host, port)."""

    def __init__(self, *, max_idle_per_host: int, max_idle_seconds: float = DEFAULT_MAX_IDLE_SECONDS) -> None:
        self.max_idle_per_host = max_idle_per_host
        self.max_idle_seconds = max_idle_seconds
        self._idle: dict[PoolKey, list[Connection]] = {}    # oldest first
        self._next_sweep = 0.0
        self._closed = False

    def __len__(self) -> int:
        return sum(len(idle) for idle in self._idle.values())

    def take(self, key: PoolKey) -> Connection | None:
        """The most recently used idle connection to `key` that is still open, if any."""
        idle = self._idle.get(key)
        while idle:
            connection = idle.pop()          # the most recently used: the least likely to be closed by now
            if trio.current_time() - connection.idle_since >= self.max_idle_seconds:
                connection.close()           # and every older one with it
                for older in idle:
                    older.close()
                break
            if connection.socket_stream.socket.is_readable():
                connection.close()           # readable while idle means EOF: the server closed it; never written to
                _said_closed(key)
                continue
            connection.reused = True
            return connection
        self._idle.pop(key, None)
        return None

    def put(self, key: PoolKey, connection: Connection) -> None:
        if self._closed:
            connection.close()
            return
        now = trio.current_time()
        idle = self._idle.setdefault(key, [])
        if len(idle) >= self.max_idle_per_host:
            connection.close()
        else:
            connection.idle_since = now
            idle.append(connection)
        if now >= self._next_sweep:
            self._close_expired(now)

    def close(self) -> None:
        """Close every idle connection; those lent out close as they come back."""
        self._closed = True
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()

    def _close_expired(self, now: float) -> None:
        """Closes connections idle too long at any host, so hosts no longer posted to keep no sockets."""
        for key, idle in list(self._idle.items()):
            expired = 0
            while expired < len(idle) and now - idle[expired].idle_since >= self.max_idle_seconds:
                idle[expired].close()
                expired += 1
            del idle[:expired]
            if not idle:
                del self._idle[key]
        self._next_sweep = now + self.max_idle_seconds


def _declared_length(response: h11.Response) -> int:
    for name, value in response.headers:
        if name == b"content-length":
            return int(value)            # h11 has validated it
    return 0


async def _open_tcp(addresses: list[tuple[int, tuple]]) -> trio.SocketStream:
    errors: list[OSError] = []
    for family, sockaddr in addresses:
        sock = trio.socket.socket(family, trio.socket.SOCK_STREAM)
        connected = False
        try:
            await sock.connect(sockaddr)
            connected = True
        except OSError as err:
            errors.append(err)
        finally:
            if not connected:
                sock.close()
        if connected:
            return trio.SocketStream(sock)
    raise errors[0]
