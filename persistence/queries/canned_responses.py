"""A workspace's canned responses: the ready-made replies its members insert in the reply box."""

from __future__ import annotations

from persistence.database import Database, Record, UnitOfWork

_COLUMNS = "id, shortcut, title, text, created_by, updated_by, created_at, updated_at"


async def list_canned(db: Database, workspace_id: int) -> list[Record]:
    return await db.fetch(f"SELECT {_COLUMNS} FROM canned_responses WHERE workspace_id = $1"
                          " ORDER BY lower(shortcut), id", workspace_id)


async def count_canned(q: Database | UnitOfWork, workspace_id: int) -> int:
    return await q.fetchval("SELECT count(*) FROM canned_responses WHERE workspace_id = $1", workspace_id)


async def find_canned(q: Database | UnitOfWork, workspace_id: int, canned_id: int, *,
                      for_update: bool = False) -> Record | None:
    lock = " FOR UPDATE" if for_update else ""
    return await q.fetchrow(f"SELECT {_COLUMNS} FROM canned_responses WHERE workspace_id = $1 AND id = $2{lock}",
                            workspace_id, canned_id)


async def shortcut_taken(q: Database | UnitOfWork, workspace_id: int, shortcut: str, but_id: int) -> bool:
    """Whether another canned response of the workspace has this shortcut, whatever its case."""
    return await q.fetchval("SELECT EXISTS (SELECT 1 FROM canned_responses WHERE workspace_id = $1"
                            " AND lower(shortcut) = lower($2) AND id <> $3)", workspace_id, shortcut, but_id)


async def insert_canned(tx: UnitOfWork, workspace_id: int, shortcut: str, title: str, text: str,
                        member_id: int | None) -> Record | None:
    """The new canned response; None when the workspace has one of that shortcut already."""
    return await tx.fetchrow(
        f"INSERT INTO canned_responses (workspace_id, shortcut, title, text, created_by, updated_by)"
        f" VALUES ($1, $2, $3, $4, $5, $5)"
        f" ON CONFLICT (workspace_id, lower(shortcut)) DO NOTHING RETURNING {_COLUMNS}",
        workspace_id, shortcut, title, text, member_id)


async def update_canned(tx: UnitOfWork, canned_id: int, shortcut: str, title: str, text: str,
                        member_id: int | None) -> Record:
    return await tx.fetchrow(
        f"UPDATE canned_responses SET shortcut = $2, title = $3, text = $4, updated_by = $5, updated_at = now()"
        f" WHERE id = $1 RETURNING {_COLUMNS}", canned_id, shortcut, title, text, member_id)


async def delete_canned(tx: UnitOfWork, canned_id: int) -> None:
    await tx.execute("DELETE FROM canned_responses WHERE id = $1", canned_id)

