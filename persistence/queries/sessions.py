"""Members' dashboard sessions, stored by SHA-256 hash only. A session's expiry is set and judged by PostgreSQL's
clock, which every node shares: a node whose own clock runs ahead neither ends sessions early nor makes new ones
last longer."""

from __future__ import annotations

from datetime import datetime, timedelta

from persistence.database import Database, Record, UnitOfWork


async def insert_session(tx: UnitOfWork, *, token_hash: bytes, member_id: int, lifetime: timedelta) -> datetime:
    """Store a session lasting `lifetime` from now; when it expires."""
    return await tx.fetchval(
        "INSERT INTO member_sessions (token_hash, member_id, expires_at) VALUES ($1, $2, now() + $3::interval)"
        " RETURNING expires_at",
        token_hash, member_id, lifetime,
    )


async def find_session(db: Database, token_hash: bytes) -> Record | None:
    return await db.fetchrow(
        """
        SELECT s.expires_at, s.expires_at > now() AS live, s.revoked_at, m.id AS member_id, m.workspace_id,
               m.name AS member_name, m.role,
               m.permissions, m.status AS member_status, m.assigned_only, w.plan, w.cloud_api_enabled,
               m.time_zone
        FROM member_sessions s
        JOIN members m ON m.id = s.member_id
        JOIN workspaces w ON w.id = m.workspace_id
        WHERE s.token_hash = $1
        """,
        token_hash,
    )


async def revoke_member_sessions(tx: UnitOfWork, member_id: int, at: datetime) -> int:
    status = await tx.execute(
        "UPDATE member_sessions SET revoked_at = $2 WHERE member_id = $1 AND revoked_at IS NULL", member_id, at
    )
    return int(status.split()[-1])


async def revoke_session(q: Database | UnitOfWork, token_hash: bytes, at: datetime) -> bool:
    """Sign one session out; False when it was unknown or already signed out."""
    status = await q.execute(
        "UPDATE member_sessions SET revoked_at = $2 WHERE token_hash = $1 AND revoked_at IS NULL", token_hash, at
    )
    return status.split()[-1] != "0"


async def workspace_of_session(db: Database, token_hash: bytes) -> int | None:
    """The workspace of a session's member, live or not (where to route its requests; the node serving them checks
    the session)."""
    return await db.fetchval("SELECT m.workspace_id FROM member_sessions s JOIN members m ON m.id = s.member_id"
                             " WHERE s.token_hash = $1", token_hash)
