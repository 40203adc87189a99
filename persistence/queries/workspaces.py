"""Workspaces and their members."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record, UnitOfWork


async def insert_workspace(tx: UnitOfWork, *, name: str, plan: str, phone_number_id: str) -> Record:
    return await tx.fetchrow(
        "INSERT INTO workspaces (name, plan, phone_number_id) VALUES ($1, $2, $3)"
        " RETURNING id, name, plan, phone_number_id",
        name, plan, phone_number_id,
    )


async def phone_number_id_taken(tx: UnitOfWork, phone_number_id: str) -> bool:
    return bool(await tx.fetchval("SELECT 1 FROM workspaces WHERE phone_number_id = $1", phone_number_id))


async def update_plan(tx: UnitOfWork, workspace_id: int, plan: str) -> Record | None:
    return await tx.fetchrow(
        "UPDATE workspaces SET plan = $2, updated_at = now() WHERE id = $1 RETURNING id, plan",
        workspace_id, plan,
    )


async def find_workspace(tx: UnitOfWork, workspace_id: int, *, for_update: bool = False) -> Record | None:
    """With `for_update`, the row stays locked until the transaction ends: changes to the workspace's keys
    are serialised even between processes."""
    lock = " FOR UPDATE" if for_update else ""
    return await tx.fetchrow(f"SELECT id, name, plan, phone_number_id FROM workspaces WHERE id = $1{lock}",
                             workspace_id)


async def find_workspace_created(q: Database | UnitOfWork, workspace_id: int) -> Record | None:
    return await q.fetchrow("SELECT id, created_at FROM workspaces WHERE id = $1", workspace_id)


async def find_member_by_name(tx: UnitOfWork, workspace_id: int, name: str, role: str) -> Record | None:
    return await tx.fetchrow(
        "SELECT id FROM members WHERE workspace_id = $1 AND name = $2 AND role = $3 AND status = 'active'"
        " ORDER BY id LIMIT 1",
        workspace_id, name, role,
    )


async def find_workspace_by_name(tx: UnitOfWork, name: str) -> Record | None:
    return await tx.fetchrow(
        "SELECT id, name, plan, phone_number_id FROM workspaces WHERE name = $1 ORDER BY id LIMIT 1", name
    )


async def insert_member(
    tx: UnitOfWork, *, workspace_id: int, name: str, email: str | None, role: str,
    permissions: list[str], assigned_only: bool,
) -> Record:
    return await tx.fetchrow(
        """
        INSERT INTO members (workspace_id, name, email, role, permissions, assigned_only)
        VALUES ($1, $2, $3, $4, $5, $6)
        RETURNING id
        """,
        workspace_id, name, email, role, permissions, assigned_only,
    )


async def email_taken(tx: UnitOfWork, workspace_id: int, email: str) -> bool:
    return bool(await tx.fetchval(
        "SELECT 1 FROM members WHERE workspace_id = $1 AND lower(email) = lower($2)", workspace_id, email
    ))


async def find_member(q: Database | UnitOfWork, member_id: int) -> Record | None:
    return await q.fetchrow(
        "SELECT id, workspace_id, name, role, permissions, assigned_only, status FROM members WHERE id = $1",
        member_id,
    )


async def update_member_status(tx: UnitOfWork, member_id: int, status: str) -> Record | None:
    return await tx.fetchrow(
        "UPDATE members SET status = $2, updated_at = now() WHERE id = $1 RETURNING id, workspace_id, status",
        member_id, status,
    )


def workspace_number_query(workspace_id: int) -> tuple[str, tuple]:
    """The workspace's business number, all a chat needs of it (for `Database.fetchrow_each`)."""
    return "SELECT id, phone_number_id FROM workspaces WHERE id = $1", (workspace_id,)


async def find_workspace_by_number(q: Database | UnitOfWork, phone_number_id: str) -> int | None:
    return await q.fetchval("SELECT id FROM workspaces WHERE phone_number_id = $1", phone_number_id)


async def set_sla(tx: UnitOfWork, workspace_id: int, sla_seconds: int | None) -> Record | None:
    """The SLA target alone (the operator's command line; business hours stay as they are)."""
    return await tx.fetchrow(
        "UPDATE workspaces SET sla_seconds = $2, sla_updated_at = now(), sla_updated_by = NULL, updated_at = now()"
        " WHERE id = $1 RETURNING id, sla_seconds",
        workspace_id, sla_seconds)


_SLA_POLICY = ("w.sla_seconds, w.sla_business_hours::text AS sla_business_hours, w.sla_updated_at, w.sla_updated_by,"
               " m.name AS updated_by_name")


async def find_sla_policy(q: Database | UnitOfWork, workspace_id: int) -> Record:
    """The SLA target, business hours (JSON text, or NULL) and who set them when."""
    return await q.fetchrow(
        f"SELECT {_SLA_POLICY} FROM workspaces w LEFT JOIN members m ON m.id = w.sla_updated_by WHERE w.id = $1",
        workspace_id)


async def save_sla_policy(q: Database | UnitOfWork, workspace_id: int, sla_seconds: int | None,
                          business_hours_json: str | None, member_id: int, at: datetime) -> Record:
    """Replace the SLA policy; answered as `find_sla_policy` answers, in one statement."""
    return await q.fetchrow(
        "WITH saved AS (UPDATE workspaces SET sla_seconds = $2, sla_business_hours = $3::jsonb, sla_updated_at = $5,"
        "  sla_updated_by = $4, updated_at = $5 WHERE id = $1 RETURNING *)"
        f" SELECT {_SLA_POLICY} FROM saved w LEFT JOIN members m ON m.id = w.sla_updated_by",
        workspace_id, sla_seconds, business_hours_json, member_id, at)


async def find_deadline_policy(q: Database | UnitOfWork, workspace_id: int) -> Record:
    """What a wait's SLA deadline is computed from: the target and the business hours (JSON text, or NULL)."""
    return await q.fetchrow(
        "SELECT sla_seconds, sla_business_hours::text AS sla_business_hours FROM workspaces WHERE id = $1",
        workspace_id)


async def set_cloud_api(tx: UnitOfWork, workspace_id: int, enabled: bool) -> Record | None:
    return await tx.fetchrow(
        "UPDATE workspaces SET cloud_api_enabled = $2, updated_at = now() WHERE id = $1"
        " RETURNING id, cloud_api_enabled",
        workspace_id, enabled)
