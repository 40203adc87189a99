"""The agent inbox's list narrowed by a member's filters (label, assignee, team queue, the chat's state, waiting
longer than, unread for the member), a page at a time, and each view's counts under the same filters, in one pass.

A view's chats are as the unfiltered views have them (`reporting/inbox_views.py` beside this, and the chat lists
they read): mine, the queue, unassigned, open, snoozed, resolved. Pages are keyset-walked on the order the list
shows, newest activity first (the index conversations_activity), the queue longest waiting for a person first
(conversations_handoff_queue); a label is matched by its name as the workspace's set spells it, which the chats
carry (the GIN index conversations_labels). "Waiting longer than" is measured by PostgreSQL's clock, `now()`: from
when the customer began waiting for an answer, and in the queue from when the wait for a person began, as each row
shows its wait.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from persistence.database import Database, Record
from persistence.queries import chat_visibility
from persistence.queries.member_reads import ANY_UNREAD
from persistence.queries.reporting.conversations import RESOLVED
from persistence.queries.reporting.statement import Statement

VIEWS = ("mine", "queue", "unassigned", "open", "snoozed", "resolved")
QUEUED_SINCE = "coalesce(c.waiting_for_person_since, c.handover_at)"
# Each view's chats; {me} is the member's id. The queue reaches back without limit, the others to `active_since`.
_VIEW = {
    "mine": "c.assigned_to = {me} AND NOT c.snoozed",
    "queue": "c.state = 'HANDOFF_PENDING' AND NOT c.snoozed",
    "unassigned": f"c.assigned_to IS NULL AND NOT {RESOLVED} AND NOT c.snoozed",
    "open": f"NOT {RESOLVED} AND NOT c.snoozed",
    "snoozed": "c.snoozed",
    "resolved": RESOLVED,
}

# The member's unread count is the page's, counted once for its rows (`inbox_views.listed_chats`).
_COLUMNS = """
c.id, c.phone, c.state, c.handover_reason, c.assigned_to, c.claimed_by, c.waiting_since, c.waiting_for_person_since,
c.sla_deadline_at, c.labels, c.count_messages, c.count_from_customer, c.count_from_bot, c.last_message_id,
c.last_activity_at, c.handover_at, c.created_at, c.snoozed, c.snoozed_until,
k.name AS contact_name, a.name AS assigned_to_name, cb.name AS claimed_by_name,
m.platform_message_id AS last_platform_message_id, m.sender_type AS last_sender_type, m.sent_at AS last_sent_at,
left(m.text, 200) AS last_text, m.type AS last_type, m.template_name AS last_template_name
"""
_JOINS = """
FROM conversations c
JOIN contacts k ON k.id = c.contact_id
LEFT JOIN members a ON a.id = c.assigned_to
LEFT JOIN members cb ON cb.id = c.claimed_by
LEFT JOIN messages m ON m.id = c.last_message_id
"""
# What the member has read of each chat, for the unread filter (the index member_chat_reads_member finds a member's).
_READS = "LEFT JOIN member_chat_reads r ON r.conversation_id = c.id AND r.member_id = {me}"


@dataclass(frozen=True)
class ListFilters:
    """What narrows a view; None (False): not narrowed by it."""

    label: str | None = None
    """A label's name as the workspace's set spells it."""
    assignee: int | None = None
    unassigned: bool = False
    team_id: int | None = None
    """Chats in this team's queue."""
    no_team: bool = False
    """Chats in the workspace's own queue: routed to no team, or to one deleted since."""
    state: str | None = None
    waiting_minutes: int | None = None
    unread: bool = False
    """Only chats with customer messages the member has not read."""


def _narrowed(q: Statement, f: ListFilters, restricted_to: int | None) -> None:
    """The filters every view shares (waiting is each view's: `_waiting`)."""
    if f.label is not None:
        q.where(f"c.labels @> ARRAY[{q.arg(f.label)}::text]")
    if f.assignee is not None:
        q.where(f"c.assigned_to = {q.arg(f.assignee)}")
    if f.unassigned:
        q.where("c.assigned_to IS NULL")
    if f.team_id is not None:
        q.where(f"c.team_id = {q.arg(f.team_id)}")
    if f.no_team:
        q.where("(c.team_id IS NULL OR NOT EXISTS (SELECT 1 FROM teams t WHERE t.id = c.team_id))")
    if f.state is not None:
        q.where(f"c.state = {q.arg(f.state)}")
    if f.unread:
        q.where(ANY_UNREAD)
    if restricted_to is not None:
        q.where(chat_visibility.visible("c", q.arg(restricted_to)))


def _waiting(view: str, minutes: str | None) -> str:
    """Waiting longer than `minutes` (a parameter) as the view's rows show the wait: for a person in the queue,
    else for an answer (a resolved chat waits for nobody)."""
    if minutes is None:
        return "true"
    since = f"now() - make_interval(mins => {minutes})"
    if view == "queue":
        return f"{QUEUED_SINCE} <= {since}"
    return f"(c.waiting_since <= {since} AND NOT {RESOLVED})"


def _minutes(q: Statement, f: ListFilters) -> str | None:
    return None if f.waiting_minutes is None else f"{q.arg(f.waiting_minutes)}::int"


async def filtered_page(db: Database, workspace_id: int, member_id: int, restricted_to: int | None, view: str,
                        f: ListFilters, active_since: datetime, after: tuple[datetime, int] | None,
                        limit: int) -> list[Record]:
    """A page of the view's chats under the filters, in the view's order; each row also carries `sort_at` (what
    the page is ordered by, for the next page's cursor)."""
    q = Statement()
    ws = q.arg(workspace_id)
    # The member's id only where the statement names it (a parameter it never uses has no type to bind).
    me = q.arg(member_id) if view == "mine" or f.unread else None
    q.where(_VIEW[view].format(me=me))
    _narrowed(q, f, restricted_to)
    q.where(_waiting(view, _minutes(q, f)))
    if view == "queue":
        sort, order = QUEUED_SINCE, f"{QUEUED_SINCE}, c.id"
        if after is not None:
            q.where(f"({QUEUED_SINCE}, c.id) > ({q.arg(after[0])}, {q.arg(after[1])})")
    else:
        sort, order = "c.last_activity_at", "c.last_activity_at DESC, c.id DESC"
        q.where(f"c.last_activity_at >= {q.arg(active_since)}")
        if after is not None:
            q.where(f"(c.last_activity_at, c.id) < ({q.arg(after[0])}, {q.arg(after[1])})")
    sql = f"""
    SELECT {_COLUMNS}, {sort} AS sort_at {_JOINS} {_READS.format(me=me) if f.unread else ""}
    WHERE c.workspace_id = {ws} AND {q.clause()}
    ORDER BY {order} LIMIT {q.arg(limit)}
    """
    return await db.fetch(sql, *q.args)


async def filtered_counts(db: Database, workspace_id: int, member_id: int, restricted_to: int | None,
                          f: ListFilters, active_since: datetime) -> Record:
    """For each view under the filters: its chats with messages the member has not read (`<view>`) and all its
    chats (`<view>_total`); one pass over the workspace's chats, as the unfiltered counts are."""
    q = Statement()
    ws, me, since = q.arg(workspace_id), q.arg(member_id), q.arg(active_since)
    _narrowed(q, f, restricted_to)
    minutes = _minutes(q, f)
    counted = []
    for view in VIEWS:
        recent = "true" if view == "queue" else f"c.last_activity_at >= {since}"
        inside = f"{_VIEW[view].format(me=me)} AND {recent} AND {_waiting(view, minutes)}"
        counted.append(f"count(*) FILTER (WHERE {inside} AND {ANY_UNREAD}) AS {view}")
        counted.append(f"count(*) FILTER (WHERE {inside}) AS {view}_total")
    sql = f"""
    SELECT {", ".join(counted)}
    FROM conversations c
    {_READS.format(me=me)}
    WHERE c.workspace_id = {ws} AND {q.clause()}
    """
    return await db.fetchrow(sql, *q.args)
