"""Relaying one HTTP request to the node that owns its workspace, and its answer back as it streams.

- The request leaves as it came (method, raw path, query, headers, body) minus the hop-by-hop headers, since h11
  frames each connection itself, plus the forwarding node's proof (forwarding_proof.py), a proof of its own for each
  try; a client's own copies of its headers are dropped first.
- A body that declares a length of at most MAX_REPLAYABLE_BODY is read whole before sending, so it can be sent
  again, and its proof carries its digest; any other is streamed to the target as it arrives (chunked unless the
  client declared its length, then that length and the seal's), hashed as it passes and followed by its seal: a
  proof covers every body, and none is read whole for it.
- The answer streams back chunk by chunk: Server-Sent Events stay open for minutes. A client that leaves closes
  the connection to the target at once; an answer the target breaks off is broken off to the client (the relay
  returns without ending the body, and the front server closes the client's connection). An event stream ends
  cleanly when this node begins to drain (event_stream_cut.py), as the streams it serves itself do.
- Connections are kept alive per target (outbound_http/connections.py's pool) and go back only after a clean
  exchange. A reused one that fails before any byte of the answer was most likely closed by the target while idle,
  but a target that read the request and died looks the same. So only a request that changes nothing (GET, HEAD,
  OPTIONS) goes once more on a new connection; any other is answered 504 `node_timeout` (below), since sent again
  it could be carried out twice. A streamed body cannot go again: 502.
- A target that cannot be reached (refused, or gone before the request was all written) is answered 503
  `node_unavailable` with `Retry-After: 1`: it never had the request, so the caller may serve it elsewhere instead.
- A target that had the whole request and gave no first byte within `first_byte_timeout`, or broke off before any,
  is answered 504 `node_timeout`: it may have carried the request out, so it is never served a second time; the
  client decides (an Idempotency-Key makes its retry safe).
"""

from __future__ import annotations

import enum
import json
import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import h11
import trio

from inbox_actors.outbound_http.connections import (
    EXCHANGE_FAILURES,
    RECEIVE_SIZE,
    Connection,
    IdleConnections,
    PoolKey,
    TlsContext,
)
from inbox_http.cluster.asgi import Receive, Scope, Send, target_of
from inbox_http.cluster.event_stream_cut import StreamCut, is_event_stream
from inbox_http.cluster.forwarding_proof import FORWARDING, SEAL_BYTES, BodySeal, body_digest, sign
from inbox_http.cluster.hop_headers import declared_length, is_hop_by_hop, nominated_hop_by_hop, response_headers
from inbox_http.cluster.node_address import NodeAddress

log = logging.getLogger("inbox_http.cluster.relay")

FIRST_BYTE_TIMEOUT = 10.0
WARN_EVERY_SECONDS = 5.0
# Bodies up to this declared length are read whole first, so a stale connection's request can be sent again; an
# API call's JSON is far below it, an upload above it.
MAX_REPLAYABLE_BODY = 64 * 1024

_NODE_ID = re.compile(r"[!-~]+")           # visible ASCII: it travels as a header value and in the proof
# Methods that change nothing (RFC 9110's safe methods): the only ones sent again after a connection failed before
# any answer.
_SAFE_METHODS = frozenset({b"GET", b"HEAD", b"OPTIONS"})


class _Outcome(enum.Enum):
    DONE = enum.auto()            # answered (or broken off once begun), or the client left
    STALE = enum.auto()           # a reused connection failed before any byte of the answer
    UNREACHABLE = enum.auto()     # a new connection failed before the request was all written
    NO_ANSWER = enum.auto()       # the request was written, and no byte of an answer came in time
    INVALID = enum.auto()         # the target's bytes were no answer


@dataclass(frozen=True, slots=True)
class _Opening:
    body: bytes
    complete: bool                # the whole body, so the request can be sent again


@dataclass(frozen=True, slots=True)
class _Outgoing:
    request: h11.Request
    seal: BodySeal | None         # a streamed body's: sent after it


class NodeRelay:
    """Forwards requests to other nodes over kept-alive HTTP/1.1 connections (h11 over trio).

    `aclose()` closes the idle connections; those in use close when their exchange ends. `drain_began`, set when
    this node begins to drain, ends the event streams it relays.
    """

    def __init__(self, *, node_id: str, secret: bytes, max_idle_per_host: int = 32,
                 first_byte_timeout: float = FIRST_BYTE_TIMEOUT, drain_began: trio.Event | None = None) -> None:
        if not _NODE_ID.fullmatch(node_id):
            raise ValueError(f"a node id is visible ASCII without spaces, not {node_id!r}")
        if not secret:
            raise ValueError("the cluster's secret must not be empty: anyone could make the proof")
        self.node_id = node_id
        self._node_id = node_id.encode("ascii")
        self._secret = secret
        self._first_byte_timeout = first_byte_timeout
        self._drain_began = drain_began
        self._idle = IdleConnections(max_idle_per_host=max_idle_per_host)
        self._tls = TlsContext()
        self._targets: dict[str, NodeAddress] = {}
        self._warned: dict[PoolKey, tuple[float, int]] = {}   # per node: when last warned, failures since

    def _warn(self, target: NodeAddress, message: str, *args: object) -> None:
        """A node that is down fails every request sent its way until its lease expires: said once per
        WARN_EVERY_SECONDS per node, with how many more failed meanwhile."""
        now = trio.current_time()
        last, quiet = self._warned.get(target.key, (-math.inf, 0))
        if now - last < WARN_EVERY_SECONDS:
            self._warned[target.key] = (last, quiet + 1)
            return
        self._warned[target.key] = (now, 0)
        if quiet:
            message += f" ({quiet} more since the last warning)"
        log.warning(message, *args)

    async def aclose(self) -> None:
        self._idle.close()
        await trio.lowlevel.checkpoint()

    def idle_connections(self) -> int:
        return len(self._idle)

    async def forward(self, scope: Scope, receive: Receive, send: Send, target: str, *,
                      answer_unreachable: bool = True) -> bool:
        """Relay the ASGI HTTP request (scope/receive) to `target` (a base URL like http://127.0.0.1:9001) and
        send its answer through `send`, its body chunk by chunk as the target sends it. A target that cannot be
        reached is answered 503 `node_unavailable`; one that had the request and did not answer in time, 504
        `node_timeout`; one that answers no valid HTTP, or a stale connection whose streamed body cannot be sent
        again, 502 `node_failed`. Returns when the answer ended, broke off, or the client left: False when the
        target could not be reached, which never had the request, answered 503 unless `answer_unreachable` is false
        (nothing is then sent: the caller may serve it elsewhere). ValueError for a `target` that is not a base
        URL."""
        destination = self._targets.get(target)
        if destination is None:
            destination = self._targets[target] = NodeAddress.parse(target)
        declared = declared_length(scope["headers"])
        opening = await _read_opening(receive, declared)
        if opening is None:
            return True                                 # the client left before there was anything to send
        outgoing = partial(self._request, scope, destination, opening, declared)
        outcome = await self._relay(destination, outgoing, opening, receive, send)
        if outcome is _Outcome.NO_ANSWER:
            await _answer_error(send, 504, "node_timeout",
                                "The node that serves this workspace did not answer in time; the request may have "
                                "been carried out.")
            return True
        if outcome is _Outcome.UNREACHABLE:
            if not answer_unreachable:
                return False
            await _answer_error(send, 503, "node_unavailable",
                                "The node that serves this workspace cannot be reached. Please try again.",
                                [(b"retry-after", b"1")])
            return False
        if outcome is not _Outcome.DONE:
            await _answer_error(send, 502, "node_failed",
                                "The node that serves this workspace did not answer the request. Please try again.")
        return True

    async def _relay(self, target: NodeAddress, outgoing: Callable[[], _Outgoing], opening: _Opening,
                     receive: Receive, send: Send) -> _Outcome:
        # One deadline for connecting, sending and the first byte of the answer, resend included.
        deadline = trio.current_time() + self._first_byte_timeout
        connection = self._idle.take(target.key)
        if connection is not None:
            first = outgoing()
            request = first.request
            outcome = await self._exchange(target, connection, first, opening, receive, send, deadline)
            if outcome is not _Outcome.STALE:
                return outcome
            if not opening.complete:
                log.warning("a kept-alive connection to %s:%s failed under a streamed body, which cannot be sent "
                            "again", *target.key[1:])
                return _Outcome.INVALID
            if request.method not in _SAFE_METHODS:
                log.warning("a kept-alive connection to %s:%s failed before any answer to a %s, which may have "
                            "been carried out: not sent again", *target.key[1:], request.method.decode())
                return _Outcome.NO_ANSWER
        connection = None
        with trio.move_on_at(deadline):
            try:
                connection = await target.connect(self._tls)
            except EXCHANGE_FAILURES as err:
                self._warn(target, "node at %s:%s unreachable: %s", *target.key[1:], _describe(err))
                return _Outcome.UNREACHABLE
        if connection is None:
            self._warn(target, "node at %s:%s took no connection within %gs", *target.key[1:],
                       self._first_byte_timeout)
            return _Outcome.UNREACHABLE
        # A proof of its own: the target may have taken the first try's nonce.
        outcome = await self._exchange(target, connection, outgoing(), opening, receive, send, deadline)
        return _Outcome.UNREACHABLE if outcome is _Outcome.STALE else outcome

    async def _exchange(self, target: NodeAddress, connection: Connection, outgoing: _Outgoing, opening: _Opening,
                        receive: Receive, send: Send, deadline: float) -> _Outcome:
        def give_back() -> None:
            connection.protocol.start_next_cycle()
            self._idle.put(target.key, connection)

        exchange = _Exchange(connection, opening, outgoing.seal, receive, send, self._first_byte_timeout, give_back,
                             self._drain_began)
        try:
            outcome = await exchange.run(outgoing.request, deadline)
        finally:
            # Also on cancellation: a connection left mid-exchange would hand the next request a half answer.
            if not exchange.given_back:
                connection.close()
        if exchange.error is not None and outcome is not _Outcome.STALE:
            log.warning("exchange with node at %s:%s failed: %s", *target.key[1:], exchange.error)
        return outcome

    def _request(self, scope: Scope, target: NodeAddress, opening: _Opening, declared: int | None) -> _Outgoing:
        method = scope["method"].encode("ascii")
        raw_target = target_of(scope)
        nominated = nominated_hop_by_hop(scope["headers"])
        headers: list[tuple[bytes, bytes]] = []
        chunked = not opening.complete or bool(opening.body)
        for name, value in scope["headers"]:
            name = name.lower()
            if name == b"transfer-encoding":
                chunked = True
            # Framing is set below; pseudo-headers (HTTP/2) have no HTTP/1.1 form.
            if name in (b"content-length", b"transfer-encoding") or name in FORWARDING or name.startswith(b":") \
                    or is_hop_by_hop(name, nominated):
                continue
            headers.append((name, value))
        if not any(name == b"host" for name, _value in headers):
            headers.insert(0, (b"host", target.host_header))
        if declared is not None:
            # A streamed body is followed by its seal, which the target takes off again.
            length = declared if opening.complete else declared + SEAL_BYTES
            headers.append((b"content-length", str(length).encode()))
        elif chunked:
            headers.append((b"transfer-encoding", b"chunked"))
        client = scope.get("client")
        client_ip = client[0].encode("ascii", "replace") if client else b""
        signed = sign(self._secret, self._node_id, client_ip, method, raw_target,
                      body_digest(opening.body) if opening.complete else None)
        headers += signed.headers
        return _Outgoing(h11.Request(method=method, target=raw_target, headers=headers), signed.seal)


class _Exchange:
    """One request and its answer on one connection. The target side (this task) sends the request's head and
    opening, reads the answer and relays it; the client side (a task beside it) streams the rest of the body, then
    waits for the client to leave, which ends both."""

    def __init__(self, connection: Connection, opening: _Opening, seal: BodySeal | None, receive: Receive, send: Send,
                 first_byte_timeout: float, give_back: Callable[[], None], drain_began: trio.Event | None) -> None:
        self.connection = connection
        self.opening = opening
        self.seal = seal                  # a streamed body's, updated as it is sent
        self.receive = receive
        self.send = send
        self.first_byte_timeout = first_byte_timeout
        self.give_back = give_back
        self.drain_began = drain_began
        self.given_back = False           # to the pool, once both sides of the exchange finished cleanly
        self.error: str | None = None
        self.answered = False             # a byte of the answer arrived
        self.request_written = False      # every byte of the request is on the wire, not only in h11's state
        self.response_done = False
        self.client_gone = False
        self._first_byte = trio.CancelScope()
        self._both = trio.CancelScope()

    def reusable(self) -> bool:
        protocol = self.connection.protocol
        return (self.request_written and self.response_done and not self.client_gone
                and protocol.our_state is h11.DONE and protocol.their_state is h11.DONE)

    async def run(self, request: h11.Request, deadline: float) -> _Outcome:
        """`deadline`: for the first byte of the answer, when the body was read whole."""
        outcome = _Outcome.DONE
        async with trio.open_nursery() as nursery:
            self._both = nursery.cancel_scope
            outcome = await self._target_side(request, deadline, nursery)
            nursery.cancel_scope.cancel()
        return _Outcome.DONE if self.client_gone else outcome

    async def _target_side(self, request: h11.Request, deadline: float, nursery: trio.Nursery) -> _Outcome:
        protocol, stream = self.connection.protocol, self.connection.stream
        # A streamed body's time is the client's: the wait for the first byte starts once it is all sent.
        with trio.CancelScope(deadline=deadline if self.opening.complete else math.inf) as self._first_byte:
            try:
                data = protocol.send(request)
                if self.seal is not None:
                    self.seal.update(self.opening.body)
                if self.opening.body:
                    data += protocol.send(h11.Data(data=self.opening.body))
                if self.opening.complete:
                    data += protocol.send(h11.EndOfMessage())
                await stream.send_all(data)
                self.request_written = self.opening.complete
                nursery.start_soon(self._client_side)
                response = await self._response_head()
            except EXCHANGE_FAILURES as err:
                return self._failed(err)
        if self._first_byte.cancelled_caught:
            self.error = f"no answer within {self.first_byte_timeout:g}s"
            return _Outcome.NO_ANSWER if self.request_written else _Outcome.UNREACHABLE
        await self.send({"type": "http.response.start", "status": response.status_code,
                         "headers": response_headers(response.headers)})
        # Only an event stream ends at the drain: its client reconnects elsewhere, while any other answer has an
        # end its client needs, which the grace period leaves it time to reach (event_stream_cut.py).
        cut = StreamCut(self.drain_began if is_event_stream(response.headers) else None)
        cut.start(nursery)
        try:
            while type(event := await cut.next(self._next_event)) is h11.Data:
                await self.send({"type": "http.response.body", "body": event.data, "more_body": True})
            if event is None:
                return await self._end_at_drain()
            if type(event) is not h11.EndOfMessage:
                raise h11.RemoteProtocolError("the connection closed inside the answer")
        except EXCHANGE_FAILURES as err:
            self.error = f"the answer broke off: {_describe(err)}"
            return _Outcome.DONE
        self.response_done = True
        if self.reusable():
            # Before the client hears the end, so its next request finds the connection idle.
            self.give_back()
            self.given_back = True
        await self.send({"type": "http.response.body", "body": b"", "more_body": False})
        return _Outcome.DONE

    async def _end_at_drain(self) -> _Outcome:
        """The client hears the end of the answer; the connection to the target, mid-answer, is closed rather than
        given back, which ends the stream there too."""
        self.response_done = True     # for the client: its leaving, said inside the last send, must not cancel it
        await self.send({"type": "http.response.body", "body": b"", "more_body": False})
        return _Outcome.DONE

    async def _client_side(self) -> None:
        if not self.opening.complete:
            await self._stream_body()
            self._first_byte.deadline = trio.current_time() + self.first_byte_timeout
        # After the body, receive() only says the client left; the front server says so after a finished answer
        # too, from inside the relay's last send, which must not be cancelled.
        while not self.client_gone and (await self.receive())["type"] != "http.disconnect":
            pass
        if not self.response_done:
            self.client_gone = True
            self._both.cancel()

    async def _stream_body(self) -> None:
        protocol, stream = self.connection.protocol, self.connection.stream
        try:
            while True:
                message = await self.receive()
                if message["type"] == "http.disconnect":
                    self.client_gone = True
                    return
                body = message.get("body", b"")
                more = message.get("more_body", False)
                data = protocol.send(h11.Data(data=body)) if body else b""
                if self.seal is not None:
                    self.seal.update(body)
                if not more:
                    if self.seal is not None:
                        data += protocol.send(h11.Data(data=self.seal.seal()))
                    data += protocol.send(h11.EndOfMessage())
                if data:
                    await stream.send_all(data)
                if not more:
                    self.request_written = True
                    return
        except (*EXCHANGE_FAILURES, h11.LocalProtocolError):
            # The target stopped reading (an early answer, or it broke): the target side reads what it said.
            # What is left of the body is drained by the caller's wait for the client to leave.
            return

    async def _response_head(self) -> h11.Response:
        while True:
            event = await self._next_event()
            if type(event) is h11.Response:
                return event
            if type(event) is not h11.InformationalResponse:      # 1xx (100 Continue) is the relay's own
                raise h11.RemoteProtocolError("the connection closed before an answer")

    async def _next_event(self) -> Any:
        protocol = self.connection.protocol
        while (event := protocol.next_event()) is h11.NEED_DATA:
            data = await self.connection.stream.receive_some(RECEIVE_SIZE)
            self.answered = self.answered or bool(data)
            protocol.receive_data(data)
        return event

    def _failed(self, err: BaseException) -> _Outcome:
        self.error = _describe(err)
        if self.answered:
            return _Outcome.INVALID
        if self.connection.reused:
            return _Outcome.STALE
        return _Outcome.NO_ANSWER if self.request_written else _Outcome.UNREACHABLE


async def _read_opening(receive: Receive, declared: int | None) -> _Opening | None:
    """The body whole when it declared a length of at most MAX_REPLAYABLE_BODY (or turned out empty), else its
    first part; None when the client left first."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body = message.get("body", b"")
        chunks.append(body)
        size += len(body)
        if not message.get("more_body", False):
            return _Opening(b"".join(chunks), complete=True)
        if declared is None or declared > MAX_REPLAYABLE_BODY or size > MAX_REPLAYABLE_BODY:
            return _Opening(b"".join(chunks), complete=False)


async def _answer_error(send: Send, status: int, code: str, message: str,
                        headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"error": code, "message": message}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _describe(err: BaseException) -> str:
    if isinstance(err, trio.BrokenResourceError) and isinstance(err.__cause__, OSError):
        err = err.__cause__               # trio wraps socket and TLS errors
    if isinstance(err, OSError):
        return f"{type(err).__name__}: {err.strerror or err}"
    return f"{type(err).__name__}: {err}"
