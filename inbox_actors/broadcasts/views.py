"""What the broadcast calls answer: one broadcast with its progress, the list, and the recipients with their
outcomes. Reads only (PostgreSQL is the read model); changes go through the broadcast actor.

The counts are one funnel over the recipients: `queued` (to send, a retry included), `in_flight` (committed, the
platform's answer not known yet), `sent` (the platform accepted it and it has not failed since; `delivered`
and `read` are the part of `sent` that got that far), `failed` (refused by the platform, failed after being
sent, or given up), `skipped` (opted out, or erased), `cancelled` (never sent: the broadcast was cancelled or
rejected). recipients = queued + in_flight + sent + failed + skipped + cancelled + erased (sent, then the
contact was erased with its messages). The rate is messages accepted per second over the last minute of sending.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import msgspec

from inbox_actors.paging import cursors, parameters
from inbox_actors.paging.parameters import InvalidParameter
from persistence.database import Database, Record
from persistence.queries import broadcasts as queries

RATE_WINDOW = timedelta(seconds=60)
STATUSES = ("pending_approval", "scheduled", "sending", "paused", "completed", "cancelled", "rejected")
OUTCOMES = ("queued", "in_flight", "sent", "delivered", "read", "failed", "skipped", "cancelled")
LIST_CURSOR, RECIPIENT_CURSOR = "broadcasts", "broadcast_recipients"
DEFAULT_LIMIT, DEFAULT_RECIPIENT_LIMIT = 50, 100


class TemplateUsed(msgspec.Struct, frozen=True):
    name: str
    language: str
    category: str
    parameters: list[str]            # the broadcast's; a recipient may have their own


class Audience(msgspec.Struct, frozen=True):
    phones: int                      # phones listed in the request
    filter: dict[str, Any] | None    # the contact filter, as given
    duplicates: int                  # numbers listed or matched more than once (sent once)


class Approval(msgspec.Struct, frozen=True):
    required: bool                   # created by someone without campaign_approve
    decided_by: int | None           # who approved or rejected it
    decided_at: datetime | None
    rejection_reason: str | None


class Counts(msgspec.Struct, frozen=True):
    recipients: int
    queued: int
    in_flight: int
    sent: int
    delivered: int
    read: int
    failed: int
    skipped: int
    cancelled: int
    erased: int


class Rate(msgspec.Struct, frozen=True):
    sends_per_second: float
    window_seconds: int


class BroadcastView(msgspec.Struct, frozen=True):
    id: int
    name: str
    status: str                      # one of STATUSES
    paused_reason: str | None        # paused_by_member, insufficient_credits
    template: TemplateUsed
    audience: Audience
    scheduled_at: datetime | None
    created_by: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    cancelled_by: int | None
    approval: Approval
    counts: Counts
    rate: Rate


class BroadcastSummary(msgspec.Struct, frozen=True):
    id: int
    name: str
    status: str
    template: str
    language: str
    recipients: int
    scheduled_at: datetime | None
    created_by: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class BroadcastPage(msgspec.Struct, frozen=True):
    data: list[BroadcastSummary]
    next_cursor: str | None


class RecipientView(msgspec.Struct, frozen=True):
    position: int
    phone: str | None                # None once the contact was erased
    outcome: str                     # one of OUTCOMES, or erased
    parameters: list[str] | None     # their own, when they had some
    attempts: int
    next_attempt_at: datetime | None
    skip_reason: str | None
    message_id: str | None           # the platform's id of the message they were sent
    error_code: int | None
    error_text: str | None
    updated_at: datetime | None      # when the message's status last changed


class RecipientPage(msgspec.Struct, frozen=True):
    data: list[RecipientView]
    next_cursor: str | None


async def find_broadcast(db: Database, workspace_id: int, broadcast_id: int) -> Record | None:
    return await queries.find_broadcast(db, workspace_id, broadcast_id)


async def broadcast_view(db: Database, row: Record, now: datetime) -> BroadcastView:
    since = max(now - RATE_WINDOW, row["started_at"] or now)
    counts = await queries.progress(db, row["id"], since)
    sending_for = (min(now, row["finished_at"] or now) - since).total_seconds()
    rate = counts["sent_since"] / sending_for if sending_for >= 1 else 0.0
    audience = _audience(row)
    if row["finished_at"] is not None and row["finished_at"] < now - RATE_WINDOW:
        rate = 0.0
    return BroadcastView(
        id=row["id"], name=row["name"], status=row["status"], paused_reason=row["paused_reason"],
        template=TemplateUsed(row["template_name"], row["template_language"], row["template_category"],
                              list(row["parameters"])),
        audience=Audience(phones=audience["phones"], filter=audience["filter"], duplicates=row["duplicate_count"]),
        scheduled_at=row["scheduled_at"], created_by=row["created_by"], created_at=row["created_at"],
        started_at=row["started_at"], finished_at=row["finished_at"], cancelled_by=row["cancelled_by"],
        approval=Approval(required=row["approval_required"], decided_by=row["decided_by"],
                          decided_at=row["decided_at"], rejection_reason=row["rejection_reason"]),
        counts=Counts(**{name: counts[name] for name in Counts.__struct_fields__}),
        rate=Rate(round(rate, 2), int(RATE_WINDOW.total_seconds())))


async def list_broadcasts(db: Database, workspace_id: int, args: Any) -> BroadcastPage:
    limit = parameters.limit(args.get("limit"), DEFAULT_LIMIT)
    status = parameters.choice(args.get("status"), "status", STATUSES)
    position = cursors.decode(args, LIST_CURSOR, datetime, int)
    rows = await queries.list_broadcasts(db, workspace_id, status=status, after=position, limit=limit + 1)
    page, more = rows[:limit], len(rows) > limit
    next_cursor = cursors.encode(LIST_CURSOR, args, page[-1]["created_at"], page[-1]["id"]) if more else None
    return BroadcastPage([BroadcastSummary(
        id=row["id"], name=row["name"], status=row["status"], template=row["template_name"],
        language=row["template_language"], recipients=row["recipient_count"], scheduled_at=row["scheduled_at"],
        created_by=row["created_by"], created_at=row["created_at"], started_at=row["started_at"],
        finished_at=row["finished_at"]) for row in page], next_cursor)


async def list_recipients(db: Database, broadcast_id: int, args: Any) -> RecipientPage:
    limit = parameters.limit(args.get("limit"), DEFAULT_RECIPIENT_LIMIT)
    outcome = parameters.choice(args.get("outcome"), "outcome", OUTCOMES)
    position = cursors.decode(args, RECIPIENT_CURSOR, int, int)
    if position is not None and position[0] != broadcast_id:
        raise InvalidParameter("invalid_cursor", "cursor is not a cursor this list gave out; start again without it.")
    rows = await queries.recipients_page(db, broadcast_id, outcome=outcome,
                                         after_position=position[1] if position else 0, limit=limit + 1)
    page, more = rows[:limit], len(rows) > limit
    next_cursor = cursors.encode(RECIPIENT_CURSOR, args, broadcast_id, page[-1]["position"]) if more else None
    return RecipientPage([_recipient(row) for row in page], next_cursor)


def _recipient(row: Record) -> RecipientView:
    return RecipientView(
        position=row["position"], phone=row["phone"], outcome=_outcome(row),
        parameters=list(row["parameters"]) if row["parameters"] is not None else None, attempts=row["attempts"],
        next_attempt_at=row["next_attempt_at"], skip_reason=row["skip_reason"],
        message_id=row["platform_message_id"], error_code=row["error_code"], error_text=row["error_text"],
        updated_at=row["status_at"])


def _outcome(row: Record) -> str:
    state, status = row["state"], row["message_status"]
    if state != queries.CLAIMED:
        return state
    if status is None:
        return "erased"
    if status == "pending":
        return "in_flight"
    return status if status in ("sent", "delivered", "read", "failed") else "sent"


def _audience(row: Record) -> dict[str, Any]:
    audience = row["audience"]
    return msgspec.json.decode(audience) if isinstance(audience, (str, bytes)) else audience
