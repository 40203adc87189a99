"""The agent inbox's views: which chats a member works through, a page at a time, with unread counts per view.

The views are the chat lists every front door reads (the Reporting API's conversation list, the hand-off queue, the
contact list's search), narrowed the way a person works:

| view | chats | order |
|---|---|---|
| mine | assigned to the caller's member | newest activity first |
| queue | handed off and not taken (HANDOFF_PENDING, not snoozed) | longest waiting for a person first |
| unassigned | nobody holds them and they are not resolved (the bot's and the queue's) | newest activity first |
| open | every chat not resolved | newest activity first |
| resolved | resolved by a person, the customer silent since | newest activity first |

A search looks through every chat the caller may see, by name, phone, tags or message text (the contact list's
search), whatever view is open. Views other than the queue reach back VIEW_REACH_DAYS (the chat lists' longest
window); a queued chat is listed whatever its age. An assigned-only member's views hold only their own chats, as
every read does for them.
"""

from __future__ import annotations

import enum
from datetime import datetime, timedelta

import msgspec

from inbox_actors.paging.parameters import InvalidParameter
from inbox_actors.paging.windows import CHAT_LISTS
from inbox_actors.reporting import contact_list, conversation_lists
from inbox_actors.reporting.conversation_detail import Conversation
from inbox_actors.reporting.conversation_lists import Scope
from inbox_actors.team.handoff_queue import QueuedChat, handoff_queue
from inbox_actors.use_cases import chats, team
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Reason, Refused
from persistence.queries.reporting.inbox_views import view_counts

VIEW_REACH_DAYS = CHAT_LISTS[1]
PAGE_SIZE = 50


class View(str, enum.Enum):
    MINE = "mine"
    QUEUE = "queue"
    UNASSIGNED = "unassigned"
    OPEN = "open"
    RESOLVED = "resolved"


VIEW_TITLES = {View.MINE: "Mine", View.QUEUE: "Queue", View.UNASSIGNED: "Unassigned", View.OPEN: "All open",
               View.RESOLVED: "Resolved"}


class ViewCounts(msgspec.Struct, frozen=True):
    """Chats with unread messages in each view, and how many chats wait in the queue."""

    mine: int
    queue: int
    unassigned: int
    open: int
    resolved: int
    queue_total: int


class InboxRow(msgspec.Struct, frozen=True):
    phone: str
    name: str
    state: str | None
    """None: a contact found by a search who has no chat yet."""
    preview: str
    last_at: datetime | None
    unread: int
    assignee: str | None
    waiting_seconds: int | None
    """How long the customer has waited for an answer (the queue: for a person)."""
    sla_seconds_left: int | None
    labels: tuple[str, ...] = ()


class InboxPage(msgspec.Struct, frozen=True):
    view: View
    search: str | None
    rows: list[InboxRow]
    next_cursor: str | None
    counts: ViewCounts
    views: tuple[View, ...]
    """The views this caller may open (the queue is `team.HANDOFF_QUEUE`'s)."""


def views_for(caller: Caller) -> tuple[View, ...]:
    if not chats.SHOW.allows(caller):
        return ()
    queue = (View.QUEUE,) if team.HANDOFF_QUEUE.allows(caller) else ()
    return (View.MINE, *queue, View.UNASSIGNED, View.OPEN, View.RESOLVED)


async def inbox(deps: UseCaseDeps, caller: Caller, view: str, *, search: str | None = None,
                cursor: str | None = None) -> InboxPage | Refused:
    """One page of a view (or of a search) for this caller."""
    views = views_for(caller)
    if not views:
        return Refused(Reason.PERMISSION, f"Reading chats needs the {chats.SHOW.needed()} permission.", 403,
                       "permission_denied")
    try:
        chosen = View(view)
    except ValueError:
        return Refused(Reason.INVALID, f"view must be one of {', '.join(v.value for v in View)}.", 400,
                       "invalid_view")
    if chosen not in views:
        return Refused(Reason.PERMISSION, "The hand-off queue needs the inbox or team_management permission.", 403,
                       "permission_denied")
    now = deps.clock.now()
    search = (search or "").strip() or None
    try:
        if search is not None:
            rows, next_cursor = await _search(deps, caller, search, cursor)
        elif chosen is View.QUEUE:
            rows, next_cursor = await _queue(deps, caller, cursor, now)
        else:
            rows, next_cursor = await _list(deps, caller, chosen, cursor, now)
    except InvalidParameter as err:
        return Refused(Reason.INVALID, err.message, 400, "invalid_parameter")
    counts = await view_counts(deps.db, caller.workspace_id, caller.member_id, caller.only_assigned_to,
                               now - timedelta(days=VIEW_REACH_DAYS))
    return InboxPage(chosen, search, rows, next_cursor, ViewCounts(**dict(counts.items())), views)


async def _list(deps: UseCaseDeps, caller: Caller, view: View, cursor: str | None,
                now: datetime) -> tuple[list[InboxRow], str | None]:
    args: dict[str, str | None] = {"since": (now - timedelta(days=VIEW_REACH_DAYS)).isoformat(),
                                   "limit": str(PAGE_SIZE), "cursor": cursor}
    scope = Scope()
    if view is View.MINE:
        args["assigned_to"] = str(caller.member_id)
    elif view is View.UNASSIGNED:
        scope = Scope(resolved=False, unassigned=True)
    elif view is View.OPEN:
        scope = Scope(resolved=False)
    else:
        scope = Scope(resolved=True)
    page = await conversation_lists.conversations(deps.db, caller.workspace_id, args, now, caller.only_assigned_to,
                                                  scope)
    return [_chat_row(chat) for chat in page.data], page.next_cursor


async def _queue(deps: UseCaseDeps, caller: Caller, cursor: str | None,
                 now: datetime) -> tuple[list[InboxRow], str | None]:
    queue = await handoff_queue(deps.db, caller.workspace_id, {"limit": str(PAGE_SIZE), "cursor": cursor}, now,
                                caller.only_assigned_to)
    return [_chat_row(chat) for chat in queue.data], queue.next_cursor


async def _search(deps: UseCaseDeps, caller: Caller, search: str,
                  cursor: str | None) -> tuple[list[InboxRow], str | None]:
    # The contact list pages by number; its page number is this list's cursor.
    page_number = cursor if cursor and cursor.isdigit() else "1"
    found = await contact_list.contact_page(deps.db, caller.workspace_id,
                                            {"search": search, "limit": str(PAGE_SIZE), "page": page_number},
                                            caller.only_assigned_to)
    rows = [InboxRow(phone=item.phone, name=item.name, state=item.chat_status, preview="", last_at=item.last_msg_time,
                     unread=0, assignee=item.claimed_by_name, waiting_seconds=None, sla_seconds_left=None,
                     labels=tuple(tag for tag in item.tags.split(",") if tag))
            for item in found.contacts]
    return rows, str(found.meta.page + 1) if found.meta.hasMore else None


def _chat_row(chat: Conversation) -> InboxRow:
    queued = isinstance(chat, QueuedChat)
    last = chat.last_message
    return InboxRow(
        phone=chat.phone, name=chat.contact_name, state=chat.state, preview=last.preview, last_at=last.sent_at,
        unread=chat.unread_count, assignee=chat.assigned_to.name if chat.assigned_to else None,
        waiting_seconds=chat.queued_seconds if queued else (chat.waiting_seconds if chat.needs_reply else None),
        sla_seconds_left=chat.sla_seconds_left if queued else None, labels=tuple(chat.labels))
