"""Authorization codes of MCP's connection flow: what a member approved on the consent page, for one exchange.

The authorize step (the SDK's handler) checks the client and its redirect URI and hands the request to the web
app's consent page in the URL; the page checks it all again here (`check_request`), since anyone can write such a
URL. A member who may approves it with the actions the connection gets, among those the workspace exposes (the
use case `use_cases/mcp_settings.APPROVE_CONNECTION` states who may and reads what is exposed); the code is then
kept by its SHA-256 for 5 minutes, and works once. A code presented after its use revokes the connection its first
use opened (RFC 6749 4.1.2: one of the two holders was not the client); `oauth_connections` does that, and the
exchange.
"""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timedelta

import msgspec

from inbox_actors.mcp import oauth_clients
from inbox_actors.mcp.tokens import hash_token
from persistence.database import Database
from persistence.queries import mcp_oauth as queries

CODE_LIFETIME = timedelta(minutes=5)
CODE_PREFIX = "mcpcode"
MAX_STATE = 1024
# RFC 7636 4.2: BASE64URL(SHA256(verifier)) without padding is always 43 characters.
_S256_CHALLENGE = re.compile(r"^[A-Za-z0-9_-]{43}$")


class ConnectionRequest(msgspec.Struct, frozen=True):
    """An authorization request as the authorize step passed it on to the consent page."""

    client_id: str
    redirect_uri: str
    redirect_uri_explicit: bool
    code_challenge: str
    state: str | None
    resource: str


class RequestProblem(msgspec.Struct, frozen=True):
    """Why a request cannot go on: `error` is RFC 6749's (or RFC 8707's invalid_target); `redirectable` when the
    client and its redirect URI are known good, so the client may be told there rather than the person here."""

    error: str
    description: str
    redirectable: bool


class CodeGrant(msgspec.Struct, frozen=True):
    """An issued code as its exchange reads it."""

    id: int
    client_id: str
    workspace_id: int
    member_id: int
    approved_via: str
    code_challenge: str
    redirect_uri: str
    redirect_uri_explicit: bool
    resource: str
    actions: tuple[str, ...]
    expires_at: datetime


class UsedCode(msgspec.Struct, frozen=True):
    """A code presented after its use; `token_id`: the connection its use opened (None if that failed)."""

    token_id: int | None


def request_problem(request: ConnectionRequest, resource: str) -> RequestProblem | None:
    """The checks that need no lookup: PKCE's challenge, the state's size, and that the token is for this
    service's MCP endpoint (RFC 8707: `resource` left out means it)."""
    if _S256_CHALLENGE.fullmatch(request.code_challenge) is None:
        return RequestProblem("invalid_request", "code_challenge must be an S256 challenge (43 base64url "
                                                 "characters)", True)
    if request.state is not None and len(request.state) > MAX_STATE:
        return RequestProblem("invalid_request", f"state is longer than {MAX_STATE} characters", True)
    if request.resource.rstrip("/") != resource:
        return RequestProblem("invalid_target", f"this server issues tokens for {resource} only", True)
    return None


async def check_request(db: Database, request: ConnectionRequest, resource: str
                        ) -> tuple[oauth_clients.RegisteredClient | None, RequestProblem | None]:
    """The client and nothing wrong, or what is wrong (the client too when it is known and the redirect URI is
    one it registered)."""
    client = await oauth_clients.find_client(db, request.client_id)
    if client is None:
        return None, RequestProblem("invalid_request", "this application is not registered here", False)
    if request.redirect_uri not in client.redirect_uris:
        return None, RequestProblem("invalid_request", "the redirect URI is not one this application registered",
                                    False)
    return client, request_problem(request, resource)


class ApprovalRefused(ValueError):
    """The approval cannot be given (an action not offered, none chosen)."""


async def issue_code(db: Database, request: ConnectionRequest, *, workspace_id: int, member_id: int,
                     approved_via: str, offered: set[str], actions: list[str], now: datetime) -> str:
    """A code for what the member approved (checked: `check_request` first, and that the member may approve);
    its plaintext, to send to the client. `offered`: the actions the workspace exposes to assistants."""
    chosen = list(dict.fromkeys(actions))
    if not chosen:
        raise ApprovalRefused("Choose at least one action for the assistant.")
    unknown = [name for name in chosen if name not in offered]
    if unknown:
        raise ApprovalRefused(f"Not offered to assistants in this workspace: {', '.join(unknown)}.")
    code = f"{CODE_PREFIX}_{secrets.token_urlsafe(32)}"
    # Codes live minutes; the expired ones go as new ones are made, so no timer is needed for them.
    await queries.prune_codes(db, now - CODE_LIFETIME)
    await queries.insert_code(db, code_hash=hash_token(code), client_id=request.client_id,
                              workspace_id=workspace_id, member_id=member_id,
                              approved_via=approved_via, code_challenge=request.code_challenge,
                              redirect_uri=request.redirect_uri, redirect_uri_explicit=request.redirect_uri_explicit,
                              resource=request.resource.rstrip("/"), actions=chosen, expires_at=now + CODE_LIFETIME)
    return code


async def burn_code(db: Database, code: str) -> bool:
    """A code a token request failed with (a wrong `code_verifier`, another redirect URI, another client) is used
    up: whoever holds it may have guessed at it, so it opens nothing, and the client starts again. Whether an
    unused code was burnt."""
    if not code.startswith(f"{CODE_PREFIX}_") or len(code) > 100:
        return False
    return await queries.burn_code(db, hash_token(code))


async def find_code(db: Database, code: str) -> CodeGrant | UsedCode | None:
    """The code if unused (expired or not: the exchange says which), `UsedCode` if used already, None if unknown."""
    if not code.startswith(f"{CODE_PREFIX}_") or len(code) > 100:
        return None
    row = await queries.find_code(db, hash_token(code))
    if row is None:
        return None
    if row["used_at"] is not None:
        return UsedCode(row["token_id"])
    return CodeGrant(id=row["id"], client_id=row["client_id"], workspace_id=row["workspace_id"],
                     member_id=row["member_id"], approved_via=row["approved_via"],
                     code_challenge=row["code_challenge"], redirect_uri=row["redirect_uri"],
                     redirect_uri_explicit=row["redirect_uri_explicit"], resource=row["resource"],
                     actions=tuple(row["actions"]), expires_at=row["expires_at"])
