"""The contact list: newest activity first, page by page, with a total, searchable by name, phone, tags and
what was said in the chat.

A page is one statement. A contact has one chat at most (`conversations_contact`), so the list is the
contacts with a chat, by the chat's last activity, then those without one, newest first. Without a search the
first walk the chats' activity index as far as the page reaches, and the others are read only when the page
reaches past them; the total is a count of contacts. A search first collects the matching contacts with
their sort keys, once, for the total and the page alike: by name, phone or tags (trigram indexes on
contacts) or by what was said in their chat (the trigram index on message text). Either way, only the page's
own rows are read in full.
"""

from __future__ import annotations

from persistence.database import Database, Record
from persistence.queries import chat_visibility
from persistence.queries.reporting.statement import Statement, contains_pattern, phone_digits

_COLUMNS = """
k.id, k.phone, k.name, k.email, k.company, k.status, k.tags, k.notes, k.custom_attributes, k.opted_out,
k.opted_out_at, k.version, k.created_at, k.updated_at, c.state AS chat_status, c.claimed_by, cb.name AS claimed_by_name,
c.last_activity_at AS last_msg_time
"""
_JOINS = """
FROM contacts k
LEFT JOIN conversations c ON c.contact_id = k.id
LEFT JOIN members cb ON cb.id = c.claimed_by
"""
# The list's order, on the narrow rows (id, created_at, last_activity_at) a page is chosen from.
_ORDER = "last_activity_at DESC NULLS LAST, created_at DESC, id DESC"


def _found(q: Statement, workspace: str, search: str, visible: str) -> str:
    """The contacts a search matches (id and sort keys): by their own fields, or by their chat's messages."""
    pattern = q.arg(contains_pattern(search))
    digits = phone_digits(search)
    phone = f" OR k.phone LIKE {q.arg(contains_pattern(digits))}" if digits else ""
    return f"""found AS MATERIALIZED (
        SELECT k.id, k.created_at, c.last_activity_at
        FROM contacts k LEFT JOIN conversations c ON c.contact_id = k.id
        WHERE k.workspace_id = {workspace} AND {visible}
          AND (k.name ILIKE {pattern}{phone} OR tags_text(k.tags) ILIKE {pattern})
        UNION
        SELECT k.id, k.created_at, c.last_activity_at
        FROM conversations c JOIN contacts k ON k.id = c.contact_id
        WHERE k.workspace_id = {workspace} AND {visible}
          AND c.id IN (SELECT m.conversation_id FROM messages m
                       WHERE m.workspace_id = {workspace} AND m.text ILIKE {pattern}))"""


def _listed(q: Statement, workspace: str, visible: str, reach: str) -> tuple[str, str]:
    """(WITH part, the listed rows) without a search: the first `reach` contacts with a chat, and those without
    one only when fewer than `reach` have a chat."""
    chats = f"""chats AS MATERIALIZED (
        SELECT k.id, k.created_at, c.last_activity_at FROM conversations c
        JOIN contacts k ON k.id = c.contact_id
        WHERE c.workspace_id = {workspace} AND k.workspace_id = {workspace} AND {visible}
        ORDER BY c.last_activity_at DESC, k.created_at DESC, k.id DESC LIMIT {reach})"""
    listed = f"""SELECT * FROM chats
        UNION ALL
        (SELECT k.id, k.created_at, NULL FROM contacts k LEFT JOIN conversations c ON c.contact_id = k.id
         WHERE k.workspace_id = {workspace} AND {visible} AND c.id IS NULL
           AND (SELECT count(*) FROM chats) < {reach}
         ORDER BY k.created_at DESC, k.id DESC LIMIT {reach})"""
    return chats, listed


async def contact_page(db: Database, workspace_id: int, *, search: str | None, restricted_to: int | None,
                       offset: int, limit: int) -> tuple[int, list[Record]]:
    """(total matching, the page)."""
    q = Statement()
    workspace = q.arg(workspace_id)
    visible = chat_visibility.visible("c", q.arg(restricted_to)) if restricted_to is not None else "true"
    if search is not None:
        prelude, listed, total = _found(q, workspace, search, visible), "SELECT * FROM found", "SELECT * FROM found"
    else:
        prelude, listed = _listed(q, workspace, visible, q.arg(offset + limit))
        total = f"SELECT 1 {_JOINS} WHERE k.workspace_id = {workspace} AND {visible}"
    rows = await db.fetch(
        f"""WITH {prelude}
            SELECT total.n AS total, page.*
            FROM (SELECT count(*) AS n FROM ({total}) counted) total
            LEFT JOIN LATERAL (
                SELECT {_COLUMNS}
                FROM ({listed} ORDER BY {_ORDER} LIMIT {q.arg(limit)} OFFSET {q.arg(offset)}) p
                JOIN contacts k ON k.id = p.id
                LEFT JOIN conversations c ON c.contact_id = k.id
                LEFT JOIN members cb ON cb.id = c.claimed_by
                ORDER BY p.last_activity_at DESC NULLS LAST, p.created_at DESC, p.id DESC
            ) page ON true""",
        *q.args,
    )
    return rows[0]["total"], [row for row in rows if row["id"] is not None]


async def one_contact(db: Database, workspace_id: int, phone: str) -> Record | None:
    return await db.fetchrow(f"SELECT {_COLUMNS}, c.assigned_to, c.state, c.team_id {_JOINS}"
                             " WHERE k.workspace_id = $1 AND k.phone = $2", workspace_id, phone)
