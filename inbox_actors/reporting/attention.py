"""Who looked at a chat: seen-by (per member) and views (each open). Only a member opening the chat in the
inbox or the embedded panel counts; API reads and a key marking a chat read never do."""

from __future__ import annotations

from datetime import datetime
from typing import Mapping

import msgspec

from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.paging import cursors, parameters
from inbox_actors.reporting.chat_lookup import find_chat
from persistence.database import Database
from persistence.queries.reporting import attention as queries

DEFAULT_LIMIT = 100


class Seer(msgspec.Struct, frozen=True):
    user_id: int
    name: str | None
    first_opened_at: datetime
    last_opened_at: datetime
    opens: int
    unseen_customer_messages: int


class SeenBy(msgspec.Struct, frozen=True):
    phone: str
    last_customer_message_at: datetime | None
    seen_by_anyone: bool
    seen_by: list[Seer]
    recorded_from: datetime


class View(msgspec.Struct, frozen=True):
    user: MemberRef | None
    opened_at: datetime
    marked_read: int


class ViewPage(msgspec.Struct, frozen=True):
    phone: str
    data: list[View]
    next_cursor: str | None


async def seen_by(db: Database, workspace_id: int, raw_phone: str, restricted_to: int | None) -> SeenBy:
    phone, chat = await find_chat(db, workspace_id, raw_phone, restricted_to)
    rows = await queries.seen_by(db, chat["id"])
    seers = [Seer(row["member_id"], row["member_name"], row["first_opened_at"], row["last_opened_at"],
                  row["opens"], row["unseen_customer_messages"]) for row in rows]
    # Seen: someone has opened the chat since the customer's last message was stored (or at all, if the
    # customer never wrote).
    seen = any(seer.unseen_customer_messages == 0 for seer in seers)
    return SeenBy(phone, chat["last_customer_message_at"], seen, seers, chat["recorded_from"])


async def views(db: Database, workspace_id: int, raw_phone: str, args: Mapping[str, str | None],
                restricted_to: int | None) -> ViewPage:
    limit = parameters.limit(args.get("limit"), DEFAULT_LIMIT)
    after = cursors.decode(args, "views", datetime, int)
    phone, chat = await find_chat(db, workspace_id, raw_phone, restricted_to)
    rows = await queries.views(db, chat["id"], after, limit + 1)
    page, more = rows[:limit], len(rows) > limit
    next_cursor = cursors.encode("views", args, page[-1]["opened_at"], page[-1]["id"]) if more else None
    return ViewPage(phone, [View(MemberRef(row["member_id"], row["member_name"]) if row["member_id"] else None,
                                 row["opened_at"], row["marked_read"]) for row in page], next_cursor)
