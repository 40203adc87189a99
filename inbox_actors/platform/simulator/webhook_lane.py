"""How the simulator posts a webhook to the service: signed as Meta signs it, through a lane of its own."""

from __future__ import annotations

import logging
from typing import Self

import httpx
import trio

from inbox_actors.outbound_http.verified_tls import verified_context
from inbox_actors.platform.webhook_envelope import SIGNATURE_HEADER, sign

log = logging.getLogger("inbox_actors.platform.simulator.webhook_lane")


class WebhookLane:
    """One kind of webhook post: its own connection pool and at most `concurrency` posts in flight.

    The limiter and the pool are the same size, so a post that holds a slot always finds a connection: the
    waiting happens in the limiter (FIFO, untimed), and the client's timeout measures only the service.
    """

    def __init__(self, concurrency: int, timeout: float) -> None:
        self.slots = trio.CapacityLimiter(concurrency)
        self.http = httpx.AsyncClient(timeout=timeout, verify=verified_context(), limits=httpx.Limits(
            max_connections=concurrency, max_keepalive_connections=concurrency))

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.http.aclose()

    async def post(self, url: str, body: bytes, app_secret: str) -> int:
        """One signed POST; the HTTP status, or 0 when the service could not be reached."""
        headers = {"Content-Type": "application/json", SIGNATURE_HEADER: sign(app_secret, body),
                   "User-Agent": "facebookexternalua"}
        async with self.slots:
            try:
                response = await self.http.post(url, content=body, headers=headers)
            except trio.Cancelled:
                raise
            except httpx.HTTPError as err:
                log.info("webhook to %s failed: %s", url, err)
                return 0
        return response.status_code
