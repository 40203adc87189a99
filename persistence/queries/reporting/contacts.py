"""The contact list: newest activity first, page by page, with a total, searchable by name, phone, tags and
what was said in the chat."""

from __future__ import annotations

from persistence.database import Database, Record
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


def _filters(q: Statement, workspace_id: int, search: str | None, only_assigned_to: int | None) -> str:
    workspace = q.arg(workspace_id)
    q.where(f"k.workspace_id = {workspace}")
    if only_assigned_to is not None:
        q.where(f"c.assigned_to = {q.arg(only_assigned_to)}")
    if search is not None:
        pattern = q.arg(contains_pattern(search))
        digits = phone_digits(search)
        phone = f" OR k.phone LIKE {q.arg(contains_pattern(digits))}" if digits else ""
        q.where(f"""(k.name ILIKE {pattern}{phone} OR tags_text(k.tags) ILIKE {pattern}
                     OR c.id IN (SELECT t.conversation_id FROM messages t
                                 WHERE t.workspace_id = {workspace} AND t.text ILIKE {pattern}))""")
    return q.clause()


async def contact_page(db: Database, workspace_id: int, *, search: str | None, only_assigned_to: int | None,
                       offset: int, limit: int) -> tuple[int, list[Record]]:
    """(total matching, the page)."""
    q = Statement()
    where = _filters(q, workspace_id, search, only_assigned_to)
    total = await db.fetchval(f"SELECT count(*) {_JOINS} WHERE {where}", *q.args)
    rows = await db.fetch(
        f"""SELECT {_COLUMNS} {_JOINS} WHERE {where}
            ORDER BY c.last_activity_at DESC NULLS LAST, k.created_at DESC, k.id DESC
            LIMIT {q.arg(limit)} OFFSET {q.arg(offset)}""",
        *q.args,
    )
    return total, rows


async def one_contact(db: Database, workspace_id: int, phone: str) -> Record | None:
    return await db.fetchrow(f"SELECT {_COLUMNS}, c.assigned_to {_JOINS} WHERE k.workspace_id = $1 AND k.phone = $2",
                             workspace_id, phone)
