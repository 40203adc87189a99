"""An exact sliding-window request limit: at most `limit` admissions in any `window` seconds.

The window keeps the times of the admissions still inside it, oldest first. A request is admitted while fewer
than `limit` are inside. Admitting and forgetting are O(1) (amortised), and memory follows the traffic
actually admitted in the last window, not the limit: an idle key or a one-off address holds a few bytes.
There is no burst allowance: no 60-second interval, wherever it starts, ever holds more than `limit`
admissions. (Fixed per-minute windows let through up to twice the limit across a window boundary.)
"""

from __future__ import annotations

import math
from collections import deque

import msgspec

WINDOW_SECONDS = 60.0


class Admission(msgspec.Struct, frozen=True):
    allowed: bool
    limit: int
    remaining: int
    # Seconds until the oldest counted request leaves the window (when `remaining` next grows); 0 when idle.
    reset_seconds: int
    # For a refusal: whole seconds to wait before a retry can succeed.
    retry_after_seconds: int


class SlidingWindow:
    def __init__(self, limit: int, window: float = WINDOW_SECONDS) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.limit = limit
        self.window = window
        self._admitted: deque[float] = deque()

    def resize(self, limit: int) -> None:
        """Change the limit (a key's limit was edited); admissions already counted stay counted."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.limit = limit

    def admit(self, now: float) -> Admission:
        self._forget_before(now - self.window)
        allowed = len(self._admitted) < self.limit
        if allowed:
            self._admitted.append(now)
        return self._state(now, allowed)

    def peek(self, now: float) -> Admission:
        """The window's state without admitting anything (for answers that use none of the allowance)."""
        self._forget_before(now - self.window)
        return self._state(now, allowed=len(self._admitted) < self.limit)

    def _forget_before(self, cutoff: float) -> None:
        admitted = self._admitted
        while admitted and admitted[0] <= cutoff:
            admitted.popleft()

    def _state(self, now: float, allowed: bool) -> Admission:
        counted = len(self._admitted)
        reset = math.ceil(self._admitted[0] + self.window - now) if counted else 0
        retry_after = 0
        if not allowed:
            # The admission that must leave before another fits: the (counted - limit + 1)-th oldest.
            freeing = self._admitted[counted - self.limit]
            retry_after = max(1, math.ceil(freeing + self.window - now))
        return Admission(allowed=allowed, limit=self.limit, remaining=max(0, self.limit - counted),
                         reset_seconds=max(0, reset), retry_after_seconds=retry_after)
