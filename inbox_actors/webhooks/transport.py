"""The outbound webhook HTTP/1.1 client: one POST per attempt, its every outcome a value (`AttemptResult`).

A small client on trio and h11 rather than httpx, because a webhook destination is the customer's: the address
must be judged when each connection is opened and the connection made to exactly the address judged (httpx
resolves on its own), redirects are never followed (a 3xx is an answer, which the caller counts as a
failure), and the cost per POST must stay low (thousands per second to one receiver on two cores).

- The whole attempt (resolving, connecting, TLS, sending, the response head and up to MAX_RESPONSE_BODY
  bytes of its body, read and discarded) is bounded by `timeout`.
- Connections are kept alive, per (scheme, host, port), at most `max_idle_per_host` idle ones, each for at
  most `max_idle_seconds`. A reused connection that fails before any byte of the response arrived is one the
  server closed while idle: the POST is sent once more on a new connection. That may deliver it twice if the
  server did read it; webhooks are at-least-once and receivers de-duplicate. A failure on a new connection is
  never retried here: retries are the caller's, with its backoff.
- Errors are short sentences naming the cause, never a header value (the headers carry signatures).
Only bugs (an invalid header from the caller: ValueError) and cancellation propagate.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Self

import h11
import trio

from inbox_actors.monitoring.metrics import ServiceMetrics
from inbox_actors.webhooks.address_guard import AddressGuard, DestinationRefused, EndpointUrl, UnresolvedHost

log = logging.getLogger("inbox_actors.webhooks.transport")

USER_AGENT = b"inbox-actors-webhooks/1.0"
MAX_RESPONSE_BODY = 64 * 1024         # read and discarded; a longer body closes the connection instead
RECEIVE_SIZE = 64 * 1024
# Below the 5 s keep-alive timeout of Node, Apache and Hypercorn, so a connection taken from the pool is
# seldom one the server is closing at that moment (the retry above covers the rest).
DEFAULT_MAX_IDLE_SECONDS = 4.0
MAX_ERROR_DETAIL = 200
# Set by the transport itself; a caller's copy would make a second, conflicting header.
_OWN_HEADERS = frozenset({b"host", b"content-type", b"content-length", b"transfer-encoding", b"connection",
                          b"user-agent"})

PoolKey = tuple[str, str, int]


@dataclass(frozen=True, slots=True)
class AttemptResult:
    """One POST's outcome: the response status, or an error sentence when there was no response."""

    status_code: int | None
    error: str | None
    duration_ms: int
    refused: bool = False     # the address guard refused the destination: nothing was sent

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300

    @property
    def retryable(self) -> bool:
        """A network error, a timeout or a 5xx. Not a 3xx or 4xx (the receiver said no), not a refusal."""
        if self.status_code is not None:
            return self.status_code >= 500
        return not self.refused


class _StaleConnection(Exception):
    """A reused connection failed before any response byte: the server had closed it while it was idle."""


class _ClosedWithoutAnswer(Exception):
    """The server closed the connection before the first byte of a response."""


class _Connection:
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


class WebhookTransport:
    """POSTs to webhook endpoints over pooled keep-alive connections to addresses `guard` permits.

    Use as `async with WebhookTransport(guard) as transport:` (or call `aclose()`) so pooled connections close.
    `metrics`: where each attempt's outcome and time are counted.
    """

    def __init__(self, guard: AddressGuard, *, max_idle_per_host: int = 32, ssl_context: ssl.SSLContext | None = None,
                 max_idle_seconds: float = DEFAULT_MAX_IDLE_SECONDS, metrics: ServiceMetrics | None = None) -> None:
        self.guard = guard
        self.metrics = metrics
        self.max_idle_per_host = max_idle_per_host
        self.max_idle_seconds = max_idle_seconds
        self._ssl_context = ssl_context      # None: the default context, made at the first https connection
        self._idle: dict[PoolKey, list[_Connection]] = {}    # oldest first
        self._next_sweep = 0.0
        self._closed = False

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Closes every idle connection; posts still running close theirs when they end."""
        self._closed = True
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()
        await trio.lowlevel.checkpoint()

    def idle_connections(self) -> int:
        return sum(len(idle) for idle in self._idle.values())

    async def post(self, endpoint: EndpointUrl, headers: Sequence[tuple[bytes, bytes]], body: bytes, *,
                   timeout: float) -> AttemptResult:
        """POST `body` as JSON to `endpoint` with the caller's `headers` after the transport's own (Host,
        Content-Type, Content-Length, User-Agent: ValueError if the caller repeats one)."""
        request = _request(endpoint, headers, len(body))
        started = trio.current_time()
        with trio.move_on_after(timeout):
            try:
                status_code = await self._exchange(endpoint, request, body)
            except trio.Cancelled:
                raise
            except DestinationRefused as err:
                return self._counted("refused", _result(started, error=f"destination refused: {err}", refused=True))
            except (OSError, trio.BrokenResourceError, h11.RemoteProtocolError, _ClosedWithoutAnswer) as err:
                return self._counted("unreachable", _result(started, error=_describe(err)))
            return self._counted(_answered(status_code), _result(started, status_code=status_code))
        return self._counted("timeout", _result(started, error=f"timeout after {timeout:g}s"))

    def _counted(self, outcome: str, result: AttemptResult) -> AttemptResult:
        if self.metrics is not None:
            self.metrics.webhook_attempted(outcome, result.duration_ms / 1000)
        return result

    async def _exchange(self, endpoint: EndpointUrl, request: h11.Request, body: bytes) -> int:
        key = (endpoint.scheme, endpoint.host, endpoint.port)
        connection = self._take_idle(key)
        if connection is not None:
            try:
                return await self._round_trip(key, connection, request, body)
            except _StaleConnection:
                log.debug("an idle connection to %s:%s was closed by the server; sending on a new one",
                          endpoint.host, endpoint.port)
        connection = await self._connect(endpoint)
        return await self._round_trip(key, connection, request, body)

    async def _round_trip(self, key: PoolKey, connection: _Connection, request: h11.Request, body: bytes) -> int:
        """The response status; the connection goes back to the pool if it may be reused, else is closed."""
        protocol = connection.protocol
        answered = False
        reusable = False
        try:
            try:
                await connection.stream.send_all(
                    protocol.send(request) + protocol.send(h11.Data(data=body)) + protocol.send(h11.EndOfMessage()))
                status_code = None
                body_bytes = 0
                while True:
                    event = protocol.next_event()
                    if event is h11.NEED_DATA:
                        data = await connection.stream.receive_some(RECEIVE_SIZE)
                        if not data and not answered:
                            raise _ClosedWithoutAnswer
                        answered = True
                        protocol.receive_data(data)
                    elif type(event) is h11.Response:
                        status_code = event.status_code
                        if _declared_length(event) > MAX_RESPONSE_BODY:
                            return status_code       # not worth reading: the connection is closed instead
                    elif type(event) is h11.Data:
                        body_bytes += len(event.data)
                        if body_bytes > MAX_RESPONSE_BODY:
                            return status_code
                    elif type(event) is h11.EndOfMessage:
                        break
                    # InformationalResponse (1xx) is skipped; ConnectionClosed cannot come before EndOfMessage.
            except trio.Cancelled:
                raise
            except (OSError, trio.BrokenResourceError, h11.RemoteProtocolError, _ClosedWithoutAnswer) as err:
                if connection.reused and not answered:
                    raise _StaleConnection from err
                raise
            if protocol.our_state is h11.DONE and protocol.their_state is h11.DONE:
                protocol.start_next_cycle()
                reusable = True              # not after `Connection: close` or an HTTP/1.0 answer
            return status_code
        finally:
            if reusable:
                self._put_idle(key, connection)
            else:
                connection.close()

    async def _connect(self, endpoint: EndpointUrl) -> _Connection:
        addresses = await self.guard.addresses_to_connect(endpoint)
        socket_stream = await _open_tcp(addresses)
        if endpoint.scheme != "https":
            return _Connection(socket_stream, socket_stream)
        if self._ssl_context is None:
            self._ssl_context = ssl.create_default_context()
        tls_stream = trio.SSLStream(socket_stream, self._ssl_context, server_hostname=endpoint.host,
                                    https_compatible=True)
        handshaken = False
        try:
            await tls_stream.do_handshake()
            handshaken = True
        finally:
            if not handshaken:
                socket_stream.socket.close()
        return _Connection(socket_stream, tls_stream)

    def _take_idle(self, key: PoolKey) -> _Connection | None:
        idle = self._idle.get(key)
        if not idle:
            return None
        connection = idle.pop()              # the most recently used: the least likely to be closed by now
        if trio.current_time() - connection.idle_since < self.max_idle_seconds:
            connection.reused = True
            return connection
        connection.close()                   # and every older one with it
        for older in idle:
            older.close()
        del self._idle[key]
        return None

    def _put_idle(self, key: PoolKey, connection: _Connection) -> None:
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


def _request(endpoint: EndpointUrl, headers: Sequence[tuple[bytes, bytes]], body_length: int) -> h11.Request:
    for name, _value in headers:
        if name.lower() in _OWN_HEADERS:
            raise ValueError(f"the webhook transport sets the {name.decode(errors='replace')} header itself")
    try:
        return h11.Request(method=b"POST", target=endpoint.target.encode(), headers=[
            (b"Host", endpoint.host_header.encode()),
            (b"Content-Type", b"application/json"),
            (b"Content-Length", str(body_length).encode()),
            (b"User-Agent", USER_AGENT),
            *headers,
        ])
    except h11.LocalProtocolError:
        # h11's message quotes the offending value, which may be a signature.
        raise ValueError("a webhook request header has an invalid name or value") from None


def _declared_length(response: h11.Response) -> int:
    for name, value in response.headers:
        if name == b"content-length":
            return int(value)            # h11 has validated it
    return 0


async def _open_tcp(addresses: list[tuple[int, tuple]]) -> trio.SocketStream:
    """A connection to the first of `addresses` that accepts one; the first address's error if none does."""
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


def _describe(err: BaseException) -> str:
    """A short sentence for the cause of a failed attempt."""
    if isinstance(err, _ClosedWithoutAnswer):
        return "the server closed the connection without answering"
    if isinstance(err, UnresolvedHost):
        return str(err)
    if isinstance(err, ConnectionRefusedError):
        return "connection refused"
    if isinstance(err, ConnectionResetError):
        return "connection reset by the server"
    if isinstance(err, ssl.SSLCertVerificationError):
        return f"TLS certificate not accepted: {err.verify_message}"
    if isinstance(err, ssl.SSLError):
        return f"TLS failed: {err.reason or type(err).__name__}"
    if isinstance(err, trio.BrokenResourceError):
        if isinstance(err.__cause__, OSError):        # trio wraps socket and TLS errors
            return _describe(err.__cause__)
        return "the connection broke"
    if isinstance(err, h11.RemoteProtocolError):
        return f"invalid HTTP response: {str(err)[:MAX_ERROR_DETAIL]}"
    if isinstance(err, OSError):
        return f"connection failed: {err.strerror or type(err).__name__}"
    return type(err).__name__


def _answered(status_code: int) -> str:
    """The outcome of an attempt the receiver answered: delivered (2xx), server_error (5xx) or rejected."""
    if 200 <= status_code < 300:
        return "delivered"
    return "server_error" if status_code >= 500 else "rejected"


def _result(started: float, *, status_code: int | None = None, error: str | None = None,
            refused: bool = False) -> AttemptResult:
    duration_ms = round((trio.current_time() - started) * 1000)
    return AttemptResult(status_code=status_code, error=error, duration_ms=duration_ms, refused=refused)
