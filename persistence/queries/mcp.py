"""MCP tokens (stored by SHA-256 hash only) and the per-workspace settings of the MCP action catalog."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record, UnitOfWork

_TOKEN_COLUMNS = """
    t.id, t.workspace_id, t.member_id, m.name AS member_name, t.name, t.created_at, t.revoked_at, t.last_used_at
"""


async def find_caller(db: Database, token_hash: bytes, now: datetime) -> Record | None:
    """A live token with what its calls depend on (its member and workspace, the actions it is limited to), in one
    indexed lookup; None for an unknown, revoked or expired token."""
    return await db.fetchrow(
        """
        SELECT t.id AS token_id, t.name AS token_name, t.workspace_id, t.actions, m.id AS member_id, m.role,
               m.permissions, m.status, m.assigned_only, w.plan, w.cloud_api_enabled
        FROM mcp_tokens t
        JOIN members m ON m.id = t.member_id
        JOIN workspaces w ON w.id = t.workspace_id
        WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > $2)
        """,
        token_hash, now,
    )


async def touch_token(db: Database, token_id: int, at: datetime) -> None:
    await db.execute("UPDATE mcp_tokens SET last_used_at = greatest(last_used_at, $2) WHERE id = $1", token_id, at)


async def insert_token(tx: UnitOfWork, *, workspace_id: int, member_id: int, name: str, token_hash: bytes
                       ) -> Record:
    row = await tx.fetchrow(
        "INSERT INTO mcp_tokens (workspace_id, member_id, name, token_hash) VALUES ($1, $2, $3, $4) RETURNING id",
        workspace_id, member_id, name, token_hash,
    )
    return await find_token(tx, workspace_id, row["id"])


async def find_token(db: Database | UnitOfWork, workspace_id: int, token_id: int) -> Record | None:
    return await db.fetchrow(
        f"SELECT {_TOKEN_COLUMNS} FROM mcp_tokens t JOIN members m ON m.id = t.member_id"
        " WHERE t.workspace_id = $1 AND t.id = $2",
        workspace_id, token_id,
    )


async def list_tokens(db: Database, workspace_id: int) -> list[Record]:
    return await db.fetch(
        f"SELECT {_TOKEN_COLUMNS} FROM mcp_tokens t JOIN members m ON m.id = t.member_id"
        " WHERE t.workspace_id = $1 ORDER BY t.id DESC",
        workspace_id,
    )


async def revoke_token(tx: UnitOfWork, workspace_id: int, token_id: int, at: datetime) -> tuple[Record | None, bool]:
    """Revoke (a token revoked before keeps its first time): the token as it now is (None when unknown), and
    whether this call revoked it."""
    changed = await tx.fetchval(
        "UPDATE mcp_tokens SET revoked_at = $3 WHERE workspace_id = $1 AND id = $2 AND revoked_at IS NULL"
        " RETURNING id",
        workspace_id, token_id, at,
    )
    return await find_token(tx, workspace_id, token_id), changed is not None


async def action_settings(db: Database | UnitOfWork, workspace_id: int) -> list[Record]:
    return await db.fetch(
        "SELECT action, exposed, needs_approval FROM mcp_actions WHERE workspace_id = $1", workspace_id)


async def save_action(tx: UnitOfWork, workspace_id: int, action: str, *, exposed: bool, needs_approval: bool
                      ) -> None:
    await tx.execute(
        """
        INSERT INTO mcp_actions (workspace_id, action, exposed, needs_approval) VALUES ($1, $2, $3, $4)
        ON CONFLICT (workspace_id, action)
        DO UPDATE SET exposed = $3, needs_approval = $4, updated_at = now()
        """,
        workspace_id, action, exposed, needs_approval,
    )


async def lock_workspace_actions(tx: UnitOfWork, workspace_id: int) -> None:
    """Serialise changes to one workspace's action settings (read, judge, write)."""
    await tx.execute("SELECT pg_advisory_xact_lock(hashtext('mcp_actions'), $1::int)", workspace_id % 2**31)


async def workspace_of_token(db: Database, token_hash: bytes) -> int | None:
    """The workspace of an MCP token, live or not (where to route its requests; the node serving them checks it)."""
    return await db.fetchval("SELECT workspace_id FROM mcp_tokens WHERE token_hash = $1", token_hash)
