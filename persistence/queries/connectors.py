"""The automation connectors' REST hooks (`connector_hooks`) and what they read from the outbox: the live hooks
a workspace delivers to, and a trigger's latest events (its polling samples)."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record, UnitOfWork

_VIEW = "h.id, h.platform, h.event, h.target_url, h.key_id, k.name AS key_name, h.created_at"


async def insert_hook(tx: UnitOfWork, *, workspace_id: int, platform: str, event: str, target_url: str,
                      signing_secret: str, key_id: int) -> Record:
    row = await tx.fetchrow(
        "WITH h AS (INSERT INTO connector_hooks (workspace_id, platform, event, target_url, signing_secret, key_id)"
        " VALUES ($1, $2, $3, $4, $5, $6) RETURNING *)"
        f" SELECT {_VIEW} FROM h JOIN api_keys k ON k.id = h.key_id",
        workspace_id, platform, event, target_url, signing_secret, key_id)
    assert row is not None
    return row


async def count_hooks_locked(tx: UnitOfWork, workspace_id: int) -> int:
    """The workspace's hooks, counted under a lock on its row: two subscribes at once cannot both pass a limit."""
    await tx.execute("SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE", workspace_id)
    return await tx.fetchval("SELECT count(*) FROM connector_hooks WHERE workspace_id = $1", workspace_id)


async def list_hooks(db: Database, workspace_id: int, platform: str) -> list[Record]:
    return await db.fetch(
        f"SELECT {_VIEW} FROM connector_hooks h JOIN api_keys k ON k.id = h.key_id"
        " WHERE h.workspace_id = $1 AND h.platform = $2 ORDER BY h.id DESC", workspace_id, platform)


async def delete_hook(tx: UnitOfWork, workspace_id: int, platform: str, hook_id: int) -> Record | None:
    """Remove the hook and skip its copies not yet delivered; None when the workspace has no such hook."""
    row = await tx.fetchrow(
        "WITH h AS (DELETE FROM connector_hooks WHERE id = $1 AND workspace_id = $2 AND platform = $3 RETURNING *)"
        f" SELECT {_VIEW} FROM h JOIN api_keys k ON k.id = h.key_id", hook_id, workspace_id, platform)
    if row is not None:
        await tx.execute("UPDATE webhook_outbox SET outcome = 'skipped'"
                         " WHERE workspace_id = $1 AND hook_id = $2 AND outcome = 'pending'", workspace_id, hook_id)
    return row


async def hook_exists(db: Database, workspace_id: int, platform: str, hook_id: int) -> bool:
    return await db.fetchval("SELECT EXISTS (SELECT 1 FROM connector_hooks WHERE id = $1 AND workspace_id = $2"
                             " AND platform = $3)", hook_id, workspace_id, platform)


async def live_hooks(db: Database, workspace_id: int, now: datetime) -> list[Record]:
    """The hooks events may go to: their key live (not revoked, not past its rotation grace, not expired) and its
    creator active; with the workspace's plan."""
    return await db.fetch(
        "SELECT h.id, h.event, h.target_url, h.signing_secret, w.plan FROM connector_hooks h"
        " JOIN workspaces w ON w.id = h.workspace_id JOIN api_keys k ON k.id = h.key_id"
        " JOIN members m ON m.id = k.created_by"
        " WHERE h.workspace_id = $1 AND k.revoked_at IS NULL AND (k.grace_until IS NULL OR k.grace_until > $2)"
        " AND (k.expires_at IS NULL OR k.expires_at > $2) AND m.status = 'active'", workspace_id, now)


async def latest_events(db: Database, workspace_id: int, event: str, limit: int) -> list[Record]:
    """The workspace's latest events of one kind, newest first (whatever became of their delivery)."""
    return await db.fetch(
        "SELECT id, event, correlation_id, actor, data::text AS data, created_at FROM webhook_outbox"
        " WHERE workspace_id = $1 AND event = $2 AND hook_id IS NULL AND NOT test ORDER BY id DESC LIMIT $3",
        workspace_id, event, limit)


async def connection(db: Database, key_id: int) -> Record | None:
    """What a connection shows: the key, its creator, its workspace."""
    return await db.fetchrow(
        "SELECT k.id AS key_id, k.name AS key_name, k.scopes, k.created_at AS key_created_at,"
        " m.id AS member_id, m.name AS member_name, m.email AS member_email, m.role AS member_role,"
        " w.id AS workspace_id, w.name AS workspace_name, w.plan"
        " FROM api_keys k JOIN members m ON m.id = k.created_by JOIN workspaces w ON w.id = k.workspace_id"
        " WHERE k.id = $1", key_id)


async def active_members(db: Database, workspace_id: int, limit: int) -> list[Record]:
    return await db.fetch("SELECT id, name, email FROM members WHERE workspace_id = $1 AND status = 'active'"
                          " ORDER BY lower(name), id LIMIT $2", workspace_id, limit)


async def workspace_tags(db: Database, workspace_id: int, limit: int) -> list[Record]:
    """The tags the workspace's contacts carry, each once (case ignored, the first spelling kept), by name."""
    return await db.fetch(
        "SELECT min(t.tag) AS tag, count(*) AS contacts FROM contacts c, unnest(c.tags) AS t(tag)"
        " WHERE c.workspace_id = $1 GROUP BY lower(t.tag) ORDER BY lower(t.tag) LIMIT $2", workspace_id, limit)
