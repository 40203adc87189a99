"""A member's saved views of the agent inbox's list (`saved_views`, migration 030): each a name and the filters it
keeps. Writes run in a transaction that first takes the member's own lock (`lock_member`), so that the limit on
how many a member keeps and the name's uniqueness hold against two saves at once.

jsonb crosses asyncpg as text: the filters are passed encoded and returned as text.
"""

from __future__ import annotations

from persistence.database import Database, Record, UnitOfWork

_COLUMNS = "id, name, filters::text AS filters, created_at, updated_at"


async def lock_member(tx: UnitOfWork, member_id: int) -> None:
    """The member's saved views are theirs alone to write until the transaction ends."""
    await tx.execute("SELECT pg_advisory_xact_lock(hashtext('saved_views'), ($1 % 2147483648)::int)", member_id)


async def list_views(db: Database, workspace_id: int, member_id: int) -> list[Record]:
    """The member's saved views by name."""
    return await db.fetch(f"SELECT {_COLUMNS} FROM saved_views WHERE workspace_id = $1 AND member_id = $2"
                          " ORDER BY lower(name), id", workspace_id, member_id)


async def count_views(tx: UnitOfWork, member_id: int) -> int:
    return await tx.fetchval("SELECT count(*) FROM saved_views WHERE member_id = $1", member_id)


async def find_view(q: Database | UnitOfWork, workspace_id: int, member_id: int, view_id: int) -> Record | None:
    return await q.fetchrow(f"SELECT {_COLUMNS} FROM saved_views WHERE workspace_id = $1 AND member_id = $2"
                            " AND id = $3", workspace_id, member_id, view_id)


async def name_taken(tx: UnitOfWork, member_id: int, name: str, but_id: int) -> bool:
    """Whether another of the member's saved views has this name, whatever its case."""
    return await tx.fetchval("SELECT EXISTS (SELECT 1 FROM saved_views WHERE member_id = $1"
                             " AND lower(name) = lower($2) AND id <> $3)", member_id, name, but_id)


async def insert_view(tx: UnitOfWork, workspace_id: int, member_id: int, name: str, filters_json: str) -> Record:
    return await tx.fetchrow(
        f"INSERT INTO saved_views (workspace_id, member_id, name, filters) VALUES ($1, $2, $3, $4::jsonb)"
        f" RETURNING {_COLUMNS}", workspace_id, member_id, name, filters_json)


async def update_view(tx: UnitOfWork, view_id: int, name: str, filters_json: str) -> Record:
    return await tx.fetchrow(
        f"UPDATE saved_views SET name = $2, filters = $3::jsonb, updated_at = now() WHERE id = $1"
        f" RETURNING {_COLUMNS}", view_id, name, filters_json)


async def delete_view(tx: UnitOfWork, view_id: int) -> None:
    await tx.execute("DELETE FROM saved_views WHERE id = $1", view_id)
