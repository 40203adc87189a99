"""A connection of MCP's OAuth flow: one MCP token, which is the access token, and its rotating refresh tokens.

The access token is an MCP token of the kind `tokens` makes (`mcp_…`, SHA-256 only, looked up on every call, its
member's permissions, refused once revoked), limited to the actions the approving member chose and valid for an
hour. A refresh replaces that token's hash and expiry rather than adding a token, so the workspace's token list
(`GET /api/mcp/tokens`) shows one row per connected client, and revoking that row ends the connection: its
refresh tokens stop working with it.

Refresh tokens live 30 days from their issue and are rotated: each use marks the one presented used and issues
the next. A used one presented again (the same token in two hands) revokes the connection, as a code presented
twice does (OAuth 2.1 4.3.1, RFC 6749 4.1.2). Creating a connection and revoking it are entries of the team audit
log like any token's (`mcp_token.created`, `mcp_token.revoked`); a refresh is not.
"""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timedelta

import msgspec

from inbox_actors.domain import team_audit
from inbox_actors.mcp import tokens
from inbox_actors.mcp.oauth_codes import CodeGrant
from persistence.database import Database
from persistence.queries import mcp_oauth as queries
from persistence.queries import team_audit as audit_queries
from persistence.queries import workspaces as workspace_queries

ACCESS_LIFETIME = timedelta(hours=1)
REFRESH_LIFETIME = timedelta(days=30)
REFRESH_PREFIX = "mcprefresh"
_NAME_SUFFIX = " (OAuth)"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


class Issued(msgspec.Struct, frozen=True):
    """What a token request answers: the plaintexts, shown this once."""

    token_id: int
    access_token: str
    refresh_token: str
    expires_in: int


class RefreshGrant(msgspec.Struct, frozen=True):
    id: int
    token_id: int
    client_id: str
    resource: str
    expires_at: datetime


class AccessGrant(msgspec.Struct, frozen=True):
    token_id: int
    client_id: str
    expires_at: datetime


class ExchangeRefused(ValueError):
    """The grant cannot be exchanged (RFC 6749's invalid_grant); the message says why."""


def connection_name(client_name: str) -> str:
    """The token's name in the list: the client's name for itself, on one line, marked as OAuth's."""
    name = " ".join(_CONTROL.sub(" ", client_name).split())[:tokens.MAX_NAME - len(_NAME_SUFFIX)]
    return tokens.token_name(f"{name or 'An unnamed application'}{_NAME_SUFFIX}")


async def open_connection(db: Database, grant: CodeGrant, *, client_name: str, now: datetime) -> Issued:
    """Uses the code (once: of two exchanges at once, one wins and the other revokes what it opened) and opens the
    connection: the MCP token acting as the member who approved, and the first refresh token."""
    access, refresh = tokens.generate_token(), _refresh_token()
    name = connection_name(client_name)
    async with db.transaction() as tx:
        used = await queries.use_code(tx, grant.id, now)
        if used:
            member = await workspace_queries.find_member(tx, grant.member_id)
            if member is None or member["workspace_id"] != grant.workspace_id or member["status"] != "active":
                raise ExchangeRefused("the member who approved this connection is no longer active")
            token_id = await queries.insert_connection_token(
                tx, workspace_id=grant.workspace_id, member_id=grant.member_id, name=name,
                token_hash=tokens.hash_token(access), expires_at=now + ACCESS_LIFETIME, actions=list(grant.actions),
                client_id=grant.client_id)
            await queries.insert_refresh_token(tx, token_hash=tokens.hash_token(refresh), token_id=token_id,
                                               client_id=grant.client_id, resource=grant.resource,
                                               expires_at=now + REFRESH_LIFETIME)
            await queries.code_opened(tx, grant.id, token_id)
            await audit_queries.record(tx, workspace_id=grant.workspace_id, at=now, member_id=grant.member_id,
                                       via=grant.approved_via, action=team_audit.MCP_TOKEN_CREATED,
                                       subject=team_audit.mcp_token_subject(token_id),
                                       details={"name": name, "acts_as": grant.member_id,
                                                "oauth_client": grant.client_id, "actions": list(grant.actions)})
        else:
            # Another exchange used it first (or it expired since the check); that one's connection, once it has
            # committed (the row lock above waited for it), is revoked below, outside this transaction.
            opened = await queries.code_connection(tx, grant.id)
    if not used:
        if opened is not None:
            await revoke(db, opened, now, via=f"oauth_client:{grant.client_id}", reason="code used twice")
        raise ExchangeRefused("authorization code was already used")
    return Issued(token_id=token_id, access_token=access, refresh_token=refresh,
                  expires_in=int(ACCESS_LIFETIME.total_seconds()))


async def code_used_twice(db: Database, token_id: int | None, client_id: str, now: datetime) -> None:
    """A code presented after its use: the connection it opened is revoked."""
    if token_id is not None:
        await revoke(db, token_id, now, via=f"oauth_client:{client_id}", reason="code used twice")


async def find_refresh(db: Database, plaintext: str, now: datetime) -> RefreshGrant | None:
    """The live refresh token (expired or not: the exchange says which), or None: unknown, its connection
    revoked, or used already, which revokes the connection."""
    if not plaintext.startswith(f"{REFRESH_PREFIX}_") or len(plaintext) > 100:
        return None
    row = await queries.find_refresh_token(db, tokens.hash_token(plaintext))
    if row is None or row["revoked_at"] is not None:
        return None
    if row["used_at"] is not None:
        await revoke(db, row["token_id"], now, via=f"oauth_client:{row['client_id']}",
                     reason="refresh token used twice")
        return None
    return RefreshGrant(id=row["id"], token_id=row["token_id"], client_id=row["client_id"],
                        resource=row["resource"], expires_at=row["expires_at"])


async def refresh(db: Database, grant: RefreshGrant, now: datetime) -> Issued:
    """Rotates: the refresh token presented is used up, the connection's access token replaced, a new refresh
    token issued. Refused once the connection is revoked or its member no longer active."""
    access, refresh_token = tokens.generate_token(), _refresh_token()
    async with db.transaction() as tx:
        used = await queries.use_refresh_token(tx, grant.id, now)
        if used:
            connection = await queries.find_connection(tx, grant.token_id)
            if connection is None or connection["revoked_at"] is not None:
                raise ExchangeRefused("this connection was revoked")
            if connection["member_status"] != "active":
                raise ExchangeRefused("the member this connection acts as is no longer active")
            if not await queries.rotate_access_token(tx, grant.token_id, tokens.hash_token(access),
                                                     now + ACCESS_LIFETIME):
                raise ExchangeRefused("this connection was revoked")
            await queries.insert_refresh_token(tx, token_hash=tokens.hash_token(refresh_token),
                                               token_id=grant.token_id, client_id=grant.client_id,
                                               resource=grant.resource, expires_at=now + REFRESH_LIFETIME)
            # Used ones are kept until they would have expired, to catch one presented again; then they go.
            await queries.prune_refresh_tokens(tx, grant.token_id, now)
    if not used:
        # Presented twice at once: the other use won, so this one is the second holder's.
        await revoke(db, grant.token_id, now, via=f"oauth_client:{grant.client_id}",
                     reason="refresh token used twice")
        raise ExchangeRefused("refresh token was already used")
    return Issued(token_id=grant.token_id, access_token=access, refresh_token=refresh_token,
                  expires_in=int(ACCESS_LIFETIME.total_seconds()))


async def find_access(db: Database, plaintext: str) -> AccessGrant | None:
    """The live connection whose current access token this is (for the revocation endpoint)."""
    if not plaintext.startswith(f"{tokens.TOKEN_PREFIX}_") or len(plaintext) > 100:
        return None
    row = await queries.find_connection_by_access(db, tokens.hash_token(plaintext))
    if row is None:
        return None
    return AccessGrant(token_id=row["id"], client_id=row["oauth_client_id"], expires_at=row["expires_at"])


async def revoke(db: Database, token_id: int, now: datetime, *, via: str, reason: str) -> None:
    """Ends the connection: its token revoked, its refresh tokens gone; recorded in the team audit log (again:
    nothing changes, nothing is recorded)."""
    async with db.transaction() as tx:
        row = await queries.revoke_connection(tx, token_id, now)
        if row is None:
            return
        await queries.drop_refresh_tokens(tx, token_id)
        await audit_queries.record(tx, workspace_id=row["workspace_id"], at=now, member_id=None, via=via,
                                   action=team_audit.MCP_TOKEN_REVOKED, subject=team_audit.mcp_token_subject(token_id),
                                   details={"name": row["name"], "acts_as": row["member_id"],
                                            "oauth_client": row["oauth_client_id"], "reason": reason})


def _refresh_token() -> str:
    return f"{REFRESH_PREFIX}_{secrets.token_urlsafe(32)}"
