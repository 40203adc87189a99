"""The WhatsApp Cloud API client: one send call, whose every expected outcome is a value.

`send` answers `SendAccepted` or `SendRefused`, never raises for what the network or the platform can do:
- Meta's error body (HTTP 4xx/5xx with `{"error": {...}}`) becomes a `SendRefused` carrying Meta's code,
  title, subcode and details, and the HTTP status.
- When no answer Meta would give arrives, the refusal is `UNREACHABLE_CODE` (131000, Meta's own "Something
  went wrong"), with `title` naming what happened (`Platform unreachable`, `Platform timeout`, `Unexpected
  platform answer`) and the cause in `details`. `http_status` is 0 when nothing was answered (connection
  refused, timeout, broken connection) and the HTTP status when something other than Meta's JSON was.
Only bugs, cancellation and `EffectAbandoned` propagate: right before the request is written, the client checks
that its node still holds the send's workspace (inbox_actors/cluster/effect_fence.py), and writes nothing otherwise.

At most `max_concurrent` sends are at the platform at once (a `trio.CapacityLimiter`, as many as the kept-alive
connections). A send first waits for a slot, in FIFO order and untimed: a busy client is not the platform's
fault, and every slot comes back within about `timeout`, so the wait is bounded by the queue ahead of it.
`timeout` starts once the send holds its slot and covers resolving, connecting, writing and reading the answer;
only that is `Platform timeout`. A caller that needs a bound on the whole call, waiting included, cancels
(`trio.move_on_after`); `statistics()` tells how many sends wait.

The request goes over the service's own HTTP/1.1 connections (outbound_http/connections.py), kept alive per
client, and `open_ahead` opens them all before the first send: sends the pacer lets out together then leave on
ready connections and reach the platform as they were paced. On new connections some would wait for their
handshake (or, at a busy server, for it to accept them) and arrive bunched with later ones, and the platform
counts its throughput by arrival.

A send is never sent twice by the client: a kept-alive connection the platform has closed is seen (readable at
EOF) and dropped before the request is written, and a request that fails once written is answered as
unreachable, never sent again (the send's record settles what the platform did: send_records.py).
"""

from __future__ import annotations

import logging
from typing import Protocol, Self
from urllib.parse import urlsplit

import h11
import trio

from inbox_actors.cluster.effect_fence import check_effect
from inbox_actors.outbound_http.connections import (
    EXCHANGE_FAILURES,
    ClosedWithoutAnswer,
    Connection,
    IdleConnections,
    TlsContext,
    open_connection,
    pooled_exchange,
)
from inbox_actors.platform.cloud_api import UnexpectedAnswer, decode_answer, encode_send_request
from inbox_actors.platform.payloads import SendAccepted, SendRefused, SendRequest

log = logging.getLogger("inbox_actors.platform.client")

# Meta's generic "Something went wrong": what a caller sees when the platform could not give its own reason.
UNREACHABLE_CODE = 131000
UNREACHABLE_MESSAGE = "Something went wrong"
TITLE_UNREACHABLE = "Platform unreachable"
TITLE_TIMEOUT = "Platform timeout"
TITLE_UNEXPECTED = "Unexpected platform answer"
DEFAULT_MAX_CONCURRENT = 32                  # sends at the platform at once, per client
# `open_ahead` tries a connection this often, for this long, while the platform does not take one yet (a platform
# started beside the service may listen a moment after it).
OPEN_AHEAD_RETRY_SECONDS = 0.1
OPEN_AHEAD_PATIENCE_SECONDS = 30.0
MAX_ANSWER_BYTES = 1024 * 1024               # Meta's answers are a few hundred bytes


class PlatformClient(Protocol):
    """What the conversation actor needs from the platform (tests hand it a fake)."""

    async def send(self, phone_number_id: str, request: SendRequest) -> SendAccepted | SendRefused: ...


class CloudApiClient:
    """Sends through `POST {base_url}/{phone_number_id}/messages`; one bounded connection pool for every send.

    Use as `async with CloudApiClient(...) as client:` (or call `aclose()`), so the pool is closed.
    `base_url` is the Graph API root including its version (`https://graph.facebook.com/v21.0`) or the
    simulator's URL.
    """

    def __init__(self, base_url: str, access_token: str, *, timeout: float = 10.0,
                 max_concurrent: int = DEFAULT_MAX_CONCURRENT) -> None:
        self.base_url = base_url.rstrip("/")
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the platform's URL must be http(s)://host[:port][/path], not {base_url!r}")
        self._scheme, self._host = parts.scheme, parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._path = parts.path
        self._host_header = parts.netloc.rpartition("@")[2].encode()
        self._authorization = f"Bearer {access_token}".encode()
        self._timeout = timeout
        self._slots = trio.CapacityLimiter(max_concurrent)
        self._idle = IdleConnections(max_idle_per_host=max_concurrent)
        self._tls = TlsContext()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self._idle.close()
        await trio.lowlevel.checkpoint()

    async def open_ahead(self, *, patience: float = OPEN_AHEAD_PATIENCE_SECONDS) -> int:
        """Open as many connections as sends may be at the platform at once (`max_concurrent`) before any send needs
        them, and keep them idle like any other (closed after the idle lifetime unused). While the platform refuses
        connections, one is tried every OPEN_AHEAD_RETRY_SECONDS for `patience` seconds; once it takes one, the
        others are opened at once. How many were opened."""
        count = self._idle.max_idle_per_host
        key = (self._scheme, self._host, self._port)
        opened: list[Connection] = []

        async def one() -> None:
            try:
                opened.append(await self._connect())
            except EXCHANGE_FAILURES:
                pass                    # a send will open it when it needs it

        try:
            with trio.move_on_after(patience):
                while not opened:
                    await one()
                    if not opened:
                        await trio.sleep(OPEN_AHEAD_RETRY_SECONDS)
                async with trio.open_nursery() as nursery:
                    for _ in range(count - 1):
                        nursery.start_soon(one)
        finally:
            for connection in opened:
                self._idle.put(key, connection)   # closed at once if the client is closed meanwhile
        if len(opened) < count:
            log.info("%d of %d connections to %s opened ahead of sends", len(opened), count, self.base_url)
        return len(opened)

    def statistics(self) -> trio.CapacityLimiterStatistics:
        """Sends at the platform now (`borrowed_tokens`) and sends waiting for a slot (`tasks_waiting`)."""
        return self._slots.statistics()

    async def send(self, phone_number_id: str, request: SendRequest) -> SendAccepted | SendRefused:
        """The platform's verdict on one send. A `type` outside PLATFORM_TYPES is the caller's bug:
        InvalidSendRequest."""
        url = f"{self.base_url}/{phone_number_id}/messages"
        body = encode_send_request(request)
        head = h11.Request(method=b"POST", target=f"{self._path}/{phone_number_id}/messages".encode(), headers=[
            (b"Host", self._host_header), (b"Authorization", self._authorization),
            (b"Content-Type", b"application/json"), (b"Content-Length", str(len(body)).encode())])
        async with self._slots:
            with trio.move_on_after(self._timeout):
                try:
                    status_code, content = await self._post(head, body)
                except trio.Cancelled:
                    raise
                except (*EXCHANGE_FAILURES, ClosedWithoutAnswer) as err:
                    return _unreachable(TITLE_UNREACHABLE, f"{url}: {_describe(err)}")
                if content is None:
                    return _unreachable(TITLE_UNEXPECTED, f"an answer of more than {MAX_ANSWER_BYTES} bytes",
                                        http_status=status_code)
                try:
                    return decode_answer(status_code, content)
                except UnexpectedAnswer as err:
                    log.warning("unexpected answer from %s: HTTP %s", url, status_code)
                    return _unreachable(TITLE_UNEXPECTED, str(err), http_status=status_code)
            return _unreachable(TITLE_TIMEOUT, f"no answer from {url} within {self._timeout:g}s")

    async def _post(self, head: h11.Request, body: bytes) -> tuple[int, bytes | None]:
        # Never sent twice: a failure is the platform's answer to this send, not a cue to resend. Nothing is written
        # for a workspace the node no longer holds, checked at the last moment (its connection slot may have waited).
        answer = await pooled_exchange(self._idle, (self._scheme, self._host, self._port), self._connect, head, body,
                                       max_body=MAX_ANSWER_BYTES, keep_body=True, resend_stale=False,
                                       before_write=check_effect)
        return answer.status_code, answer.body

    async def _connect(self) -> Connection:
        addresses = [(family, sockaddr) for family, _type, _proto, _name, sockaddr in
                     await trio.socket.getaddrinfo(self._host, self._port, type=trio.socket.SOCK_STREAM)]
        return await open_connection(addresses, tls=self._tls.for_scheme(self._scheme), server_hostname=self._host)


def _describe(err: BaseException) -> str:
    if isinstance(err, ClosedWithoutAnswer):
        return "the platform closed the connection without answering"
    if isinstance(err, trio.BrokenResourceError) and isinstance(err.__cause__, OSError):
        err = err.__cause__                 # trio wraps socket and TLS errors
    if isinstance(err, OSError):
        return f"{type(err).__name__}: {err.strerror or err}"
    return f"{type(err).__name__}: {err}"


def _unreachable(title: str, details: str, *, http_status: int = 0) -> SendRefused:
    return SendRefused(message=UNREACHABLE_MESSAGE, code=UNREACHABLE_CODE, title=title, details=details,
                       http_status=http_status)
