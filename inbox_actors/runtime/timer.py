"""Timers: a job repeated on trio's clock (so MockClock drives it in tests), surviving its own failures."""

from __future__ import annotations

import logging
from typing import Awaitable, Callable

import trio

logger = logging.getLogger("inbox_actors.runtime")


async def repeat_every(seconds: float, job: Callable[[], Awaitable[object]], *, name: str) -> None:
    """Run `job` now and then every `seconds` until cancelled. A failing round is logged; the next one retries."""
    while True:
        try:
            await job()
        except trio.Cancelled:
            raise
        except Exception:
            logger.exception("timer %s failed; retrying in %gs", name, seconds)
        await trio.sleep(seconds)
