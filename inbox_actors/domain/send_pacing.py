"""Pacing sends under the platform's per-number throughput limit (Meta: 80 messages a second by default).

Rather than send and be refused with 130429, each send reserves the earliest moment at which the number's
last second holds fewer than `limit` sends, and waits until then. Reservations are kept in order, so any one
second, wherever it starts, holds at most `limit` of them; memory follows the last second's sends.
"""

from __future__ import annotations

from collections import deque

# A little over a second: sends leave on schedule but reach the platform with some jitter, and two that left
# exactly a second apart may arrive closer than that.
WINDOW_SECONDS = 1.1


class SendSchedule:
    def __init__(self, limit: int, window: float = WINDOW_SECONDS) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.limit, self.window = limit, window
        self._reserved: deque[float] = deque()

    def reserve(self, now: float, max_wait: float) -> float | None:
        """Seconds to wait before sending (0: now), the slot then being taken; None when the earliest slot is
        more than `max_wait` away (nothing reserved: the number is saturated)."""
        reserved = self._reserved
        while reserved and reserved[0] <= now - self.window:
            reserved.popleft()
        at = now if len(reserved) < self.limit else max(now, reserved[-self.limit] + self.window)
        if at - now > max_wait:
            return None
        reserved.append(at)
        return at - now

    def __len__(self) -> int:
        return len(self._reserved)
