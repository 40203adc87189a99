"""Signing in: members' password hashes and the one-time links that set them (kept by SHA-256 only)."""

from __future__ import annotations

from datetime import datetime, timedelta

from persistence.database import Database, Record, UnitOfWork

# One person is rarely a member of more than a few workspaces; the bound keeps a sign-in's password checks (each
# deliberately slow) few whatever the data holds.
MEMBERS_PER_EMAIL = 5


async def members_for_email(q: Database | UnitOfWork, email: str) -> list[Record]:
    """The members, of any status, whose email is `email` (any case): the oldest first."""
    return await q.fetch(
        "SELECT id, workspace_id, status, password_hash FROM members"
        " WHERE lower(email) = lower($1) AND email IS NOT NULL ORDER BY id LIMIT $2",
        email, MEMBERS_PER_EMAIL,
    )


async def set_password_hash(q: Database | UnitOfWork, member_id: int, password_hash: str, at: datetime) -> bool:
    """False when there is no such member."""
    status = await q.execute("UPDATE members SET password_hash = $2, updated_at = $3 WHERE id = $1",
                             member_id, password_hash, at)
    return status.split()[-1] != "0"


async def find_member_for_sign_in(q: Database | UnitOfWork, member_id: int) -> Record | None:
    return await q.fetchrow(
        "SELECT m.id, m.workspace_id, m.name, m.email, m.status, w.name AS workspace_name"
        " FROM members m JOIN workspaces w ON w.id = m.workspace_id WHERE m.id = $1",
        member_id,
    )


async def insert_invite(tx: UnitOfWork, *, member_id: int, token_hash: bytes, lifetime: timedelta,
                        created_by: str, at: datetime) -> datetime:
    """Store a new link lasting `lifetime` and end the member's earlier unused ones, so only the latest link sent
    works; when it expires. Links expire by PostgreSQL's clock, which every node shares."""
    await tx.execute(
        "UPDATE member_invites SET expires_at = now() WHERE member_id = $1 AND used_at IS NULL AND expires_at > now()",
        member_id,
    )
    return await tx.fetchval(
        "INSERT INTO member_invites (member_id, token_hash, created_at, expires_at, created_by)"
        " VALUES ($1, $2, $3, now() + $4::interval, $5) RETURNING expires_at",
        member_id, token_hash, at, lifetime, created_by,
    )


async def find_invite(q: Database | UnitOfWork, token_hash: bytes) -> Record | None:
    return await q.fetchrow(
        """
        SELECT i.id, i.member_id, i.expires_at, i.expires_at <= now() AS expired, i.used_at, m.workspace_id,
               m.name AS member_name,
               m.email, m.status AS member_status, w.name AS workspace_name
        FROM member_invites i
        JOIN members m ON m.id = i.member_id
        JOIN workspaces w ON w.id = m.workspace_id
        WHERE i.token_hash = $1
        """,
        token_hash,
    )


async def use_invite(tx: UnitOfWork, invite_id: int, at: datetime) -> bool:
    """Mark the link used, only if it is still unused and unexpired (by PostgreSQL's clock): of two acceptances at
    once, one takes."""
    return await tx.fetchval(
        "UPDATE member_invites SET used_at = $2 WHERE id = $1 AND used_at IS NULL AND expires_at > now()"
        " RETURNING true",
        invite_id, at,
    ) is True
