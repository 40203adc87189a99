"""MCP's OAuth connection flow: registered clients, authorization codes, refresh tokens (all secrets by SHA-256
only), and the connection's MCP token (an mcp_tokens row whose hash each refresh replaces)."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record, UnitOfWork

# -- clients -------------------------------------------------------------------------------------------------


async def insert_client(db: Database, *, client_id: str, metadata: str, secret_hash: bytes | None) -> None:
    await db.execute(
        "INSERT INTO mcp_oauth_clients (client_id, metadata, client_secret_hash) VALUES ($1, $2::jsonb, $3)",
        client_id, metadata, secret_hash)


async def find_client(db: Database | UnitOfWork, client_id: str) -> Record | None:
    return await db.fetchrow(
        "SELECT client_id, metadata::text AS metadata, client_secret_hash, created_at FROM mcp_oauth_clients"
        " WHERE client_id = $1",
        client_id)


async def prune_clients(db: Database, registered_before: datetime) -> int:
    """Clients registered before then that never connected: no token of theirs, no code left."""
    deleted = await db.fetch(
        """
        DELETE FROM mcp_oauth_clients c
        WHERE c.created_at < $1
          AND NOT EXISTS (SELECT 1 FROM mcp_tokens t WHERE t.oauth_client_id = c.client_id)
          AND NOT EXISTS (SELECT 1 FROM mcp_oauth_codes k WHERE k.client_id = c.client_id)
        RETURNING c.client_id
        """,
        registered_before)
    return len(deleted)


# -- authorization codes -------------------------------------------------------------------------------------

_CODE_COLUMNS = """
    id, client_id, workspace_id, member_id, approved_via, code_challenge, redirect_uri, redirect_uri_explicit,
    resource, actions, expires_at, used_at, token_id
"""


async def insert_code(db: Database, *, code_hash: bytes, client_id: str, workspace_id: int, member_id: int,
                      approved_via: str, code_challenge: str, redirect_uri: str, redirect_uri_explicit: bool,
                      resource: str, actions: list[str], expires_at: datetime) -> None:
    await db.execute(
        """
        INSERT INTO mcp_oauth_codes (code_hash, client_id, workspace_id, member_id, approved_via, code_challenge,
                                     redirect_uri, redirect_uri_explicit, resource, actions, expires_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
        """,
        code_hash, client_id, workspace_id, member_id, approved_via, code_challenge, redirect_uri,
        redirect_uri_explicit, resource, actions, expires_at)


async def prune_codes(db: Database, expired_before: datetime) -> None:
    await db.execute("DELETE FROM mcp_oauth_codes WHERE expires_at < $1", expired_before)


async def find_code(db: Database | UnitOfWork, code_hash: bytes) -> Record | None:
    return await db.fetchrow(f"SELECT {_CODE_COLUMNS} FROM mcp_oauth_codes WHERE code_hash = $1", code_hash)


async def use_code(tx: UnitOfWork, code_id: int, at: datetime) -> bool:
    """Marks the code used if it is unused and unexpired; whether this call did (of two at once, one does)."""
    used = await tx.fetchval(
        "UPDATE mcp_oauth_codes SET used_at = $2 WHERE id = $1 AND used_at IS NULL AND expires_at > $2 RETURNING id",
        code_id, at)
    return used is not None


async def burn_code(db: Database | UnitOfWork, code_hash: bytes) -> bool:
    """Marks an unused code used, opening nothing; whether this call did. PostgreSQL's clock stamps it."""
    burnt = await db.fetchval(
        "UPDATE mcp_oauth_codes SET used_at = now() WHERE code_hash = $1 AND used_at IS NULL RETURNING id", code_hash)
    return burnt is not None


async def code_opened(tx: UnitOfWork, code_id: int, token_id: int) -> None:
    await tx.execute("UPDATE mcp_oauth_codes SET token_id = $2 WHERE id = $1", code_id, token_id)


async def code_connection(tx: UnitOfWork, code_id: int) -> int | None:
    return await tx.fetchval("SELECT token_id FROM mcp_oauth_codes WHERE id = $1", code_id)


# -- the connection's MCP token ------------------------------------------------------------------------------


async def insert_connection_token(tx: UnitOfWork, *, workspace_id: int, member_id: int, name: str,
                                  token_hash: bytes, expires_at: datetime, actions: list[str], client_id: str
                                  ) -> int:
    return await tx.fetchval(
        """
        INSERT INTO mcp_tokens (workspace_id, member_id, name, token_hash, expires_at, actions, oauth_client_id)
        VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id
        """,
        workspace_id, member_id, name, token_hash, expires_at, actions, client_id)


async def find_connection(db: Database | UnitOfWork, token_id: int) -> Record | None:
    """A connection with its member's standing (a refresh is refused once they are suspended or removed)."""
    return await db.fetchrow(
        """
        SELECT t.id, t.workspace_id, t.member_id, t.name, t.oauth_client_id, t.revoked_at, m.status AS member_status
        FROM mcp_tokens t JOIN members m ON m.id = t.member_id
        WHERE t.id = $1 AND t.oauth_client_id IS NOT NULL
        """,
        token_id)


async def find_connection_by_access(db: Database, token_hash: bytes) -> Record | None:
    """The live connection whose current access token this is (expired or not: revoking one still ends it)."""
    return await db.fetchrow(
        """
        SELECT id, oauth_client_id, expires_at FROM mcp_tokens
        WHERE token_hash = $1 AND oauth_client_id IS NOT NULL AND revoked_at IS NULL
        """,
        token_hash)


async def rotate_access_token(tx: UnitOfWork, token_id: int, token_hash: bytes, expires_at: datetime) -> bool:
    """The connection's new access token replaces the old one; False when it was revoked meanwhile."""
    changed = await tx.fetchval(
        "UPDATE mcp_tokens SET token_hash = $2, expires_at = $3 WHERE id = $1 AND revoked_at IS NULL RETURNING id",
        token_id, token_hash, expires_at)
    return changed is not None


async def revoke_connection(tx: UnitOfWork, token_id: int, at: datetime) -> Record | None:
    """Revokes the connection's token (its refresh tokens die with it); the token as it was, None when it was
    already revoked."""
    return await tx.fetchrow(
        "UPDATE mcp_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL"
        " RETURNING id, workspace_id, member_id, name, oauth_client_id",
        token_id, at)


# -- refresh tokens ------------------------------------------------------------------------------------------


async def insert_refresh_token(tx: UnitOfWork, *, token_hash: bytes, token_id: int, client_id: str, resource: str,
                               expires_at: datetime) -> None:
    await tx.execute(
        "INSERT INTO mcp_oauth_refresh_tokens (token_hash, token_id, client_id, resource, expires_at)"
        " VALUES ($1, $2, $3, $4, $5)",
        token_hash, token_id, client_id, resource, expires_at)


async def find_refresh_token(db: Database, token_hash: bytes) -> Record | None:
    return await db.fetchrow(
        """
        SELECT r.id, r.token_id, r.client_id, r.resource, r.expires_at, r.used_at, t.revoked_at, t.actions
        FROM mcp_oauth_refresh_tokens r JOIN mcp_tokens t ON t.id = r.token_id
        WHERE r.token_hash = $1
        """,
        token_hash)


async def use_refresh_token(tx: UnitOfWork, refresh_id: int, at: datetime) -> bool:
    """Marks it used if it is unused and unexpired; whether this call did."""
    used = await tx.fetchval(
        "UPDATE mcp_oauth_refresh_tokens SET used_at = $2 WHERE id = $1 AND used_at IS NULL AND expires_at > $2"
        " RETURNING id",
        refresh_id, at)
    return used is not None


async def prune_refresh_tokens(tx: UnitOfWork, token_id: int, expired_before: datetime) -> None:
    """A connection's refresh tokens past their life: kept until then only to catch a used one presented again."""
    await tx.execute("DELETE FROM mcp_oauth_refresh_tokens WHERE token_id = $1 AND expires_at < $2",
                     token_id, expired_before)


async def drop_refresh_tokens(tx: UnitOfWork, token_id: int) -> None:
    """A revoked connection's refresh tokens: nothing is left for them to catch."""
    await tx.execute("DELETE FROM mcp_oauth_refresh_tokens WHERE token_id = $1", token_id)
