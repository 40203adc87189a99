"""The hand-off queue: chats the bot handed to the team (HANDOFF_PENDING) that nobody has taken yet, longest waiting
first, with how long each has waited for a person and how much of its SLA is left. Taking one is the inbox's claim.

A chat waits from when its customer began waiting for a person (`waiting_for_person_since`), or from the hand-off
itself when the customer was not waiting then. Pages are keyset-walked on that instant and the chat's id, which do
not move while the chat is queued, so a walk neither skips nor repeats a chat that stays queued.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import msgspec

from inbox_actors.paging import cursors, parameters
from inbox_actors.reporting.conversation_detail import Conversation, conversation_fields
from persistence.database import Database, Record
from persistence.queries.reporting import conversations as queries

DEFAULT_LIMIT = 50
Args = Mapping[str, str | None]
CURSOR_KIND = "handoff-queue"


class QueuedChat(Conversation, frozen=True):
    """The spec's Conversation, with the queue's clocks."""

    handover_at: datetime | None
    waiting_for_person_since: datetime | None
    queued_since: datetime                  # what the queue is ordered by: the wait for a person, else the hand-off
    queued_seconds: int
    # Seconds until the SLA deadline (negative once it has passed); None without a deadline.
    sla_seconds_left: int | None


class HandoffQueue(msgspec.Struct, frozen=True):
    data: list[QueuedChat]
    total: int                              # chats in the queue now (for this caller)
    longest_wait_seconds: int | None
    next_cursor: str | None


async def handoff_queue(db: Database, workspace_id: int, args: Args, now: datetime,
                        restricted_to: int | None) -> HandoffQueue:
    limit = parameters.limit(args.get("limit"), DEFAULT_LIMIT)
    position = cursors.decode(args, CURSOR_KIND, datetime, int)
    rows = await queries.handoff_queue(db, workspace_id, restricted_to, position, limit + 1)
    total, oldest = rows[0]["queue_total"], rows[0]["queue_oldest"]   # always one row at least
    chats = [row for row in rows if row["id"] is not None]
    page, more = chats[:limit], len(chats) > limit
    next_cursor = cursors.encode(CURSOR_KIND, args, page[-1]["sort_at"], page[-1]["id"]) if more else None
    return HandoffQueue([_queued(row, now) for row in page], total,
                        _seconds(now - oldest) if oldest is not None else None, next_cursor)


def _queued(row: Record, now: datetime) -> QueuedChat:
    deadline = row["sla_deadline_at"]
    return QueuedChat(
        **conversation_fields(row, now, row["unread_count"]),
        handover_at=row["handover_at"], waiting_for_person_since=row["waiting_for_person_since"],
        queued_since=row["sort_at"], queued_seconds=_seconds(now - row["sort_at"]),
        sla_seconds_left=int((deadline - now).total_seconds()) if deadline is not None else None,
    )


def _seconds(elapsed) -> int:
    return max(0, int(elapsed.total_seconds()))
