"""Chat lists (conversations, unanswered) and the unread summary.

A chat belongs to a window when it had activity inside it: its last activity, or, for a chat active again
since the window's end, its last message inside the window. That second rule keeps a walk exact: a cursor
pins the window's end and the newest message stored when the walk began, and a chat with a message stored
since keeps the place it had then, so every chat is returned exactly once. (Stored order, not time, tells
"since": the platform's timestamps have whole seconds.)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from persistence.database import Database, Record
from persistence.queries import chat_visibility
from persistence.queries.reporting.statement import Statement, contains_pattern, phone_digits

# Unread messages are the chat's last `unread_count` customer messages in stored order (an open resets the
# count). When the window holds all of them (from `unread_since`, the earliest, to the customer's last word)
# the figures are on the row; otherwise the chat's unread messages are walked, newest first, reading their
# times from the index alone (messages_customer_stored), stopping after `unread_count`.
_ALL_UNREAD_INSIDE = "(c.unread_since >= {start} AND c.last_customer_message_at <= {end})"
_UNREAD_WALK = """(
        SELECT {aggregate} FROM (
            SELECT u.sent_at FROM messages u
            WHERE u.conversation_id = c.id AND u.sender_type = 'customer'
            ORDER BY u.id DESC LIMIT c.unread_count
        ) unread WHERE unread.sent_at BETWEEN {start} AND {end})"""


def _window_unread(start: str, end: str) -> str:
    inside = _ALL_UNREAD_INSIDE.format(start=start, end=end)
    count = _UNREAD_WALK.format(aggregate="count(*)", start=start, end=end)
    oldest = _UNREAD_WALK.format(aggregate="min(unread.sent_at)", start=start, end=end)
    return f"""
CROSS JOIN LATERAL (
    SELECT CASE WHEN c.unread_count = 0 THEN 0 WHEN {inside} THEN c.unread_count ELSE {count} END
               AS window_unread,
           CASE WHEN c.unread_count = 0 THEN NULL WHEN {inside} THEN c.unread_since ELSE {oldest} END
               AS oldest_unread_at
) wu
"""


_COLUMNS = """
c.id, c.phone, c.state, c.handover_reason, c.assigned_to, c.claimed_by, c.unread_count, c.waiting_since,
c.waiting_for_person_since, c.sla_deadline_at, c.labels, c.count_messages, c.count_from_customer,
c.count_from_bot, c.last_message_id, c.last_activity_at, c.handover_at, c.claimed_at, c.resolved_at, c.channel,
c.version, c.created_at, c.snoozed, c.snoozed_until, k.name AS contact_name, a.name AS assigned_to_name,
cb.name AS claimed_by_name,
m.platform_message_id AS last_platform_message_id, m.sender_type AS last_sender_type, m.sent_at AS last_sent_at,
left(m.text, 200) AS last_text, m.type AS last_type, m.template_name AS last_template_name,
wu.window_unread, wu.oldest_unread_at
"""

_JOINS = """
FROM conversations c
JOIN contacts k ON k.id = c.contact_id
LEFT JOIN members a ON a.id = c.assigned_to
LEFT JOIN members cb ON cb.id = c.claimed_by
LEFT JOIN messages m ON m.id = c.last_message_id
"""


# A chat a person resolved (back with the bot) whose customer has not written since.
RESOLVED = ("(c.resolved_at IS NOT NULL AND c.state = 'AI_ONLY'"
            " AND coalesce(c.last_customer_message_at <= c.resolved_at, true))")


@dataclass(frozen=True)
class ChatFilters:
    workspace_id: int
    start: datetime
    end: datetime
    now: datetime
    unread: bool | None = None
    needs_reply: bool | None = None
    state: str | None = None
    assigned_to: int | None = None
    sla_breached: bool | None = None
    search: str | None = None
    label: str | None = None
    snoozed: bool | None = None
    restricted_to: int | None = None
    resolved: bool | None = None
    unassigned: bool | None = None


def _filter(q: Statement, f: ChatFilters) -> None:
    """The filters every chat list shares (the window itself is each caller's)."""
    if f.unread is not None:
        q.where("wu.window_unread > 0" if f.unread else "wu.window_unread = 0")
    if f.needs_reply is not None:
        q.where("c.waiting_since IS NOT NULL" if f.needs_reply else "c.waiting_since IS NULL")
    if f.state is not None:
        q.where(f"c.state = {q.arg(f.state)}")
    if f.snoozed is not None:
        q.where("c.snoozed" if f.snoozed else "NOT c.snoozed")
    if f.label is not None:
        # The chat's label of that name, whatever its case (labels are unique in a workspace that way).
        q.where(f"EXISTS (SELECT 1 FROM unnest(c.labels) AS l(name) WHERE lower(l.name) = lower({q.arg(f.label)}))")
    if f.assigned_to is not None:
        q.where(f"c.assigned_to = {q.arg(f.assigned_to)}")
    if f.unassigned is not None:
        q.where("c.assigned_to IS NULL" if f.unassigned else "c.assigned_to IS NOT NULL")
    if f.resolved is not None:
        q.where(RESOLVED if f.resolved else f"NOT {RESOLVED}")
    if f.restricted_to is not None:
        q.where(chat_visibility.visible("c", q.arg(f.restricted_to)))
    if f.sla_breached is not None:
        breached = f"(c.waiting_for_person_since IS NOT NULL AND c.sla_deadline_at < {q.arg(f.now)})"
        q.where(breached if f.sla_breached else f"NOT coalesce({breached}, false)")
    if f.search is not None:
        pattern = q.arg(contains_pattern(f.search))
        digits = phone_digits(f.search)
        phone = f" OR k.phone LIKE {q.arg(contains_pattern(digits))}" if digits else ""
        q.where(f"(k.name ILIKE {pattern}{phone})")


async def by_last_activity(db: Database, f: ChatFilters, snapshot: int | None, after: tuple[datetime, int] | None,
                           limit: int) -> list[Record]:
    """Newest activity first, as of the walk's snapshot. Two index walks merged: chats with nothing stored
    since the snapshot, by their last activity inside the window; and chats with messages since, placed by
    their last message inside the window that was stored by then. A walk's first page (`snapshot` None)
    takes the newest message id stored so far, in any workspace, and answers it on each row (`snapshot`)."""
    q = Statement()
    ws, start, end = q.arg(f.workspace_id), q.arg(f.start), q.arg(f.end)
    stored = f"""coalesce({q.arg(snapshot)}::bigint,
        (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM messages_id_seq))"""
    unread = _window_unread(start, end)
    _filter(q, f)
    filters = q.clause()
    keyset_in = keyset_moved = "true"
    if after is not None:
        at, chat_id = q.arg(after[0]), q.arg(after[1])
        keyset_in = f"(c.last_activity_at, c.id) < ({at}, {chat_id})"
        keyset_moved = f"(h.at, c.id) < ({at}, {chat_id})"
    n = q.arg(limit)
    snap = "(SELECT snapshot FROM walk)"
    sql = f"""
    WITH walk AS MATERIALIZED (SELECT {stored} AS snapshot)
    SELECT page.*, walk.snapshot FROM walk, (
        (SELECT {_COLUMNS}, c.last_activity_at AS sort_at {_JOINS} {unread}
         WHERE c.workspace_id = {ws} AND c.last_activity_at BETWEEN {start} AND {end}
           AND coalesce(c.last_message_id, 0) <= {snap} AND {keyset_in} AND {filters}
         ORDER BY c.last_activity_at DESC, c.id DESC LIMIT {n})
        UNION ALL
        (SELECT {_COLUMNS}, h.at AS sort_at {_JOINS} {unread}
         CROSS JOIN LATERAL (SELECT max(mm.sent_at) AS at FROM messages mm
                             WHERE mm.conversation_id = c.id AND mm.sent_at <= {end} AND mm.id <= {snap}) h
         WHERE c.workspace_id = {ws} AND (c.last_activity_at > {end} OR c.last_message_id > {snap})
           AND h.at >= {start} AND {keyset_moved} AND {filters}
         ORDER BY h.at DESC, c.id DESC LIMIT {n})
    ) page ORDER BY sort_at DESC, id DESC LIMIT {n}
    """
    return await db.fetch(sql, *q.args)


_IN_WINDOW = """(c.last_activity_at BETWEEN {start} AND {end} OR (c.last_activity_at > {end} AND EXISTS (
    SELECT 1 FROM messages mm WHERE mm.conversation_id = c.id AND mm.sent_at BETWEEN {start} AND {end})))"""


async def by_waiting(db: Database, f: ChatFilters, after: tuple[datetime | None, int] | None,
                     limit: int) -> list[Record]:
    """Longest waiting first (oldest `waiting_since`), then the chats nobody waits in, by id."""
    q = Statement()
    ws, start, end = q.arg(f.workspace_id), q.arg(f.start), q.arg(f.end)
    q.where(_IN_WINDOW.format(start=start, end=end))
    _filter(q, f)
    if after is not None:
        q.where(f"(coalesce(c.waiting_since, 'infinity'::timestamptz), c.id)"
                f" > (coalesce({q.arg(after[0])}::timestamptz, 'infinity'::timestamptz), {q.arg(after[1])})")
    sql = f"""
    SELECT {_COLUMNS}, c.waiting_since AS sort_at {_JOINS} {_window_unread(start, end)}
    WHERE c.workspace_id = {ws} AND {q.clause()}
    ORDER BY coalesce(c.waiting_since, 'infinity'::timestamptz), c.id LIMIT {q.arg(limit)}
    """
    return await db.fetch(sql, *q.args)


async def unanswered(db: Database, f: ChatFilters, waiting_before: datetime,
                     after: tuple[datetime, int] | None, limit: int) -> list[Record]:
    """Chats in the window (as every chat list has it: activity inside it) whose customer began waiting before
    `waiting_before`, longest wait first. A wait's start does not move while it lasts, so a walk is exact."""
    q = Statement()
    ws, start, end = q.arg(f.workspace_id), q.arg(f.start), q.arg(f.end)
    q.where(_IN_WINDOW.format(start=start, end=end))
    q.where(f"c.waiting_since <= {q.arg(waiting_before)}")
    _filter(q, f)
    if after is not None:
        q.where(f"(c.waiting_since, c.id) > ({q.arg(after[0])}, {q.arg(after[1])})")
    sql = f"""
    SELECT {_COLUMNS}, c.waiting_since AS sort_at {_JOINS} {_window_unread(start, end)}
    WHERE c.workspace_id = {ws} AND c.waiting_since IS NOT NULL AND {q.clause()}
    ORDER BY c.waiting_since, c.id LIMIT {q.arg(limit)}
    """
    return await db.fetch(sql, *q.args)


async def oldest_wait(db: Database, workspace_id: int, restricted_to: int | None) -> datetime | None:
    """When the longest wait still lasting began (of the chats the caller may see)."""
    return await db.fetchval(
        "SELECT min(c.waiting_since) FROM conversations c WHERE c.workspace_id = $1 AND c.waiting_since IS NOT NULL"
        " AND " + chat_visibility.visible("c", "$2"), workspace_id, restricted_to)


async def unread_summary(db: Database, workspace_id: int, start: datetime, end: datetime,
                         restricted_to: int | None) -> list[Record]:
    """Per assignee (NULL: unassigned): unread chats and messages, oldest unread, waiting chats, oldest wait."""
    q = Statement()
    ws, s, e = q.arg(workspace_id), q.arg(start), q.arg(end)
    q.where(_IN_WINDOW.format(start=s, end=e))
    if restricted_to is not None:
        q.where(chat_visibility.visible("c", q.arg(restricted_to)))
    sql = f"""
    SELECT c.assigned_to, a.name AS assigned_to_name,
           count(*) FILTER (WHERE wu.window_unread > 0) AS unread_chats,
           coalesce(sum(wu.window_unread), 0) AS unread_messages,
           min(wu.oldest_unread_at) AS oldest_unread_at,
           count(*) FILTER (WHERE c.waiting_since IS NOT NULL) AS waiting_chats,
           min(c.waiting_since) AS oldest_waiting_since
    FROM conversations c
    LEFT JOIN members a ON a.id = c.assigned_to
    {_window_unread(s, e)}
    WHERE c.workspace_id = {ws} AND {q.clause()}
    GROUP BY c.assigned_to, a.name
    ORDER BY c.assigned_to NULLS FIRST
    """
    return await db.fetch(sql, *q.args)


async def chat_ref(db: Database, workspace_id: int, phone: str) -> Record | None:
    """The chat's id, last customer message and what decides who may see it, for reads about one chat."""
    return await db.fetchrow(
        "SELECT c.id, c.assigned_to, c.state, c.team_id, c.last_customer_message_at, w.created_at AS recorded_from"
        " FROM conversations c JOIN workspaces w ON w.id = c.workspace_id"
        " WHERE c.workspace_id = $1 AND c.phone = $2",
        workspace_id, phone,
    )


_ALL_UNREAD = "CROSS JOIN LATERAL (SELECT c.unread_count AS window_unread, c.unread_since AS oldest_unread_at) wu"
_QUEUED_SINCE = "coalesce(c.waiting_for_person_since, c.handover_at)"


async def handoff_queue(db: Database, workspace_id: int, restricted_to: int | None,
                        after: tuple[datetime, int] | None, limit: int) -> list[Record]:
    """Chats handed off and not yet taken (HANDOFF_PENDING) and not snoozed, longest waiting for a person first
    (since the wait for a person began, else since the hand-off); the index conversations_handoff_queue walks it.
    Every row also
    carries the whole queue's `queue_total` and `queue_oldest`, counted in the same snapshot; an empty page is one
    row of those two with the chat's columns NULL."""
    q = Statement()
    queued = [f"c.workspace_id = {q.arg(workspace_id)}", "c.state = 'HANDOFF_PENDING'", "NOT c.snoozed"]
    if restricted_to is not None:
        queued.append(chat_visibility.visible("c", q.arg(restricted_to)))
    in_queue = " AND ".join(queued)
    if after is not None:
        q.where(f"({_QUEUED_SINCE}, c.id) > ({q.arg(after[0])}, {q.arg(after[1])})")
    sql = f"""
    WITH size AS (SELECT count(*) AS queue_total, min({_QUEUED_SINCE}) AS queue_oldest FROM conversations c
                  WHERE {in_queue}),
    page AS (SELECT {_COLUMNS}, {_QUEUED_SINCE} AS sort_at {_JOINS} {_ALL_UNREAD}
             WHERE {in_queue} AND {q.clause()}
             ORDER BY {_QUEUED_SINCE}, c.id LIMIT {q.arg(limit)})
    SELECT size.*, page.* FROM size LEFT JOIN page ON true ORDER BY page.sort_at, page.id
    """
    return await db.fetch(sql, *q.args)
