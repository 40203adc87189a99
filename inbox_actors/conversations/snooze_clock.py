"""The snooze clock: one actor per service that ends each timed snooze when its time comes.

Snoozes live in PostgreSQL (`conversations.snoozed`, `snoozed_until`); the clock keeps none in memory. It sleeps
until the earliest snooze end, then tells each chat whose time came (`SnoozeDue`); the chat, its single writer,
ends the snooze if it is still snoozed until that very time (the customer may have written, or a member ended or
moved it). A restarted clock finds what came due while it was down. Chats tell it of new snooze ends, so it never
oversleeps one. The sleeping and waking are the runtime's `Alarm`, as for the SLA clock.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from inbox_actors.conversations.conversation import SnoozeDue, ask_conversation
from inbox_actors.conversations.conversation_protocol import SNOOZE_CLOCK, SNOOZE_CLOCK_KEY
from inbox_actors.runtime import ActorError, ActorKind, Directory, ServedElsewhere
from inbox_actors.runtime.alarm import Alarm, Round, Start
from persistence.database import Database, DatabaseUnavailable
from persistence.queries import snooze as snooze_queries

log = logging.getLogger("inbox_actors.conversations.snooze_clock")

DUE_BATCH = 200
RETRY_SECONDS = 5.0


@dataclass(frozen=True)
class SnoozeClockDeps:
    db: Database
    recheck_seconds: float = 60.0


class SnoozeClock(Alarm):
    retry_on = (DatabaseUnavailable,)
    retry_seconds = RETRY_SECONDS

    def __init__(self, key: str, deps: SnoozeClockDeps) -> None:
        super().__init__(key, deps.recheck_seconds)
        self.deps = deps

    async def round(self) -> Round:
        """End the snoozes whose time came by PostgreSQL's clock (a node-wide sweep: never by this node's)."""
        due = await snooze_queries.due_snoozes(self.deps.db, limit=DUE_BATCH)
        ended = 0
        for row in due:
            ended += await self._end_snooze(row["workspace_id"], row["phone"], row["snoozed_until"])
        if len(due) == DUE_BATCH and ended:
            return Round(None, more_now=True)
        next_due, now = await snooze_queries.next_snooze_end(self.deps.db)
        return Round(next_due, now)

    async def _end_snooze(self, workspace_id: int, phone: str, until: datetime) -> bool:
        try:
            await ask_conversation(self.actors, workspace_id, phone, SnoozeDue(until))
        except ServedElsewhere:
            return False      # the node holding the workspace ends it
        except ActorError as err:
            log.warning("snooze of %s:%s not ended yet: %s", workspace_id, phone, err)
            return False
        return True


def snooze_clock_kind(deps: SnoozeClockDeps) -> ActorKind:
    return ActorKind(name=SNOOZE_CLOCK, factory=lambda key: SnoozeClock(key, deps), mailbox_capacity=256)


async def start_snooze_clock(actors: Directory) -> None:
    await actors.ref(SNOOZE_CLOCK, SNOOZE_CLOCK_KEY).tell(Start())
