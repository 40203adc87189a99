"""The outbound webhook HTTP/1.1 client: one POST per attempt, its every outcome a value (`AttemptResult`).

On the service's own HTTP/1.1 connections (outbound_http/connections.py) rather than httpx, because a webhook
destination is the customer's: the address must be judged when each connection is opened and the connection
made to exactly the address judged (httpx resolves on its own), redirects are never followed (a 3xx is an
answer, which the caller counts as a failure), and the cost per POST must stay low (thousands per second to
one receiver on two cores).

- The whole attempt (resolving, connecting, TLS, sending, the response head and up to MAX_RESPONSE_BODY
  bytes of its body, read and discarded) is bounded by `timeout`.
- Connections are kept alive, per (scheme, host, port), at most `max_idle_per_host` idle ones, each for at
  most `max_idle_seconds`. A reused connection that fails before any byte of the response arrived is one the
  server closed while idle: the POST is sent once more on a new connection. That may deliver it twice if the
  server did read it; webhooks are at-least-once and receivers de-duplicate. A failure on a new connection is
  never retried here: retries are the caller's, with its backoff.
- Errors are short sentences naming the cause, never a header value (the headers carry signatures).
Only bugs (an invalid header from the caller: ValueError), cancellation and what the caller's `before_write` raises
(the effect fence's EffectAbandoned: nothing was written) propagate.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Self

import h11
import trio

from inbox_actors.monitoring.metrics import ServiceMetrics
from inbox_actors.outbound_http.connections import (
    DEFAULT_MAX_IDLE_SECONDS,
    EXCHANGE_FAILURES,
    ClosedWithoutAnswer,
    Connection,
    IdleConnections,
    TlsContext,
    open_connection,
    pooled_exchange,
)
from inbox_actors.webhooks.address_guard import AddressGuard, DestinationRefused, EndpointUrl, UnresolvedHost

USER_AGENT = b"inbox-actors-webhooks/1.0"
MAX_RESPONSE_BODY = 64 * 1024         # read and discarded; a longer body closes the connection instead
MAX_ERROR_DETAIL = 200
# Set by the transport itself; a caller's copy would make a second, conflicting header.
_OWN_HEADERS = frozenset({b"host", b"content-type", b"content-length", b"transfer-encoding", b"connection",
                          b"user-agent"})


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


class WebhookTransport:
    """POSTs to webhook endpoints over pooled keep-alive connections to addresses `guard` permits.

    Use as `async with WebhookTransport(guard) as transport:` (or call `aclose()`) so pooled connections close.
    `metrics`: where each attempt's outcome and time are counted.
    """

    def __init__(self, guard: AddressGuard, *, max_idle_per_host: int = 32, ssl_context: ssl.SSLContext | None = None,
                 max_idle_seconds: float = DEFAULT_MAX_IDLE_SECONDS, metrics: ServiceMetrics | None = None) -> None:
        self.guard = guard
        self.metrics = metrics
        self._tls = TlsContext(ssl_context)      # None: the default context, made at the first https connection
        self._idle = IdleConnections(max_idle_per_host=max_idle_per_host, max_idle_seconds=max_idle_seconds)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Closes every idle connection; posts still running close theirs when they end."""
        self._idle.close()
        await trio.lowlevel.checkpoint()

    def idle_connections(self) -> int:
        return len(self._idle)

    async def post(self, endpoint: EndpointUrl, headers: Sequence[tuple[bytes, bytes]], body: bytes, *,
                   timeout: float, before_write: Callable[[], None] | None = None) -> AttemptResult:
        """POST `body` as JSON to `endpoint` with the caller's `headers` after the transport's own (Host,
        Content-Type, Content-Length, User-Agent: ValueError if the caller repeats one). `before_write` is called
        right before the request is written (outbound_http/connections.py)."""
        request = _request(endpoint, headers, len(body))
        started = trio.current_time()
        with trio.move_on_after(timeout):
            try:
                status_code = await self._exchange(endpoint, request, body, before_write)
            except trio.Cancelled:
                raise
            except DestinationRefused as err:
                return self._counted("refused", _result(started, error=f"destination refused: {err}", refused=True))
            except (*EXCHANGE_FAILURES, ClosedWithoutAnswer) as err:
                return self._counted("unreachable", _result(started, error=_describe(err)))
            return self._counted(_answered(status_code), _result(started, status_code=status_code))
        return self._counted("timeout", _result(started, error=f"timeout after {timeout:g}s"))

    def _counted(self, outcome: str, result: AttemptResult) -> AttemptResult:
        if self.metrics is not None:
            self.metrics.webhook_attempted(outcome, result.duration_ms / 1000)
        return result

    async def _exchange(self, endpoint: EndpointUrl, request: h11.Request, body: bytes,
                        before_write: Callable[[], None] | None) -> int:
        answer = await pooled_exchange(self._idle, (endpoint.scheme, endpoint.host, endpoint.port),
                                       partial(self._connect, endpoint), request, body, max_body=MAX_RESPONSE_BODY,
                                       keep_body=False, before_write=before_write)
        return answer.status_code

    async def _connect(self, endpoint: EndpointUrl) -> Connection:
        addresses = await self.guard.addresses_to_connect(endpoint)
        return await open_connection(addresses, tls=self._tls.for_scheme(endpoint.scheme),
                                     server_hostname=endpoint.host)


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


def _describe(err: BaseException) -> str:
    """A short sentence for the cause of a failed attempt."""
    if isinstance(err, ClosedWithoutAnswer):
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
