"""MCP bearer tokens: `mcp_<43 url-safe characters>` (256 random bits), shown once, kept as SHA-256 only.

A token is not an API key: it opens `POST /api/mcp` alone, and an API key sent there is an invalid token (the
two never share a lookup). It acts as the member it was made for, with that member's permissions as they are at
each call; a suspended or removed member's token is refused, as their keys are. MCP is part of the full API
(the spec's plan table lists it in no plan's core API), so only Scale workspaces use it: Starter is refused
api_not_in_plan and Growth api_access_not_enabled, as the auth ladder words them for keys.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime, timezone

import msgspec

from inbox_actors.domain import team_audit
from inbox_actors.domain.auth_ladder import Refusal
from inbox_actors.domain.plans import ApiTier, Plan
from persistence.database import Database, Record
from persistence.queries import mcp as queries
from persistence.queries import team_audit as audit_queries
from persistence.queries import workspaces as workspace_queries

TOKEN_PREFIX = "mcp"
MAX_NAME = 100
_SHAPE = re.compile(rf"^{TOKEN_PREFIX}_[A-Za-z0-9_-]{{43}}$")
NAME_PATTERN = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f\x85][^\x00-\x1f\x7f]*$"
_NAME = re.compile(NAME_PATTERN)


class TokenError(ValueError):
    """A token request that cannot be carried out (a bad name, a member who cannot own one); nothing written."""


class TokenView(msgspec.Struct, frozen=True):
    """A token as lists show it: never its plaintext or hash."""

    id: int
    name: str
    member_id: int
    member_name: str
    status: str  # active or revoked
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None


class IssuedToken(msgspec.Struct, frozen=True):
    """A new token; `token` is its plaintext, in this answer only."""

    id: int
    name: str
    member_id: int
    token: str
    created_at: datetime


def generate_token() -> str:
    return f"{TOKEN_PREFIX}_{secrets.token_urlsafe(32)}"


def has_token_shape(plaintext: str) -> bool:
    return _SHAPE.fullmatch(plaintext) is not None


def hash_token(plaintext: str) -> bytes:
    return hashlib.sha256(plaintext.encode("utf-8")).digest()


def token_name(raw: str) -> str:
    name = raw.strip()
    if not name or len(name) > MAX_NAME or _NAME.fullmatch(name) is None:
        raise TokenError(f"name must be 1 to {MAX_NAME} characters of text on one line")
    return name


class TokenHolder(msgspec.Struct, frozen=True):
    """Who a live token acts as (its member, as the token's caller is made of them: `Caller.of_mcp_token`), and
    which of the workspace's exposed actions it may use (None: all of them; a token of the OAuth connection flow
    has the ones the approving member chose)."""

    token_id: int
    token_name: str
    workspace_id: int
    member_id: int
    role: str
    permissions: tuple[str, ...]
    status: str
    assigned_only: bool
    plan: Plan
    cloud_api_enabled: bool
    actions: frozenset[str] | None


async def find_holder(db: Database, plaintext: str, now: datetime) -> TokenHolder | None:
    """Who is behind a live token (its last use recorded), or None: unknown, revoked, expired, or not
    token-shaped (an API key is not, so it is never looked up)."""
    if not has_token_shape(plaintext):
        return None
    row = await queries.find_caller(db, hash_token(plaintext), now)
    if row is None:
        return None
    await queries.touch_token(db, row["token_id"], now)
    return TokenHolder(token_id=row["token_id"], token_name=row["token_name"], workspace_id=row["workspace_id"],
                       member_id=row["member_id"], role=row["role"], permissions=tuple(row["permissions"]),
                       status=row["status"], assigned_only=row["assigned_only"], plan=Plan(row["plan"]),
                       cloud_api_enabled=row["cloud_api_enabled"],
                       actions=None if row["actions"] is None else frozenset(row["actions"]))


def plan_refusal(plan: Plan) -> Refusal | None:
    """None on Scale; the auth ladder's refusal for a plan without MCP."""
    tier = plan.api_tier
    if tier is ApiTier.NONE:
        return Refusal(403, "api_not_in_plan", "The Starter plan has no API access, MCP included; upgrade to Scale "
                                               "to connect an assistant.")
    if tier is not ApiTier.FULL:
        return Refusal(403, "api_access_not_enabled", "MCP is part of the full API, which needs the Scale plan.")
    return None


def holder_refusal(holder: TokenHolder) -> Refusal | None:
    """After the token was found: the plan, then its member's standing."""
    refusal = plan_refusal(holder.plan)
    if refusal is not None:
        return refusal
    if holder.status == "suspended":
        return Refusal(403, "account_suspended", "The member this MCP token acts as is suspended. Contact your admin.")
    if holder.status == "removed":
        return Refusal(403, "membership_revoked", "The member this MCP token acts as was removed from the workspace.")
    return None


async def create_token(db: Database, *, workspace_id: int, member_id: int, name: str, by_member: int | None = None,
                       via: str = team_audit.OPERATOR, now: datetime | None = None) -> IssuedToken:
    """A token for an active member of the workspace (the HTTP settings call and the operator's CLI), recorded in
    the team audit log as done by `by_member` `via` ("api_key:<id>", "member:<id>"; the CLI: the operator)."""
    name = token_name(name)
    now = now or datetime.now(timezone.utc)
    plaintext = generate_token()
    async with db.transaction() as tx:
        member = await workspace_queries.find_member(tx, member_id)
        if member is None or member["workspace_id"] != workspace_id:
            raise TokenError(f"no member {member_id} in workspace {workspace_id}")
        if member["status"] != "active":
            raise TokenError(f"member {member_id} is {member['status']}; only an active member can own a token")
        row = await queries.insert_token(tx, workspace_id=workspace_id, member_id=member_id, name=name,
                                         token_hash=hash_token(plaintext))
        await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=by_member,
                                   via=via, action=team_audit.MCP_TOKEN_CREATED,
                                   subject=team_audit.mcp_token_subject(row["id"]),
                                   details={"name": name, "acts_as": member_id})
    return IssuedToken(id=row["id"], name=row["name"], member_id=member_id, token=plaintext,
                       created_at=row["created_at"])


async def list_tokens(db: Database, workspace_id: int) -> list[TokenView]:
    return [_view(row) for row in await queries.list_tokens(db, workspace_id)]


async def revoke_token(db: Database, workspace_id: int, token_id: int, now: datetime, *,
                       by_member: int | None = None, via: str = team_audit.OPERATOR) -> TokenView | None:
    """Revoke at once (again: no change, nothing recorded); None when the workspace has no such token."""
    async with db.transaction() as tx:
        row, revoked = await queries.revoke_token(tx, workspace_id, token_id, now)
        if revoked:
            await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=by_member,
                                       via=via, action=team_audit.MCP_TOKEN_REVOKED,
                                       subject=team_audit.mcp_token_subject(token_id),
                                       details={"name": row["name"], "acts_as": row["member_id"]})
    return None if row is None else _view(row)


def _view(row: Record) -> TokenView:
    return TokenView(id=row["id"], name=row["name"], member_id=row["member_id"], member_name=row["member_name"],
                     status="revoked" if row["revoked_at"] is not None else "active", created_at=row["created_at"],
                     revoked_at=row["revoked_at"], last_used_at=row["last_used_at"])
