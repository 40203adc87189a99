"""Conversations as the API shows them (the spec's Conversation and ConversationDetail), read from PostgreSQL.

Reads do not go through the actor: the actor is the single writer and PostgreSQL the read model. Fields that
depend on the time of reading (waiting_seconds, sla_breached) are computed here, against the service clock.

A field the spec's table does not mark nullable is never null: `handover_reason` is "" for a chat never handed
over; `last_message.message_id` is "" for a message the platform gave no id (a send it refused); a chat with no
message yet has a `last_message` with `message_id` "", `sender_type` "system", `sent_at` when the chat was made and
`preview` "".
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from inbox_actors.domain import satisfaction
from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.domain.phones import phone_or_none
from inbox_actors.domain.team_ref import TeamRef
from persistence.database import Database, Record
from persistence.queries import chat_visibility
from persistence.queries import conversations as conversation_queries

PREVIEW_CHARS = 120


class LastMessage(msgspec.Struct, frozen=True):
    message_id: str
    sender_type: str
    sent_at: datetime
    preview: str


class Counts(msgspec.Struct, frozen=True):
    messages: int
    from_customer: int
    from_bot: int


class ContactSummary(msgspec.Struct, frozen=True):
    name: str
    email: str | None
    company: str | None
    status: str
    tags: list[str]


class Conversation(msgspec.Struct, frozen=True):
    """The spec's Conversation (a list item, and the base of the detail)."""

    phone: str
    contact_name: str
    state: str
    handover_reason: str
    assigned_to: MemberRef | None
    claimed_by: MemberRef | None
    unread_count: int
    needs_reply: bool
    last_message: LastMessage
    waiting_since: datetime | None
    waiting_seconds: int
    sla_deadline_at: datetime | None
    sla_breached: bool
    labels: list[str]
    counts: Counts
    # Ours: a snoozed chat has left the team's open views until `snoozed_until` (null: until the customer writes).
    snoozed: bool
    snoozed_until: datetime | None


class ChatRating(msgspec.Struct, frozen=True):
    """The customer's answer to the chat's latest rated satisfaction survey (docs/team.md#satisfaction-surveys)."""

    rating: int
    """1 (very poor) to 5 (excellent)."""
    label: str
    comment: str | None
    rated_at: datetime


class ConversationDetail(Conversation, frozen=True):
    """The spec's ConversationDetail: the chat over its whole life, with its contact."""

    handover_at: datetime | None
    claimed_at: datetime | None
    resolved_at: datetime | None
    contact: ContactSummary
    # Ours, beside the spec's fields: when the customer began waiting for a person, and the chat's channel.
    waiting_for_person_since: datetime | None
    channel: str
    version: int
    # Ours: the team whose queue the chat is in (null: the workspace's own; docs/team.md#team-queues).
    team: TeamRef | None
    # Ours: how the customer rated the chat's latest resolve (null: no rating yet).
    satisfaction: ChatRating | None


def preview(row: Record) -> str:
    text = row["last_text"] or (f"[template {row['last_template_name']}]" if row["last_template_name"]
                                else f"[{row['last_type']}]")
    return shortened(text)


def shortened(text: str) -> str:
    """A message's text as a preview: at most PREVIEW_CHARS characters."""
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def conversation_fields(row: Record, now: datetime, unread_count: int) -> dict:
    """The Conversation's fields from a chat row (with its contact's name, assignees' names and last message);
    `unread_count` as counted for the read (a list counts inside its window)."""
    waiting = row["waiting_since"]
    deadline = row["sla_deadline_at"]
    return dict(
        phone=row["phone"], contact_name=row["contact_name"], state=row["state"],
        handover_reason=row["handover_reason"] or "",
        assigned_to=MemberRef(row["assigned_to"], row["assigned_to_name"]) if row["assigned_to"] else None,
        claimed_by=MemberRef(row["claimed_by"], row["claimed_by_name"]) if row["claimed_by"] else None,
        unread_count=unread_count, needs_reply=waiting is not None,
        last_message=LastMessage(row["last_platform_message_id"] or "", row["last_sender_type"], row["last_sent_at"],
                                 preview(row)) if row["last_message_id"] else LastMessage("", "system",
                                                                                          row["created_at"], ""),
        waiting_since=waiting, waiting_seconds=max(0, int((now - waiting).total_seconds())) if waiting else 0,
        sla_deadline_at=deadline,
        sla_breached=row["waiting_for_person_since"] is not None and deadline is not None and now > deadline,
        labels=list(row["labels"]),
        counts=Counts(row["count_messages"], row["count_from_customer"], row["count_from_bot"]),
        snoozed=row["snoozed"], snoozed_until=row["snoozed_until"],
    )


def detail_from_row(row: Record, now: datetime) -> ConversationDetail:
    return ConversationDetail(
        **conversation_fields(row, now, row["unread_count"]),
        handover_at=row["handover_at"], claimed_at=row["claimed_at"], resolved_at=row["resolved_at"],
        contact=ContactSummary(row["contact_name"], row["contact_email"], row["contact_company"],
                               row["contact_status"], list(row["contact_tags"])),
        waiting_for_person_since=row["waiting_for_person_since"], channel=row["channel"], version=row["version"],
        team=TeamRef(row["team_ref_id"], row["team_name"]) if row["team_ref_id"] is not None else None,
        satisfaction=ChatRating(row["csat_rating"], satisfaction.LABELS[row["csat_rating"]], row["csat_comment"],
                                row["csat_rated_at"]) if row["csat_rating"] is not None else None,
    )


async def find_detail(db: Database, workspace_id: int, phone: str, now: datetime,
                      restricted_to: int | None = None) -> ConversationDetail | None:
    """The chat, or None when there is none or it is not one the caller may see."""
    found = await find_detail_and_row(db, workspace_id, phone, now, restricted_to)
    return None if found is None else found[0]


async def find_detail_and_row(db: Database, workspace_id: int, phone: str, now: datetime,
                              restricted_to: int | None = None) -> tuple[ConversationDetail, Record] | None:
    """As `find_detail`, with the chat's row beside it (its id, when its customer last wrote)."""
    row = await conversation_queries.conversation_detail(db, workspace_id, phone)
    if row is None or not await chat_visibility.may_see(db, row, restricted_to):
        return None
    return detail_from_row(row, now), row


async def find_detail_by_raw_phone(db: Database, workspace_id: int, raw_phone: str, now: datetime,
                                   restricted_to: int | None = None) -> ConversationDetail | None:
    """As `find_detail`, for a phone as the caller spelt it (None when it is no phone number)."""
    phone = phone_or_none(raw_phone)
    return None if phone is None else await find_detail(db, workspace_id, phone, now, restricted_to)
