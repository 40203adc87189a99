"""The WhatsApp Cloud API client: one send call, whose every expected outcome is a value.

`send` answers `SendAccepted` or `SendRefused`, never raises for what the network or the platform can do:
- Meta's error body (HTTP 4xx/5xx with `{"error": {...}}`) becomes a `SendRefused` carrying Meta's code,
  title, subcode and details, and the HTTP status.
- When no answer Meta would give arrives, the refusal is `UNREACHABLE_CODE` (131000, Meta's own "Something
  went wrong"), with `title` naming what happened (`Platform unreachable`, `Platform timeout`, `Unexpected
  platform answer`) and the cause in `details`. `http_status` is 0 when nothing was answered (connection
  refused, timeout, broken connection) and the HTTP status when something other than Meta's JSON was.
Only bugs (and cancellation) propagate.

At most `max_concurrent` sends are at the platform at once (a `trio.CapacityLimiter` the size of httpx's
connection pool, so httpx itself never keeps a waiting list). A send first waits for a slot, in FIFO order and
untimed: a busy client is not the platform's fault, and every slot comes back within about `timeout`, so the
wait is bounded by the queue ahead of it. `timeout` starts once the send holds its slot and covers connecting,
writing and reading (each phase); only that is `Platform timeout`. A caller that needs a bound on the whole
call, waiting included, cancels (`trio.move_on_after`); `statistics()` tells how many sends wait.
"""

from __future__ import annotations

import logging
from typing import Protocol, Self

import httpx
import trio

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
        self._slots = trio.CapacityLimiter(max_concurrent)
        self._http = httpx.AsyncClient(
            timeout=timeout,
            limits=httpx.Limits(max_connections=max_concurrent, max_keepalive_connections=max_concurrent),
            headers={"Authorization": f"Bearer {access_token}", "Content-Type": "application/json"},
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    def statistics(self) -> trio.CapacityLimiterStatistics:
        """Sends at the platform now (`borrowed_tokens`) and sends waiting for a slot (`tasks_waiting`)."""
        return self._slots.statistics()

    async def send(self, phone_number_id: str, request: SendRequest) -> SendAccepted | SendRefused:
        """The platform's verdict on one send. A `type` outside MESSAGE_TYPES is the caller's bug:
        InvalidSendRequest."""
        url = f"{self.base_url}/{phone_number_id}/messages"
        body = encode_send_request(request)
        async with self._slots:
            try:
                response = await self._http.post(url, content=body)
            except trio.Cancelled:
                raise
            except httpx.TimeoutException as err:
                return _unreachable(TITLE_TIMEOUT, f"no answer from {url} in time ({type(err).__name__})")
            except httpx.HTTPError as err:
                return _unreachable(TITLE_UNREACHABLE, f"{url}: {type(err).__name__}: {err}")
        try:
            return decode_answer(response.status_code, response.content)
        except UnexpectedAnswer as err:
            log.warning("unexpected answer from %s: HTTP %s", url, response.status_code)
            return _unreachable(TITLE_UNEXPECTED, str(err), http_status=response.status_code)


def _unreachable(title: str, details: str, *, http_status: int = 0) -> SendRefused:
    return SendRefused(message=UNREACHABLE_MESSAGE, code=UNREACHABLE_CODE, title=title, details=details,
                       http_status=http_status)
