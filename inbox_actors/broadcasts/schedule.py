"""The broadcast schedule: one actor per service that starts broadcasts when their time comes, and resumes the
ones that were sending when the service stopped.

Like the SLA clock it keeps nothing in memory that PostgreSQL does not have: each round it tells every broadcast
that is sending, or scheduled for a time now past, that it is `Due` (a broadcast already sending ignores it),
then sleeps until the earliest scheduled time, a `Scheduled` told by whoever schedules one sooner, or
`recheck_seconds` (which also revives a broadcast whose actor had failed).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

import msgspec
import trio

from inbox_actors.broadcasts import broadcast
from inbox_actors.runtime import Actor, ActorError, ActorKind, Directory, MailboxFull
from inbox_actors.runtime.clock import Clock
from persistence.database import Database, DatabaseUnavailable
from persistence.queries import broadcasts as queries

log = logging.getLogger("inbox_actors.broadcasts.schedule")

KIND = "broadcast_schedule"
KEY = "service"
DUE_BATCH = 1_000
RETRY_SECONDS = 5.0


class Start(msgspec.Struct, frozen=True):
    """Begin (the service tells it once at start)."""


class Scheduled(msgspec.Struct, frozen=True):
    """A broadcast was scheduled, or approved, for `at` (now or later)."""

    at: datetime


@dataclass(frozen=True)
class ScheduleDeps:
    db: Database
    clock: Clock
    recheck_seconds: float = 60.0


class BroadcastSchedule(Actor):
    def __init__(self, key: str, deps: ScheduleDeps) -> None:
        super().__init__(key)
        self.deps = deps
        self._next: datetime | None = None
        self._wake = trio.Event()

    async def on_start(self) -> None:
        self.tasks.start_soon(self._keep_time, name="broadcast schedule")

    async def receive(self, message: object) -> object:
        if isinstance(message, Scheduled):
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
            except DatabaseUnavailable as err:
                log.warning("broadcast schedule cannot read broadcasts (%s); retrying", err)
                await trio.sleep(RETRY_SECONDS)

    async def _rounds(self) -> None:
        while True:
            self._wake = trio.Event()
            now = self.deps.clock.now()
            for row in await queries.due_broadcasts(self.deps.db, now, DUE_BATCH):
                try:
                    await self.actors.ref(broadcast.KIND, str(row["id"])).ask(broadcast.Due())
                except ActorError as err:
                    log.warning("broadcast %s not started yet: %s", row["id"], err)
            self._next = await queries.next_scheduled(self.deps.db, now)
            wait = self.deps.recheck_seconds
            if self._next is not None:
                wait = min(wait, max(0.0, (self._next - self.deps.clock.now()).total_seconds()))
            with trio.move_on_after(wait):
                await self._wake.wait()


def broadcast_schedule_kind(deps: ScheduleDeps) -> ActorKind:
    # Its task keeps it in memory; a restart re-reads every broadcast from PostgreSQL.
    return ActorKind(name=KIND, factory=lambda key: BroadcastSchedule(key, deps), mailbox_capacity=256)


async def start_broadcast_schedule(actors: Directory) -> None:
    await actors.ref(KIND, KEY).tell(Start())


def scheduled(actors: Directory, at: datetime) -> None:
    """A broadcast is due at `at`; a full mailbox means the schedule is about to look anyway."""
    try:
        actors.ref(KIND, KEY).tell_nowait(Scheduled(at))
    except (MailboxFull, ActorError):
        pass
