"""The agent inbox's views: which chats a member works through, a page at a time, with unread counts per view.

The views are the chat lists every front door reads (the Reporting API's conversation list, the hand-off queue, the
contact list's search), narrowed the way a person works:

| view | chats | order |
|---|---|---|
| mine | assigned to the caller's member, not snoozed | newest activity first |
| queue | handed off and not taken (HANDOFF_PENDING, not snoozed) | longest waiting for a person first |
| unassigned | nobody holds them, not resolved, not snoozed (the bot's and the queue's) | newest activity first |
| open | every chat not resolved and not snoozed | newest activity first |
| snoozed | snoozed, until they wake (their time comes, or the customer writes) | newest activity first |
| resolved | resolved by a person, the customer silent since | newest activity first |

A search looks through every chat the caller may see, by name, phone, tags or message text (the contact list's
search), whatever view is open. Views other than the queue reach back VIEW_REACH_DAYS (the chat lists' longest
window); a queued chat is listed whatever its age. An assigned-only member's views hold only their own chats, as
every read does for them.

Unread messages are the member's own: a chat's customer messages stored after the member last opened it or marked
it read (`member_chat_reads`), whoever else has read them; the API's `unread_count` is the chat's (since anyone
opened it) and stays so. A sent template's preview is the text the customer got (its body with the values filled),
not the API's "[template name]".

Filters narrow a view (`ListFilter`: what an inbox address carries and a saved view keeps, `use_cases/
saved_views.py`): a label of the workspace's set, the assignee (the caller, nobody, a member), the team whose queue
the chat is in (a team, or none: the workspace's own queue; docs/team.md#team-queues), the chat's state as
its row names it (with the bot, waiting for a person, with a person), waiting longer than some minutes (by
PostgreSQL's clock, as the row shows the wait: for a person in the queue, for an answer elsewhere), and unread for
the caller's member. Open, snoozed and resolved are the views themselves. Under filters each view's unread count is
counted under them too, with how many chats the view holds under them (`matching`), and pages are keyset-walked
on the view's own order (`persistence/queries/reporting/filtered_chats.py`); without filters the views are read as
they always were, from the chat lists above. A search looks through every chat, filters aside.

The list is the declared read `INBOX`: every door (the web app's list, its saved views) runs it through the one
runner, which checks the caller's permission and each field's rule (`invalid_view`, `invalid_label`, ...).
"""

from __future__ import annotations

import enum
from datetime import datetime, timedelta
from typing import Annotated

import msgspec

from inbox_actors.domain.conversation_states import State
from inbox_actors.labels import label_set
from inbox_actors.labels.label_set import MAX_NAME as MAX_LABEL_NAME
from inbox_actors.paging import cursors
from inbox_actors.paging.parameters import MAX_SEARCH, InvalidParameter
from inbox_actors.paging.windows import CHAT_LISTS
from inbox_actors.platform.templates import filled
from inbox_actors.reporting import contact_list, conversation_lists
from inbox_actors.reporting.conversation_detail import Conversation, conversation_fields, shortened
from inbox_actors.reporting.conversation_lists import Scope
from inbox_actors.team.handoff_queue import QueuedChat, handoff_queue
from inbox_actors.use_cases import chats, permissions, team
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import ONE_LINE, Cursor
from inbox_actors.use_cases.outcomes import Outcome, Reason, Refused
from inbox_actors.use_cases.use_case import Kind, UseCase, done, rule
from persistence.database import Record
from persistence.queries.reporting.filtered_chats import ListFilters, filtered_counts, filtered_page
from persistence.queries.reporting.inbox_views import listed_chats, view_counts

VIEW_REACH_DAYS = CHAT_LISTS[1]
PAGE_SIZE = 20
"""A page of the list: a few screens of rows ("Older chats" pages on). Every row is parsed, laid out and wired by the
browser before the workspace's first load is ready, and read again after each live event."""
MAX_WAITING_MINUTES = 43_200
"""30 days: "waiting longer than" a month is as far as a filter reaches."""
FILTERED_CURSOR = "inbox-filtered"


class InboxView(str, enum.Enum):
    """A view of the list (named apart from the Reporting API's `View` of a chat, in the published contract)."""

    MINE = "mine"
    QUEUE = "queue"
    UNASSIGNED = "unassigned"
    OPEN = "open"
    SNOOZED = "snoozed"
    RESOLVED = "resolved"


View = InboxView


VIEW_TITLES = {View.MINE: "Mine", View.QUEUE: "Queue", View.UNASSIGNED: "Unassigned", View.OPEN: "All open",
               View.SNOOZED: "Snoozed", View.RESOLVED: "Resolved"}
# Each list's narrowing: the Reporting API's own filter (`snoozed`), and the inbox's scope beyond it.
_SCOPES = {View.UNASSIGNED: Scope(resolved=False, unassigned=True), View.OPEN: Scope(resolved=False),
           View.RESOLVED: Scope(resolved=True)}
_SNOOZED = {View.MINE: "false", View.UNASSIGNED: "false", View.OPEN: "false", View.SNOOZED: "true"}


# -- a view and its filters, as an address carries them ------------------------------------------------------

ViewName = Annotated[View, msgspec.Meta(
    description="The view: mine, queue, unassigned, open (every chat not resolved, not snoozed), snoozed, resolved.",
    extra=rule("invalid_view", "view must be one of mine, queue, unassigned, open, snoozed, resolved."))]
LabelName = Annotated[str, msgspec.Meta(
    min_length=1, max_length=MAX_LABEL_NAME, pattern=ONE_LINE, examples=["VIP"],
    description="Only chats with this label (its name in the workspace's set, whatever its case).",
    extra=rule("invalid_label", f"label must be a label's name: 1 to {MAX_LABEL_NAME} characters on one line."))]
Assignee = Annotated[str, msgspec.Meta(
    pattern=r"^(me|none|[1-9][0-9]{0,17})$", examples=["me"],
    description="Only chats held by: me (the caller's member), none (nobody), or a member's user id.",
    extra=rule("invalid_assignee", "assignee must be me, none (nobody holds the chat) or a member's user id."))]
ChatState = Annotated[State, msgspec.Meta(
    description="Only chats in this state: AI_ONLY (with the bot), HANDOFF_PENDING (waiting for a person), "
                "HUMAN_ACTIVE (with a person).",
    extra=rule("invalid_state", "state must be AI_ONLY (with the bot), HANDOFF_PENDING (waiting for a person) or "
                                "HUMAN_ACTIVE (with a person)."))]
WaitingMinutes = Annotated[int, msgspec.Meta(
    ge=1, le=MAX_WAITING_MINUTES, examples=[30],
    description="Only chats whose customer has waited longer than this many minutes (in the queue: for a "
                "person), by the database's clock.",
    extra=rule("invalid_waiting", f"waiting must be a whole number of minutes from 1 to {MAX_WAITING_MINUTES:,} "
                                  "(30 days)."))]
TeamChoice = Annotated[str, msgspec.Meta(
    pattern=r"^(none|[1-9][0-9]{0,17})$", examples=["3"],
    description="Only chats in this team's queue (a team's id), or in the workspace's own (none).",
    extra=rule("invalid_team", "team must be a team's id, or none (chats in no team's queue)."))]
Unread = Annotated[bool, msgspec.Meta(
    description="Only chats with customer messages the caller's member has not read (true).",
    extra=rule("invalid_unread", "unread must be true or false."))]
Search = Annotated[str, msgspec.Meta(
    max_length=MAX_SEARCH, pattern=ONE_LINE,
    description="Search every chat the caller may see by name, phone, tags or message text (filters aside).",
    extra=rule("invalid_search", f"A search is at most {MAX_SEARCH} characters on one line."))]


class ListFilter(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """A view and the filters narrowing it: what an inbox address carries (`?view=open&label=VIP&unread=true`)
    and what a saved view keeps. A view left out is the caller's default (`default_view`)."""

    view: ViewName | None = None
    label: LabelName | None = None
    assignee: Assignee | None = None
    team: TeamChoice | None = None
    state: ChatState | None = None
    waiting: WaitingMinutes | None = None
    unread: Unread = False

    @property
    def narrows(self) -> bool:
        """Whether any filter narrows the view."""
        return bool(self.label or self.assignee or self.team or self.state or self.waiting or self.unread)

    def fields(self) -> dict[str, str]:
        """The filters (not the view) as an address's parameters, in a fixed order; unset ones left out."""
        values = {"label": self.label, "assignee": self.assignee, "team": self.team,
                  "state": self.state.value if self.state else None,
                  "waiting": str(self.waiting) if self.waiting else None, "unread": "true" if self.unread else None}
        return {name: value for name, value in values.items() if value}

    def without_view(self) -> ListFilter:
        return msgspec.structs.replace(self, view=None)


NO_FILTER = ListFilter()


class InboxQuery(ListFilter, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """The list's arguments: a view, its filters, a search, and where the previous page ended."""

    q: Search | None = None
    cursor: Cursor | None = None


class ViewCounts(msgspec.Struct, frozen=True):
    """Chats with unread messages in each view, and how many chats wait in the queue."""

    mine: int
    queue: int
    unassigned: int
    open: int
    snoozed: int
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
    """Messages the caller's member has not read (`member_chat_reads`), up to `member_reads.UNREAD_CAP`."""
    assignee: str | None
    waiting_seconds: int | None
    """How long the customer has waited for an answer (the queue: for a person)."""
    sla_seconds_left: int | None
    labels: tuple[str, ...] = ()
    snoozed: bool = False
    snoozed_until: datetime | None = None
    """When a snoozed chat wakes; None: when the customer writes."""


class InboxPage(msgspec.Struct, frozen=True):
    view: View
    search: str | None
    rows: list[InboxRow]
    next_cursor: str | None
    counts: ViewCounts
    views: tuple[View, ...]
    """The views this caller may open (the queue is `team.HANDOFF_QUEUE`'s)."""
    colours: dict[str, str] = {}
    """The workspace's label colours, by the label's name in lower case."""
    filters: ListFilter = NO_FILTER
    """The filters narrowing the view (its `view` unset)."""
    matching: int | None = None
    """Under filters: how many chats the view holds under them (None without filters)."""
    labels: tuple[str, ...] = ()
    """The workspace's label set, by name as it spells them: what a label filter can name."""


def views_for(caller: Caller) -> tuple[View, ...]:
    if not chats.SHOW.allows(caller):
        return ()
    queue = (View.QUEUE,) if team.HANDOFF_QUEUE.allows(caller) else ()
    return (View.MINE, *queue, View.UNASSIGNED, View.OPEN, View.SNOOZED, View.RESOLVED)


def default_view(caller: Caller) -> View:
    """Where a member starts: a member limited to their own chats with them, others with what waits for the team
    (the queue, or every open chat without it)."""
    if caller.restricted_to is not None:
        return View.MINE
    return View.QUEUE if View.QUEUE in views_for(caller) else View.OPEN


async def inbox(deps: UseCaseDeps, caller: Caller, view: str | None = None, *, search: str | None = None,
                cursor: str | None = None, filters: ListFilter = NO_FILTER) -> InboxPage | Refused:
    """One page of a view (or of a search) for this caller, narrowed by `filters` (their `view` aside)."""
    views = views_for(caller)
    if not views:
        return Refused(Reason.PERMISSION, f"Reading chats needs the {chats.SHOW.needed()} permission.", 403,
                       "permission_denied")
    try:
        chosen = default_view(caller) if view is None else View(view)
    except ValueError:
        return Refused(Reason.INVALID, f"view must be one of {', '.join(v.value for v in View)}.", 400,
                       "invalid_view")
    if chosen not in views:
        return Refused(Reason.PERMISSION, "The hand-off queue needs the inbox or team_management permission.", 403,
                       "permission_denied")
    now = deps.clock.now()
    search = (search or "").strip() or None
    filters = filters.without_view()
    labels = (await label_set.labels(deps.db, caller.workspace_id)).data
    since = now - timedelta(days=VIEW_REACH_DAYS)
    matching = None
    try:
        if search is not None:
            rows, next_cursor = await _search(deps, caller, search, cursor)
        elif filters.narrows:
            narrowing = _narrowing(caller, filters, labels)
            rows, next_cursor = await _filtered(deps, caller, chosen, filters, narrowing, cursor, now)
        elif chosen is View.QUEUE:
            rows, next_cursor = await _queue(deps, caller, cursor, now)
        else:
            rows, next_cursor = await _list(deps, caller, chosen, cursor, now)
    except InvalidParameter as err:
        return Refused(Reason.INVALID, err.message, 400, "invalid_parameter")
    if filters.narrows and search is None:
        found = await filtered_counts(deps.db, caller.workspace_id, caller.member_id, caller.restricted_to,
                                      narrowing, since)
        counts = ViewCounts(**{v.value: found[v.value] for v in View}, queue_total=found["queue_total"])
        matching = found[f"{chosen.value}_total"]
    else:
        counts = ViewCounts(**dict((await view_counts(deps.db, caller.workspace_id, caller.member_id,
                                                      caller.restricted_to, since)).items()))
    colours = {label.name.lower(): label.colour for label in labels}
    return InboxPage(chosen, search, await _for_member(deps, caller, rows), next_cursor, counts, views, colours,
                     filters, matching, tuple(label.name for label in labels))


def _narrowing(caller: Caller, filters: ListFilter, labels: list[label_set.LabelView]) -> ListFilters:
    """The filters as the query takes them: the label as the set spells it (the chats carry that spelling; a name
    the set lacks, one deleted since a view was saved, matches no chat), the assignee as a member's id."""
    label = None
    if filters.label is not None:
        wanted = filters.label.strip()
        label = next((known.name for known in labels if known.name.lower() == wanted.lower()), wanted)
    assignee = filters.assignee
    return ListFilters(label=label, assignee=caller.member_id if assignee == "me" else (
        int(assignee) if assignee and assignee.isdigit() else None), unassigned=assignee == "none",
        team_id=int(filters.team) if filters.team and filters.team.isdigit() else None,
        no_team=filters.team == "none",
        state=filters.state.value if filters.state else None, waiting_minutes=filters.waiting,
        unread=filters.unread)


async def _filtered(deps: UseCaseDeps, caller: Caller, view: View, filters: ListFilter, narrowing: ListFilters,
                    cursor: str | None, now: datetime) -> tuple[list[InboxRow], str | None]:
    """A page of the view under the filters. Its cursor is known by the view and the filters it was given out
    for, as the chat lists' cursors are."""
    args = {"view": view.value, **filters.fields()}
    position = cursors.decode({**args, "cursor": cursor} if cursor else args, FILTERED_CURSOR, datetime, int)
    records = await filtered_page(deps.db, caller.workspace_id, caller.member_id, caller.restricted_to,
                                  view.value, narrowing, now - timedelta(days=VIEW_REACH_DAYS), position,
                                  PAGE_SIZE + 1)
    page, more = records[:PAGE_SIZE], len(records) > PAGE_SIZE
    next_cursor = cursors.encode(FILTERED_CURSOR, args, page[-1]["sort_at"], page[-1]["id"]) if more else None
    return [_chat_row(_filtered_chat(record, view, now), resolved=view is View.RESOLVED) for record in page], \
        next_cursor


def _filtered_chat(record: Record, view: View, now: datetime) -> Conversation:
    """A filtered row as the chat lists give it: a queued chat with the queue's clocks, as the queue has them."""
    fields = conversation_fields(record, now, 0)  # the member's unread: `_for_member`
    if view is not View.QUEUE:
        return Conversation(**fields)
    deadline = record["sla_deadline_at"]
    return QueuedChat(**fields, handover_at=record["handover_at"],
                      waiting_for_person_since=record["waiting_for_person_since"], queued_since=record["sort_at"],
                      queued_seconds=max(0, int((now - record["sort_at"]).total_seconds())),
                      sla_seconds_left=int((deadline - now).total_seconds()) if deadline is not None else None)


async def _inbox(deps: UseCaseDeps, caller: Caller, a: InboxQuery) -> Outcome:
    filters = ListFilter(**{name: getattr(a, name) for name in ListFilter.__struct_fields__})
    return done(await inbox(deps, caller, a.view.value if a.view else None, search=a.q, cursor=a.cursor,
                            filters=filters))


async def _for_member(deps: UseCaseDeps, caller: Caller, rows: list[InboxRow]) -> list[InboxRow]:
    """The rows with the member's own unread messages, and a template sent last as the text the customer got."""
    listed = {row["phone"]: row for row in await listed_chats(deps.db, caller.workspace_id, caller.member_id,
                                                              [row.phone for row in rows if row.state is not None])}
    return [row if (found := listed.get(row.phone)) is None else msgspec.structs.replace(
        row, unread=found["unread"],
        preview=row.preview if found["template_body"] is None else shortened(
            filled(found["template_body"], found["template_parameters"]))) for row in rows]


async def _list(deps: UseCaseDeps, caller: Caller, view: View, cursor: str | None,
                now: datetime) -> tuple[list[InboxRow], str | None]:
    args: dict[str, str | None] = {"since": (now - timedelta(days=VIEW_REACH_DAYS)).isoformat(),
                                   "limit": str(PAGE_SIZE), "cursor": cursor, "snoozed": _SNOOZED.get(view)}
    if view is View.MINE:
        args["assigned_to"] = str(caller.member_id)
    page = await conversation_lists.conversations(deps.db, caller.workspace_id, args, now, caller.restricted_to,
                                                  _SCOPES.get(view, Scope()))
    return [_chat_row(chat, resolved=view is View.RESOLVED) for chat in page.data], page.next_cursor


async def _queue(deps: UseCaseDeps, caller: Caller, cursor: str | None,
                 now: datetime) -> tuple[list[InboxRow], str | None]:
    queue = await handoff_queue(deps.db, caller.workspace_id, {"limit": str(PAGE_SIZE), "cursor": cursor}, now,
                                caller.restricted_to)
    return [_chat_row(chat) for chat in queue.data], queue.next_cursor


async def _search(deps: UseCaseDeps, caller: Caller, search: str,
                  cursor: str | None) -> tuple[list[InboxRow], str | None]:
    # The contact list pages by number; its page number is this list's cursor.
    page_number = cursor if cursor and cursor.isdigit() else "1"
    found = await contact_list.contact_page(deps.db, caller.workspace_id,
                                            {"search": search, "limit": str(PAGE_SIZE), "page": page_number},
                                            caller.restricted_to)
    rows = [InboxRow(phone=item.phone, name=item.name, state=item.chat_status, preview="", last_at=item.last_msg_time,
                     unread=0, assignee=item.claimed_by_name, waiting_seconds=None, sla_seconds_left=None,
                     labels=tuple(tag for tag in item.tags.split(",") if tag))
            for item in found.contacts]
    return rows, str(found.meta.page + 1) if found.meta.hasMore else None


def _chat_row(chat: Conversation, *, resolved: bool = False) -> InboxRow:
    """A chat as its row shows it; a resolved chat waits for nobody (resolving it answered the customer's last
    word), whatever the API's `needs_reply` says."""
    queued = isinstance(chat, QueuedChat)
    last = chat.last_message
    waiting = chat.queued_seconds if queued else (chat.waiting_seconds if chat.needs_reply else None)
    return InboxRow(
        phone=chat.phone, name=chat.contact_name, state=chat.state, preview=last.preview, last_at=last.sent_at,
        unread=chat.unread_count, assignee=chat.assigned_to.name if chat.assigned_to else None,
        waiting_seconds=None if resolved else waiting, sla_seconds_left=chat.sla_seconds_left if queued else None,
        labels=tuple(chat.labels), snoozed=chat.snoozed, snoozed_until=chat.snoozed_until)


# -- the declaration -----------------------------------------------------------------------------------------

INBOX = UseCase("list_inbox", InboxQuery, permissions.CHAT_CONTENT, Kind.READ, _inbox)
"""A page of a view of the agent inbox, narrowed by its filters, or a search (`InboxPage`)."""
