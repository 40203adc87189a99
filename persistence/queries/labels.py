"""A workspace's label set, and the label names on its chats."""

from __future__ import annotations

from persistence.database import Database, Record, UnitOfWork

_COLUMNS = "id, name, colour, created_at, updated_at"


async def list_labels(db: Database, workspace_id: int) -> list[Record]:
    return await db.fetch(f"SELECT {_COLUMNS} FROM labels WHERE workspace_id = $1 ORDER BY lower(name), id",
                          workspace_id)


async def count_labels(q: Database | UnitOfWork, workspace_id: int) -> int:
    return await q.fetchval("SELECT count(*) FROM labels WHERE workspace_id = $1", workspace_id)


async def find_label(q: Database | UnitOfWork, workspace_id: int, label_id: int, *,
                     for_update: bool = False) -> Record | None:
    lock = " FOR UPDATE" if for_update else ""
    return await q.fetchrow(f"SELECT {_COLUMNS} FROM labels WHERE workspace_id = $1 AND id = $2{lock}",
                            workspace_id, label_id)


async def find_label_named(q: Database | UnitOfWork, workspace_id: int, name: str) -> Record | None:
    """The label of this name, whatever its case."""
    return await q.fetchrow(f"SELECT {_COLUMNS} FROM labels WHERE workspace_id = $1 AND lower(name) = lower($2)",
                            workspace_id, name)


async def insert_label(tx: UnitOfWork, workspace_id: int, name: str, colour: str) -> Record | None:
    """The new label; None when the workspace has one of that name already."""
    return await tx.fetchrow(
        f"INSERT INTO labels (workspace_id, name, colour) VALUES ($1, $2, $3)"
        f" ON CONFLICT (workspace_id, lower(name)) DO NOTHING RETURNING {_COLUMNS}",
        workspace_id, name, colour)


async def update_label(tx: UnitOfWork, label_id: int, name: str, colour: str) -> Record:
    return await tx.fetchrow(
        f"UPDATE labels SET name = $2, colour = $3, updated_at = now() WHERE id = $1 RETURNING {_COLUMNS}",
        label_id, name, colour)


async def delete_label(tx: UnitOfWork, label_id: int) -> None:
    await tx.execute("DELETE FROM labels WHERE id = $1", label_id)


async def rename_on_chats(tx: UnitOfWork, workspace_id: int, old: str, new: str) -> int:
    """Rename the label on every chat of the workspace that has it; how many chats. Each chat's row is locked
    for the update, so a chat labelled at the same time sees the label before or after, never half."""
    status = await tx.execute(
        "UPDATE conversations SET labels = array_replace(labels, $2, $3), updated_at = now()"
        " WHERE workspace_id = $1 AND labels @> ARRAY[$2]::text[]", workspace_id, old, new)
    return int(status.split()[-1])


async def remove_from_chats(tx: UnitOfWork, workspace_id: int, name: str) -> int:
    status = await tx.execute(
        "UPDATE conversations SET labels = array_remove(labels, $2), updated_at = now()"
        " WHERE workspace_id = $1 AND labels @> ARRAY[$2]::text[]", workspace_id, name)
    return int(status.split()[-1])


async def chat_labels(tx: UnitOfWork, conversation_id: int) -> list[str]:
    """The chat's labels as committed, its row locked until the transaction ends (a rename of the label set
    waits for it, or has happened)."""
    return list(await tx.fetchval("SELECT labels FROM conversations WHERE id = $1 FOR UPDATE", conversation_id))
