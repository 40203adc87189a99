"""The broadcast schedule: one actor per service that starts broadcasts when their time comes, and resumes the
ones that were sending when the service stopped, or when their workspace's node stopped or died.

Like the SLA clock it is a runtime `Alarm`, keeping nothing in memory that PostgreSQL does not have: each round it
tells every broadcast that is sending, or scheduled for a time now past, that it is `Due` (a broadcast already
sending ignores it), then sleeps until the earliest scheduled time, one told by whoever schedules one sooner
(`scheduled`), or `recheck_seconds` (which also revives a broadcast whose actor had failed).

A node that takes a workspace's lease (another node died, stopped or handed it over; leases.py's `on_taken`) tells
the schedule at once (`workspace_taken`), which resumes that workspace's broadcasts then, not at its next recheck.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

import msgspec

from inbox_actors.broadcasts import broadcast
from inbox_actors.runtime import ActorError, ActorKind, Directory, MailboxFull, ServedElsewhere
from inbox_actors.runtime.alarm import Alarm, DueAt, Round, Start
from persistence.database import Database, DatabaseUnavailable, Record
from persistence.queries import broadcasts as queries

log = logging.getLogger("inbox_actors.broadcasts.schedule")

KIND = "broadcast_schedule"
KEY = "service"
DUE_BATCH = 1_000
RETRY_SECONDS = 5.0


class WorkspaceTaken(msgspec.Struct, frozen=True):
    """This node has just taken the workspace's lease: its broadcasts that should be sending go on here."""

    workspace_id: int


@dataclass(frozen=True)
class ScheduleDeps:
    db: Database
    recheck_seconds: float = 60.0


class BroadcastSchedule(Alarm):
    retry_on = (DatabaseUnavailable,)
    retry_seconds = RETRY_SECONDS

    def __init__(self, key: str, deps: ScheduleDeps) -> None:
        super().__init__(key, deps.recheck_seconds)
        self.deps = deps

    async def receive(self, message: object) -> object:
        if isinstance(message, WorkspaceTaken):
            try:
                await self._tell_due(await queries.due_in_workspace(self.deps.db, message.workspace_id, DUE_BATCH))
            except DatabaseUnavailable as err:
                # Left to the next round (at most `recheck_seconds` away).
                log.warning("broadcasts of workspace %d not resumed at its takeover: %s", message.workspace_id, err)
            return None
        return await super().receive(message)

    async def round(self) -> Round:
        """Tell what is due by PostgreSQL's clock (a node-wide sweep: never by this node's)."""
        await self._tell_due(await queries.due_broadcasts(self.deps.db, DUE_BATCH))
        next_due, now = await queries.next_scheduled(self.deps.db)
        return Round(next_due, now)

    async def _tell_due(self, rows: list[Record]) -> None:
        for row in rows:
            try:
                await self.actors.ref(broadcast.KIND, broadcast.broadcast_key(row["workspace_id"], row["id"])).ask(
                    broadcast.Due())
            except ServedElsewhere:
                pass          # the node holding the workspace sends it
            except ActorError as err:
                log.warning("broadcast %s not started yet: %s", row["id"], err)


def broadcast_schedule_kind(deps: ScheduleDeps) -> ActorKind:
    # Its task keeps it in memory; a restart re-reads every broadcast from PostgreSQL.
    return ActorKind(name=KIND, factory=lambda key: BroadcastSchedule(key, deps), mailbox_capacity=256)


async def start_broadcast_schedule(actors: Directory) -> None:
    await actors.ref(KIND, KEY).tell(Start())


def scheduled(actors: Directory, at: datetime) -> None:
    """A broadcast is due at `at`; a full mailbox means the schedule is about to look anyway."""
    try:
        actors.ref(KIND, KEY).tell_nowait(DueAt(at))
    except (MailboxFull, ActorError):
        pass


def workspace_taken(actors: Directory, workspace_id: int) -> None:
    """This node has just taken the workspace (leases.py's `on_taken`, which must not block): its broadcasts go on.
    A full mailbox or a failing schedule leaves them to its next round."""
    try:
        actors.ref(KIND, KEY).tell_nowait(WorkspaceTaken(workspace_id))
    except (MailboxFull, ActorError):
        log.warning("broadcasts of workspace %d left to the schedule's next round", workspace_id)


async def launch(actors: Directory, row: Record) -> Record | broadcast.Refused:
    """Set a broadcast just created going: one sending now is told it is due (its answer, the row as it now
    is, returned); a scheduled one is handed to the schedule. Other statuses (pending approval) wait."""
    if row["status"] == broadcast.SENDING:
        ref = actors.ref(broadcast.KIND, broadcast.broadcast_key(row["workspace_id"], row["id"]))
        return await ref.ask(broadcast.Due())  # type: ignore[return-value]
    if row["status"] == broadcast.SCHEDULED:
        scheduled(actors, row["scheduled_at"])
    return row
