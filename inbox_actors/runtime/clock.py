"""The service's notion of "now" (key expiry, rotation grace, audit times, retention).

Production reads the wall clock. Tests use `TrioWallClock`, which moves with trio's clock, so a
`MockClock` can carry a key past its expiry or an audit row past its retention without real waiting.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Protocol

import trio


class Clock(Protocol):
    def now(self) -> datetime: ...


class WallClock:
    def now(self) -> datetime:
        return datetime.now(timezone.utc)


class TrioWallClock:
    """Wall-clock time that advances with `trio.current_time()` from the moment it was made (inside trio)."""

    def __init__(self, start: datetime | None = None) -> None:
        self._start = start or datetime.now(timezone.utc)
        self._trio_start = trio.current_time()

    def now(self) -> datetime:
        return self._start + timedelta(seconds=trio.current_time() - self._trio_start)
