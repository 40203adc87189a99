"""Workspaces and their members."""

from __future__ import annotations

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


async def find_workspace_profile(q: Database | UnitOfWork, workspace_id: int) -> Record | None:
    """What a conversation needs of its workspace: plan, number, SLA target, whether sending is on."""
    return await q.fetchrow(
        "SELECT id, plan, phone_number_id, sla_seconds, cloud_api_enabled FROM workspaces WHERE id = $1",
        workspace_id)


async def find_workspace_by_number(q: Database | UnitOfWork, phone_number_id: str) -> int | None:
    return await q.fetchval("SELECT id FROM workspaces WHERE phone_number_id = $1", phone_number_id)


async def set_sla(tx: UnitOfWork, workspace_id: int, sla_seconds: int | None) -> Record | None:
    return await tx.fetchrow(
        "UPDATE workspaces SET sla_seconds = $2, updated_at = now() WHERE id = $1 RETURNING id, sla_seconds",
        workspace_id, sla_seconds)


async def set_cloud_api(tx: UnitOfWork, workspace_id: int, enabled: bool) -> Record | None:
    return await tx.fetchrow(
        "UPDATE workspaces SET cloud_api_enabled = $2, updated_at = now() WHERE id = $1"
        " RETURNING id, cloud_api_enabled",
        workspace_id, enabled)
