"""Message templates: one row per (workspace, name, language), as the operator registers them.

The send path and the platform simulator's catalog read them through the same functions here, so the service
and the simulator accept exactly the same templates: an APPROVED row of the workspace owning the number.
"""

from __future__ import annotations

from persistence.database import Database, Record, UnitOfWork

APPROVED = "APPROVED"

_COLUMNS = "id, workspace_id, name, language, category, status, parameter_count, body, created_at"


async def insert_template(
    tx: UnitOfWork, *, workspace_id: int, name: str, language: str, category: str, status: str,
    parameter_count: int, body: str,
) -> Record | None:
    """The new row, or None when the workspace already has a template of that name and language."""
    return await tx.fetchrow(
        f"""
        INSERT INTO templates (workspace_id, name, language, category, status, parameter_count, body)
        VALUES ($1, $2, $3, $4, $5, $6, $7)
        ON CONFLICT (workspace_id, name, language) DO NOTHING
        RETURNING {_COLUMNS}
        """,
        workspace_id, name, language, category, status, parameter_count, body,
    )


async def list_templates(
    db: Database | UnitOfWork, workspace_id: int, *, status: str | None = None, name: str | None = None,
    language: str | None = None,
) -> list[Record]:
    """The workspace's templates ordered by name, then language; each filter given must match exactly."""
    return await db.fetch(
        f"""
        SELECT {_COLUMNS} FROM templates
        WHERE workspace_id = $1
          AND ($2::text IS NULL OR status = $2)
          AND ($3::text IS NULL OR name = $3)
          AND ($4::text IS NULL OR language = $4)
        ORDER BY name, language
        """,
        workspace_id, status, name, language,
    )


async def delete_template(tx: UnitOfWork, workspace_id: int, name: str, language: str) -> Record | None:
    """The removed row, or None when there was none."""
    return await tx.fetchrow(
        f"DELETE FROM templates WHERE workspace_id = $1 AND name = $2 AND language = $3 RETURNING {_COLUMNS}",
        workspace_id, name, language,
    )


async def find_template(db: Database | UnitOfWork, workspace_id: int, name: str, language: str, *,
                        approved_only: bool = False) -> Record | None:
    """The workspace's template of that name and language, whatever its status unless `approved_only`."""
    return await db.fetchrow(
        f"""
        SELECT {_COLUMNS} FROM templates
        WHERE workspace_id = $1 AND name = $2 AND language = $3 AND (NOT $4 OR status = '{APPROVED}')
        """,
        workspace_id, name, language, approved_only,
    )


async def find_template_for_number(db: Database | UnitOfWork, phone_number_id: str, name: str,
                                   language: str) -> Record | None:
    """The APPROVED template of that name and language of the workspace owning the platform number."""
    return await db.fetchrow(
        f"""
        SELECT {', '.join(f't.{column}' for column in _COLUMNS.split(', '))}
        FROM templates t JOIN workspaces w ON w.id = t.workspace_id
        WHERE w.phone_number_id = $1 AND t.name = $2 AND t.language = $3 AND t.status = '{APPROVED}'
        """,
        phone_number_id, name, language,
    )


async def template_name_exists_for_number(db: Database | UnitOfWork, phone_number_id: str, name: str) -> bool:
    """Whether the workspace owning the number has an APPROVED template of that name in any language (to tell
    "no such template" from "not in that language")."""
    return bool(await db.fetchval(
        f"""
        SELECT 1 FROM templates t JOIN workspaces w ON w.id = t.workspace_id
        WHERE w.phone_number_id = $1 AND t.name = $2 AND t.status = '{APPROVED}'
        LIMIT 1
        """,
        phone_number_id, name,
    ))
