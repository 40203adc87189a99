"""Pacing sends under the platform's per-number throughput limit (Meta: 80 messages a second by default).

Rather than send and be refused with 130429, each send reserves the earliest moment at which the number's
last second holds fewer than `limit` sends, and waits until then. Reservations are kept sorted, so any one
second, wherever it starts, holds at most `limit` of them; memory follows the last second's sends.

Within that, sends are spread rather than let out a second's worth at a time: at most `burst` go at once (the
replies' share below), and no more than `burst` in any `burst × window / limit` (a saturated number sends a
burst each such interval), in the order they asked. A second's worth let out at once reached the wire over
whatever time the busy process took to write them, and met the next second's on time: timed at the write in
scripts/load_chats.py at 80/s, one second held 87 sends; spread, none held more than 80.

Bulk sends (broadcasts) have a lane of their own that never gets ahead of one-to-one sends: a bulk send is let
through only now, never reserved in the future, and only while the window holds fewer than `bulk_limit` sends
(the limit less a fifth). So a broadcast cannot take the slots replies are about to need: replies always find
a fifth of the limit free at once, and the more they use, the less is left for the broadcast.
"""

from __future__ import annotations

from bisect import insort

# A little over a second: sends leave on schedule but reach the platform with some jitter, and two that left
# exactly a second apart may arrive closer than that.
WINDOW_SECONDS = 1.1
# The share of a number's throughput a broadcast may never take from one-to-one sends.
REPLY_SHARE = 0.2


class SendSchedule:
    def __init__(self, limit: int, window: float = WINDOW_SECONDS, burst: int | None = None) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.limit, self.window = limit, window
        # Sends that may leave at once: the replies' share (what the bulk lane always leaves them), at least 3.
        self.burst = burst if burst is not None else min(limit, max(3, round(limit * REPLY_SHARE)))
        self._spacing = window / limit
        self.bulk_limit = max(1, limit - max(1, round(limit * REPLY_SHARE))) if limit > 1 else 1
        self._reserved: list[float] = []

    def reserve(self, now: float, max_wait: float) -> float | None:
        """Seconds to wait before sending (0: now), the slot then being taken; None when the earliest slot is
        more than `max_wait` away (nothing reserved: the number is saturated)."""
        reserved = self._forget_before(now)
        at = now if len(reserved) < self.limit else max(now, reserved[-self.limit] + self.window)
        if len(reserved) >= self.burst:
            at = max(at, reserved[-self.burst] + self.burst * self._spacing)
        if reserved:
            at = max(at, reserved[-1])   # slots in the order asked: a later send never slips in before an earlier
        if at - now > max_wait:
            return None
        insort(reserved, at)
        return at - now

    def reserve_bulk(self, now: float) -> float:
        """0 when a bulk send may go now (its slot taken); otherwise the seconds until it may ask again (nothing
        reserved: a bulk send never holds a slot ahead of time)."""
        reserved = self._forget_before(now)
        if len(reserved) < self.bulk_limit:
            insort(reserved, now)
            return 0.0
        # The window must lose this many before another bulk send fits.
        return max(reserved[len(reserved) - self.bulk_limit] + self.window - now, 0.001)

    def _forget_before(self, now: float) -> list[float]:
        reserved = self._reserved
        expired = 0
        while expired < len(reserved) and reserved[expired] <= now - self.window:
            expired += 1
        if expired:
            del reserved[:expired]
        return reserved

    def __len__(self) -> int:
        return len(self._reserved)
