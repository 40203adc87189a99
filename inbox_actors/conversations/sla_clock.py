"""The SLA clock: one actor per service that tells each chat when its SLA deadline has passed.

Deadlines live in PostgreSQL (`conversations.sla_deadline_at`, set when a customer starts waiting for a person;
`sla_breach_announced_for`, the deadline already announced). The clock keeps none of them in memory: it
sleeps until the earliest unannounced deadline, then asks each chat whose deadline passed to announce the
breach (`SlaDue`); the chat, its single writer, emits `sla_breached` and marks the deadline announced in one
transaction, so each breach is announced exactly once, also across restarts (a restarted clock finds what
passed while it was down). Chats tell it of new deadlines (`deadline_set`), so it never oversleeps one; a
`recheck_seconds` sleep bounds what a deadline set by another process can wait. The sleeping and waking are the
runtime's `Alarm`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from inbox_actors.conversations.conversation import SlaDue, ask_conversation
from inbox_actors.runtime import ActorError, ActorKind, ActorSystem, MailboxFull, ServedElsewhere
from inbox_actors.runtime.alarm import Alarm, DueAt, Round, Start
from persistence.database import Database, DatabaseUnavailable
from persistence.queries import sla as sla_queries

log = logging.getLogger("inbox_actors.conversations.sla_clock")

KIND = "sla_clock"
KEY = "service"
DUE_BATCH = 200
RETRY_SECONDS = 5.0


@dataclass(frozen=True)
class SlaClockDeps:
    db: Database
    recheck_seconds: float = 60.0


class SlaClock(Alarm):
    retry_on = (DatabaseUnavailable,)   # the deadlines are safe in PostgreSQL; look again once it answers
    retry_seconds = RETRY_SECONDS

    def __init__(self, key: str, deps: SlaClockDeps) -> None:
        super().__init__(key, deps.recheck_seconds)
        self.deps = deps

    async def round(self) -> Round:
        """Announce what is due by PostgreSQL's clock (a node-wide sweep: never by this node's); the next deadline
        (more at once when a full batch was announced: chats that refused wait for the next round)."""
        due = await sla_queries.due_breaches(self.deps.db, limit=DUE_BATCH)
        announced = 0
        for row in due:
            announced += await self._announce(row["workspace_id"], row["phone"], row["sla_deadline_at"])
        if len(due) == DUE_BATCH and announced:
            return Round(None, more_now=True)
        next_due, now = await sla_queries.next_deadline(self.deps.db)
        return Round(next_due, now)

    async def _announce(self, workspace_id: int, phone: str, deadline: datetime) -> bool:
        try:
            await ask_conversation(self.actors, workspace_id, phone, SlaDue(deadline))
        except ServedElsewhere:
            return False      # the node holding the workspace announces it
        except ActorError as err:
            # The chat is failing; its deadline stays unannounced and a later round tries again.
            log.warning("SLA breach of %s:%s not announced yet: %s", workspace_id, phone, err)
            return False
        return True


def sla_clock_kind(deps: SlaClockDeps) -> ActorKind:
    # Its task keeps it from passivating; its restarts re-read every deadline from PostgreSQL.
    return ActorKind(name=KIND, factory=lambda key: SlaClock(key, deps), mailbox_capacity=256)


async def start_sla_clock(actors: ActorSystem) -> None:
    await actors.ref(KIND, KEY).tell(Start())


def deadline_set(actors: ActorSystem, at: datetime) -> None:
    """A chat committed a new deadline; a full mailbox means the clock is about to look anyway."""
    try:
        actors.ref(KIND, KEY).tell_nowait(DueAt(at))
    except (MailboxFull, ActorError):
        pass
