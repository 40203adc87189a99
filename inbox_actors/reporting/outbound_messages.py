"""`GET /api/reporting/v1/messages`: outbound messages currently in a status, newest first.

The spec leaves the row shape open; ours is `OutboundMessage`. A failed row carries the platform's error code
and text as recorded at send time (or when the failure status arrived). `status=pending` lists the sends whose
outcome is not known yet (in doubt after a crash, until a status settles them or they are given up).
"""

from __future__ import annotations

from datetime import datetime
from typing import Mapping

import msgspec

from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.paging import cursors, parameters
from inbox_actors.paging.windows import REPLIES_AND_MESSAGES, Window, window
from persistence.database import Database
from persistence.queries.reporting import message_reads as queries

STATUSES = ("sent", "delivered", "read", "failed", "pending")
DEFAULT_LIMIT = 50
PREVIEW_CHARS = 120


class OutboundMessage(msgspec.Struct, frozen=True):
    id: int
    message_id: str | None
    phone: str
    sent_at: datetime
    status: str
    status_at: datetime
    sender_type: str
    actor: MemberRef | None
    sender_label: str | None
    type: str
    template_name: str | None
    preview: str | None
    error_code: int | None
    error_text: str | None


class OutboundPage(msgspec.Struct, frozen=True):
    status: str
    data: list[OutboundMessage]
    next_cursor: str | None
    window: Window


def _preview(text: str | None) -> str | None:
    if text is None or len(text) <= PREVIEW_CHARS:
        return text
    return text[: PREVIEW_CHARS - 1] + "…"


async def outbound_messages(db: Database, workspace_id: int, args: Mapping[str, str | None], now: datetime,
                            restricted_to: int | None) -> OutboundPage:
    status = args.get("status")
    if status is None:
        raise parameters.InvalidParameter("invalid_status", f"status is required: one of {', '.join(STATUSES)}.")
    parameters.choice(status, "status", STATUSES)
    limit = parameters.limit(args.get("limit"), DEFAULT_LIMIT)
    kind = f"messages:{status}"
    position = cursors.decode(args, kind, datetime, datetime, datetime, int)
    span = Window(position[0], position[1]) if position else window(args, now, REPLIES_AND_MESSAGES)
    after = (position[2], position[3]) if position else None
    rows = await queries.outbound_in_status(db, workspace_id, status=status, start=span.start, end=span.end,
                                            restricted_to=restricted_to, after=after, limit=limit + 1)
    page, more = rows[:limit], len(rows) > limit
    failed = status == "failed"
    data = [OutboundMessage(
        id=row["id"], message_id=row["platform_message_id"], phone=row["phone"], sent_at=row["sent_at"],
        status=row["status"], status_at=row["status_at"], sender_type=row["sender_type"],
        actor=MemberRef(row["actor_id"], row["actor_name"]) if row["actor_id"] else None,
        sender_label=row["sender_label"], type=row["type"], template_name=row["template_name"],
        preview=_preview(row["text"]), error_code=row["error_code"] if failed else None,
        error_text=row["error_text"] if failed else None,
    ) for row in page]
    next_cursor = (cursors.encode(kind, args, span.start, span.end, page[-1]["sent_at"], page[-1]["id"])
                   if more else None)
    return OutboundPage(status, data, next_cursor, span)
