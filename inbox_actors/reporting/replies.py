"""Replies and how long customers waited for them, on two clocks.

A bot or system reply is timed from when the customer began waiting; an agent reply from when the customer
began waiting for a person (the actor records that start on the reply when it is sent: `waited_from`). A
failed send is never a reply: it is listed with its status, but has no response time and is never a first
response; nor is a send still pending (its outcome not known yet, delivery_status.py). A bot reply is never
reported as a human's.
"""

from __future__ import annotations

from datetime import datetime
from typing import Mapping

import msgspec

from inbox_actors.domain import delivery_status
from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.paging import cursors, parameters
from inbox_actors.paging.windows import REPLIES_AND_MESSAGES, Window, optional_window, window
from inbox_actors.reporting.chat_lookup import find_chat
from persistence.database import Database, Record
from persistence.queries.reporting import message_reads as queries

SENDER_TYPES = ("agent", "bot", "system")
DEFAULT_LIMIT = 50


class ChatReply(msgspec.Struct, frozen=True):
    message_id: str | None
    sent_at: datetime
    sender_type: str
    actor: MemberRef | None
    sender_label: str | None
    answers_message_id: str | None
    status: str | None
    response_seconds: int | None


class FirstResponse(msgspec.Struct, frozen=True):
    message_id: str | None
    sender_type: str
    actor: MemberRef | None
    response_seconds: int


class ChatReplies(msgspec.Struct, frozen=True):
    phone: str
    first_customer_message_at: datetime | None
    replies: list[ChatReply]
    first_response: FirstResponse | None
    first_human_response: FirstResponse | None


class WorkspaceReply(msgspec.Struct, frozen=True):
    message_id: str | None
    phone: str
    sent_at: datetime
    sender_type: str
    actor: MemberRef | None
    sender_label: str | None
    status: str | None
    response_seconds: int | None


class ReplyPage(msgspec.Struct, frozen=True):
    data: list[WorkspaceReply]
    next_cursor: str | None
    window: Window


Args = Mapping[str, str | None]


def response_seconds(row: Record) -> int | None:
    """Seconds the customer waited for this reply on its clock; None if nobody was waiting, it failed or its
    outcome is not known yet."""
    if row["status"] in (delivery_status.FAILED, delivery_status.PENDING) or row["waited_from"] is None:
        return None
    return max(0, int((row["sent_at"] - row["waited_from"]).total_seconds()))


def _actor(row: Record) -> MemberRef | None:
    return MemberRef(row["actor_id"], row["actor_name"]) if row["actor_id"] else None


async def chat_replies(db: Database, workspace_id: int, raw_phone: str, args: Args,
                       restricted_to: int | None) -> ChatReplies:
    """Every reply of the chat in the window (its whole life by default), oldest first: the answer holds them
    all, never a first part (a chat's replies are bounded by the chat; 2,500 answer in one read)."""
    start, end = optional_window(args)
    phone, chat = await find_chat(db, workspace_id, raw_phone, restricted_to)
    rows = await queries.chat_replies(db, chat["id"], start=start, end=end)
    replies = [ChatReply(row["platform_message_id"], row["sent_at"], row["sender_type"], _actor(row),
                         row["sender_label"], row["answers_message_id"], row["status"], response_seconds(row))
               for row in rows]
    first = next((reply for reply in replies if reply.response_seconds is not None), None)
    first_human = next((reply for reply in replies
                        if reply.response_seconds is not None and reply.sender_type == "agent"), None)
    return ChatReplies(
        phone=phone,
        first_customer_message_at=await queries.first_customer_message_at(db, chat["id"], start, end),
        replies=replies, first_response=_first(first), first_human_response=_first(first_human),
    )


def _first(reply: ChatReply | None) -> FirstResponse | None:
    if reply is None or reply.response_seconds is None:
        return None
    return FirstResponse(reply.message_id, reply.sender_type, reply.actor, reply.response_seconds)


async def workspace_replies(db: Database, workspace_id: int, args: Args, now: datetime,
                            restricted_to: int | None) -> ReplyPage:
    agent_id = parameters.member_id(args.get("agent_id"), "agent_id")
    sender_type = parameters.choice(args.get("sender_type"), "sender_type", SENDER_TYPES)
    phone = parameters.phone(args.get("phone"))
    limit = parameters.limit(args.get("limit"), DEFAULT_LIMIT)
    position = cursors.decode(args, "replies", datetime, datetime, datetime, int)
    span = Window(position[0], position[1]) if position else window(args, now, REPLIES_AND_MESSAGES)
    after = (position[2], position[3]) if position else None
    rows = await queries.workspace_replies(db, workspace_id, start=span.start, end=span.end, agent_id=agent_id,
                                           sender_type=sender_type, phone=phone, restricted_to=restricted_to,
                                           after=after, limit=limit + 1)
    page, more = rows[:limit], len(rows) > limit
    next_cursor = cursors.encode("replies", args, span.start, span.end, page[-1]["sent_at"], page[-1]["id"]) \
        if more else None
    return ReplyPage([WorkspaceReply(row["platform_message_id"], row["phone"], row["sent_at"], row["sender_type"],
                                     _actor(row), row["sender_label"], row["status"], response_seconds(row))
                      for row in page], next_cursor, span)
