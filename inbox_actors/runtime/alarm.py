"""An alarm actor: one that keeps nothing due in memory, but round after round does what is due by now and
sleeps until the next due time it found, a sooner one it is told (`DueAt`), or `recheck_seconds` at most.

The SLA clock and the broadcast schedule are alarms: their due times live in PostgreSQL, so a restart loses
nothing, and whoever commits a sooner due time tells the alarm so it never oversleeps it. A round failing with
one of `retry_on` (its store briefly away) is tried again after `retry_seconds` instead of crashing the actor.

An alarm keeps no clock of its own: a round judges what is due by its store's clock (PostgreSQL's `now()`, read in
its statements) and says what time that was (`Round.now`), and the alarm sleeps from that time to the next due
one. So a node whose own clock runs ahead or behind neither does anything early nor sleeps past a due time.
"""

from __future__ import annotations

import logging
from datetime import datetime

import msgspec
import trio

from .actor import Actor

log = logging.getLogger("inbox_actors.runtime.alarm")


class Start(msgspec.Struct, frozen=True):
    """Begin keeping time (told once when the service starts)."""


class DueAt(msgspec.Struct, frozen=True):
    """Something falls due at `at` (now or later)."""

    at: datetime


class Round(msgspec.Struct, frozen=True):
    """What a round found: the next due time (None: nothing known), the time by the store's clock it judged at
    (what the alarm sleeps from), and whether more may be due at once."""

    next_due: datetime | None
    now: datetime | None = None
    more_now: bool = False


class Alarm(Actor):
    retry_on: tuple[type[Exception], ...] = ()
    retry_seconds = 5.0

    def __init__(self, key: str, recheck_seconds: float) -> None:
        super().__init__(key)
        self.recheck_seconds = recheck_seconds
        self._next: datetime | None = None
        self._wake = trio.Event()

    async def round(self) -> Round:
        """Do what is due by the store's clock now."""
        raise NotImplementedError

    async def on_start(self) -> None:
        self.tasks.start_soon(self._keep_time, name=f"{type(self).__name__} {self.key}")

    async def receive(self, message: object) -> object:
        if isinstance(message, DueAt):
            if self._next is None or message.at < self._next:
                self._next = message.at
                self._wake.set()
            return None
        if isinstance(message, Start):
            return None
        return await super().receive(message)

    async def _keep_time(self) -> None:
        while True:
            try:
                await self._rounds()
            except self.retry_on as err:
                log.warning("%s %s: a round failed (%s); retrying in %gs", type(self).__name__, self.key, err,
                            self.retry_seconds)
                await trio.sleep(self.retry_seconds)

    async def _rounds(self) -> None:
        while True:
            self._wake = trio.Event()
            # Nothing is known to be due while the round reads its store: a due time told meanwhile, even a later
            # one than this round woke for, may have been committed after the round read, so it wakes one more.
            self._next = None
            found = await self.round()
            if found.more_now:
                continue
            self._next = found.next_due
            wait = self.recheck_seconds
            if self._next is not None and found.now is not None:
                # From the store's time the round judged at (its last statement's, a moment ago).
                wait = min(wait, max(0.0, (self._next - found.now).total_seconds()))
            with trio.move_on_after(wait):
                await self._wake.wait()
