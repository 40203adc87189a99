"""One chat's messages (the thread) and the receipts of what was sent in it."""

from __future__ import annotations

from datetime import datetime
from typing import Mapping

import msgspec

from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.paging import cursors, parameters
from inbox_actors.paging.windows import optional_window
from inbox_actors.reporting.chat_lookup import find_chat
from persistence.database import Database, Record
from persistence.queries.reporting import message_reads as queries

DEFAULT_LIMIT = 100
ORDERS = ("asc", "desc")


class ReceiptEntry(msgspec.Struct, frozen=True):
    status: str
    at: datetime


class Message(msgspec.Struct, frozen=True, omit_defaults=True):
    """The spec's Message; `receipts` only with expand=receipts, on outbound messages.

    A customer's media has a `media_url` on this service (`media_path`), which fetches the file from the platform
    for a caller allowed to read the chat; sent media keeps the link it was sent with. Ours beside the spec's
    fields, on media only: `mime_type` and a document's `filename`."""

    id: int
    message_id: str | None
    sent_at: datetime
    sender_type: str
    actor: MemberRef | None
    sender_label: str | None
    type: str
    text: str | None
    template_name: str | None
    media_url: str | None
    status: str
    source: str
    receipts: list[ReceiptEntry] | msgspec.UnsetType = msgspec.UNSET
    mime_type: str | None = None
    filename: str | None = None


class MessagePage(msgspec.Struct, frozen=True):
    phone: str
    data: list[Message]
    next_cursor: str | None


class ReceiptRecord(msgspec.Struct, frozen=True):
    message_id: str | None
    sent_at: datetime
    sender_type: str
    current_status: str
    receipts: list[ReceiptEntry]


class ReceiptList(msgspec.Struct, frozen=True):
    phone: str
    data: list[ReceiptRecord]


Args = Mapping[str, str | None]


def _actor(row: Record) -> MemberRef | None:
    return MemberRef(row["actor_id"], row["actor_name"]) if row["actor_id"] else None


def _receipts(row: Record) -> list[ReceiptEntry]:
    return [ReceiptEntry(status, at) for status, at in zip(row["receipt_statuses"], row["receipt_times"])]


def media_path(phone: str, message_id: int) -> str:
    """Where this service serves a customer's media (GET, with a key that may read the chat)."""
    return f"/api/reporting/v1/conversations/{phone}/messages/{message_id}/media"


def _message(phone: str, row: Record, with_receipts: bool) -> Message:
    receipts = _receipts(row) if with_receipts and row["direction"] == "outbound" else msgspec.UNSET
    media_url = row["media_url"] or (media_path(phone, row["id"]) if row["media_id"] else None)
    return Message(
        id=row["id"], message_id=row["platform_message_id"], sent_at=row["sent_at"],
        sender_type=row["sender_type"], actor=_actor(row), sender_label=row["sender_label"], type=row["type"],
        text=row["text"], template_name=row["template_name"], media_url=media_url, status=row["status"],
        source=row["source"], receipts=receipts, mime_type=row["mime_type"], filename=row["filename"],
    )


async def messages(db: Database, workspace_id: int, raw_phone: str, args: Args,
                   restricted_to: int | None) -> MessagePage:
    order = parameters.choice(args.get("order"), "order", ORDERS, default="asc")
    expand = parameters.choice(args.get("expand"), "expand", ("receipts",))
    limit = parameters.limit(args.get("limit"), DEFAULT_LIMIT)
    start, end = optional_window(args)
    kind = f"messages:{order}"
    after = cursors.decode(args, kind, datetime, int)
    phone, chat = await find_chat(db, workspace_id, raw_phone, restricted_to)
    rows = await queries.thread(db, chat["id"], start=start, end=end, descending=order == "desc", after=after,
                                limit=limit + 1, with_receipts=expand == "receipts")
    page, more = rows[:limit], len(rows) > limit
    next_cursor = cursors.encode(kind, args, page[-1]["sent_at"], page[-1]["id"]) if more else None
    return MessagePage(phone, [_message(phone, row, expand == "receipts") for row in page], next_cursor)


async def one_message(db: Database, workspace_id: int, phone: str, message_id: int) -> Message | None:
    """One message of the chat as the thread shows it (no receipts)."""
    normalised, chat = await find_chat(db, workspace_id, phone, None)
    row = await queries.thread_message(db, chat["id"], message_id)
    return None if row is None else _message(normalised, row, False)


class MessageMedia(msgspec.Struct, frozen=True):
    media_id: str
    mime_type: str | None
    filename: str | None


async def media_of(db: Database, workspace_id: int, raw_phone: str, message_id: int,
                   restricted_to: int | None) -> MessageMedia | None:
    """The platform's media of a customer's message in this chat (None: no such message, or no media)."""
    _, chat = await find_chat(db, workspace_id, raw_phone, restricted_to)
    row = await queries.message_media(db, chat["id"], message_id)
    if row is None or row["media_id"] is None:
        return None
    return MessageMedia(row["media_id"], row["mime_type"], row["filename"])


async def receipts(db: Database, workspace_id: int, raw_phone: str, args: Args,
                   restricted_to: int | None) -> ReceiptList:
    limit = parameters.limit(args.get("limit"), DEFAULT_LIMIT)
    start, end = optional_window(args)
    phone, chat = await find_chat(db, workspace_id, raw_phone, restricted_to)
    rows = await queries.receipts(db, chat["id"], start=start, end=end, limit=limit)
    return ReceiptList(phone, [ReceiptRecord(row["platform_message_id"], row["sent_at"], row["sender_type"],
                                             row["status"], _receipts(row)) for row in rows])


async def failure_reasons(db: Database, conversation_id: int, page: list[Message]) -> dict[int, str]:
    """Why each failed message of `page` failed, as the platform said when it refused it ("131047: Re-engagement
    message"), by the message's id; a failed message with no error recorded has none."""
    failed = [message.id for message in page if message.status == "failed"]
    if not failed:
        return {}
    reasons = {}
    for row in await queries.failures(db, conversation_id, failed):
        parts = [str(row["error_code"])] if row["error_code"] is not None else []
        if row["error_text"]:
            parts.append(row["error_text"])
        if parts:
            reasons[row["id"]] = ": ".join(parts)
    return reasons
