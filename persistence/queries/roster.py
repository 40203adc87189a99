"""The team roster: a workspace's members with their live load, and the changes made to them."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record, UnitOfWork

# A member's load, counted from the chats as they are: claimed chats still open, and of those the ones whose
# customer waits for a person (and since when the longest has).
_MEMBER = """
m.id, m.name, m.email, m.role, m.status, m.permissions, m.assigned_only, m.created_at, m.updated_at,
coalesce(load.open_chats, 0) AS open_chats, coalesce(load.waiting_chats, 0) AS waiting_chats,
load.oldest_wait_since
FROM members m
LEFT JOIN LATERAL (
    SELECT count(*) AS open_chats,
           count(*) FILTER (WHERE c.waiting_for_person_since IS NOT NULL) AS waiting_chats,
           min(c.waiting_for_person_since) AS oldest_wait_since
    FROM conversations c
    WHERE c.workspace_id = m.workspace_id AND c.assigned_to = m.id AND c.state = 'HUMAN_ACTIVE'
) load ON true
"""


async def members(db: Database, workspace_id: int, statuses: list[str], after_id: int | None,
                  limit: int) -> list[Record]:
    """The workspace's members in the given statuses, oldest first (by id, after `after_id`), with their load."""
    return await db.fetch(
        f"SELECT {_MEMBER} WHERE m.workspace_id = $1 AND m.status = ANY($2::text[]) AND m.id > $3"
        " ORDER BY m.id LIMIT $4",
        workspace_id, statuses, after_id or 0, limit)


async def member(q: Database | UnitOfWork, workspace_id: int, member_id: int, *, for_update: bool = False
                 ) -> Record | None:
    """One member of the workspace with their load; `for_update` locks the row until the transaction ends."""
    lock = " FOR UPDATE OF m" if for_update else ""
    return await q.fetchrow(f"SELECT {_MEMBER} WHERE m.workspace_id = $1 AND m.id = $2{lock}",
                            workspace_id, member_id)


async def lock_admins(tx: UnitOfWork, workspace_id: int) -> list[int]:
    """The workspace's active admins, locked: two changes that could each leave it without one are serialised."""
    rows = await tx.fetch("SELECT id FROM members WHERE workspace_id = $1 AND role = 'admin' AND status = 'active'"
                          " ORDER BY id FOR UPDATE", workspace_id)
    return [row["id"] for row in rows]


async def update_member(tx: UnitOfWork, member_id: int, changes: dict[str, object], at: datetime) -> None:
    """Write `changes` (name, email, role, permissions, assigned_only, status) to the member."""
    allowed = ("name", "email", "role", "permissions", "assigned_only", "status")
    unknown = set(changes) - set(allowed)
    if unknown:
        raise ValueError(f"unknown member columns: {sorted(unknown)}")
    names = [name for name in allowed if name in changes]
    assignments = ", ".join(f"{name} = ${i}" for i, name in enumerate(names, start=3))
    await tx.execute(f"UPDATE members SET {assignments}, updated_at = $2 WHERE id = $1",
                     member_id, at, *(changes[name] for name in names))


async def claimed_open_chats(q: Database | UnitOfWork, workspace_id: int, member_id: int) -> list[str]:
    """The phones of the chats the member has claimed and not resolved."""
    rows = await q.fetch("SELECT phone FROM conversations WHERE workspace_id = $1 AND assigned_to = $2"
                         " AND state = 'HUMAN_ACTIVE' ORDER BY id", workspace_id, member_id)
    return [row["phone"] for row in rows]
