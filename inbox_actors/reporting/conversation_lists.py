"""The chat lists of the Reporting API: conversations, unanswered, and the unread summary.

Each list is one query (see `persistence.queries.reporting.conversations`). A cursor carries the window of
the walk's first page along with where that page ended, so later pages cover the same window: a walk is
exact while new messages arrive (a chat keeps the place it had when the walk began).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Mapping

import msgspec

from inbox_actors.domain.conversation_states import State
from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.paging import cursors, parameters
from inbox_actors.paging.windows import CHAT_LISTS, Window, older_than, window
from inbox_actors.reporting.conversation_detail import Conversation, conversation_fields
from persistence.database import Database, Record
from persistence.queries.reporting import conversations as queries
from persistence.queries.reporting.conversations import ChatFilters

STATES = tuple(state.value for state in State)
SORTS = ("last_activity", "waiting_longest")
DEFAULT_LIMIT = 50


class ConversationPage(msgspec.Struct, frozen=True):
    data: list[Conversation]
    next_cursor: str | None
    window: Window


class UnansweredPage(msgspec.Struct, frozen=True):
    data: list[Conversation]
    next_cursor: str | None
    window: Window
    older_than_seconds: int


class UnreadCounters(msgspec.Struct, frozen=True):
    assigned_to: MemberRef | None
    unread_chats: int
    unread_messages: int
    oldest_unread_at: datetime | None
    waiting_chats: int
    oldest_waiting_since: datetime | None


class UnreadSummary(msgspec.Struct, frozen=True):
    """The spec's UnreadSummary: aggregates only, no phone number anywhere."""

    window: Window
    unread_chats: int
    unread_messages: int
    oldest_unread_at: datetime | None
    waiting_chats: int
    oldest_waiting_since: datetime | None
    longest_wait_seconds: int | None
    by_assignee: list[UnreadCounters]
    unassigned: UnreadCounters


Args = Mapping[str, str | None]


class Scope(msgspec.Struct, frozen=True):
    """Narrowing a list beyond its query parameters (the agent inbox's views): resolved chats or the others;
    chats nobody holds or held ones. None: either."""

    resolved: bool | None = None
    unassigned: bool | None = None


def conversation_from_row(row: Record, now: datetime) -> Conversation:
    return Conversation(**conversation_fields(row, now, row["window_unread"]))


def _filters(args: Args, workspace_id: int, span: Window, now: datetime,
             restricted_to: int | None, scope: Scope | None = None) -> ChatFilters:
    return ChatFilters(
        workspace_id=workspace_id, start=span.start, end=span.end, now=now,
        unread=parameters.boolean(args.get("unread"), "unread"),
        needs_reply=parameters.boolean(args.get("needs_reply"), "needs_reply"),
        state=parameters.choice(args.get("state"), "state", STATES),
        assigned_to=parameters.member_id(args.get("assigned_to"), "assigned_to"),
        sla_breached=parameters.boolean(args.get("sla_breached"), "sla_breached"),
        search=parameters.search(args.get("q"), "q"),
        label=parameters.search(args.get("label"), "label"),
        snoozed=parameters.boolean(args.get("snoozed"), "snoozed"),
        restricted_to=restricted_to,
        resolved=scope.resolved if scope else None,
        unassigned=scope.unassigned if scope else None,
    )


async def conversations(db: Database, workspace_id: int, args: Args, now: datetime,
                        restricted_to: int | None, scope: Scope | None = None) -> ConversationPage:
    """The conversation list; `scope`: the agent inbox's narrowing of it, which no query parameter reaches."""
    sort = parameters.choice(args.get("sort"), "sort", SORTS, default="last_activity")
    limit = parameters.limit(args.get("limit"), DEFAULT_LIMIT)
    kind = f"conversations:{sort}"
    # A cursor: the window, the walk's snapshot (newest message id when it began), where the page ended.
    sort_type = datetime if sort == "last_activity" else (datetime, None)
    position = cursors.decode(args, kind, datetime, datetime, int, sort_type, int)
    span = Window(position[0], position[1]) if position else window(args, now, CHAT_LISTS)
    filters = _filters(args, workspace_id, span, now, restricted_to, scope)
    after = (position[3], position[4]) if position else None
    if sort == "last_activity":
        rows = await queries.by_last_activity(db, filters, position[2] if position else None, after, limit + 1)
    else:
        rows = await queries.by_waiting(db, filters, after, limit + 1)
    page, more = rows[:limit], len(rows) > limit
    snapshot = page[-1]["snapshot"] if sort == "last_activity" and page else 0
    next_cursor = cursors.encode(kind, args, span.start, span.end, snapshot, page[-1]["sort_at"], page[-1]["id"]) \
        if more else None
    return ConversationPage([conversation_from_row(row, now) for row in page], next_cursor, span)


async def unanswered(db: Database, workspace_id: int, args: Args, now: datetime,
                     restricted_to: int | None) -> UnansweredPage:
    """Chats whose customer has waited longer than `older_than`, longest wait first. Without `since` the window
    reaches back to the longest wait still lasting, so no wait is left out for being old; `since`/`to` narrow the
    list to chats with activity inside them, as in the conversation list."""
    wait = older_than(args.get("older_than"))
    limit = parameters.limit(args.get("limit"), DEFAULT_LIMIT)
    # The cursor pins the window and the moment "older than" is measured from, so pages agree.
    position = cursors.decode(args, "unanswered", datetime, datetime, datetime, datetime, int)
    span = Window(position[0], position[1]) if position else await _unanswered_window(db, workspace_id, args, now,
                                                                                       restricted_to)
    measured_at = position[2] if position else now
    filters = _filters({**args, "unread": None, "needs_reply": None, "sla_breached": None}, workspace_id, span,
                       now, restricted_to)
    after = (position[3], position[4]) if position else None
    rows = await queries.unanswered(db, filters, measured_at - wait, after, limit + 1)
    page, more = rows[:limit], len(rows) > limit
    next_cursor = cursors.encode("unanswered", args, span.start, span.end, measured_at, page[-1]["sort_at"],
                                 page[-1]["id"]) if more else None
    return UnansweredPage([conversation_from_row(row, now) for row in page], next_cursor, span,
                          int(wait / timedelta(seconds=1)))


async def _unanswered_window(db: Database, workspace_id: int, args: Args, now: datetime,
                             restricted_to: int | None) -> Window:
    span = window(args, now, CHAT_LISTS)
    if args.get("since") is not None or args.get("from") is not None:
        return span
    oldest = await queries.oldest_wait(db, workspace_id, restricted_to)
    return Window(oldest, span.end) if oldest is not None and oldest < span.start else span


async def unread_summary(db: Database, workspace_id: int, args: Args, now: datetime,
                         restricted_to: int | None) -> UnreadSummary:
    span = window(args, now, CHAT_LISTS)
    rows = await queries.unread_summary(db, workspace_id, span.start, span.end, restricted_to)
    groups = [_counters(row) for row in rows]
    unassigned = next((group for group in groups if group.assigned_to is None),
                      UnreadCounters(None, 0, 0, None, 0, None))
    oldest_waiting = _earliest(group.oldest_waiting_since for group in groups)
    return UnreadSummary(
        window=span,
        unread_chats=sum(group.unread_chats for group in groups),
        unread_messages=sum(group.unread_messages for group in groups),
        oldest_unread_at=_earliest(group.oldest_unread_at for group in groups),
        waiting_chats=sum(group.waiting_chats for group in groups),
        oldest_waiting_since=oldest_waiting,
        longest_wait_seconds=max(0, int((now - oldest_waiting).total_seconds())) if oldest_waiting else None,
        by_assignee=[group for group in groups if group.assigned_to is not None],
        unassigned=unassigned,
    )


def _counters(row: Record) -> UnreadCounters:
    assignee = MemberRef(row["assigned_to"], row["assigned_to_name"]) if row["assigned_to"] else None
    return UnreadCounters(assignee, row["unread_chats"], int(row["unread_messages"]), row["oldest_unread_at"],
                          row["waiting_chats"], row["oldest_waiting_since"])


def _earliest(values) -> datetime | None:
    present = [value for value in values if value is not None]
    return min(present) if present else None
