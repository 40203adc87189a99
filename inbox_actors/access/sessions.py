"""Members' dashboard sessions: the web app's credential, which key management accepts besides admin keys.

A token is `session_` followed by 43 URL-safe characters (256 random bits); only its SHA-256 is stored.
A member gets one by signing in (`sign_in.py`, `invites.py`); the operator issues one with `inbox-actors session
create`.
"""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timedelta

import msgspec

from inbox_actors.domain.api_keys import hash_key
from inbox_actors.domain.errors import OperatorError
from inbox_actors.domain.plans import Plan
from persistence.database import Database
from persistence.queries import sessions as session_queries
from persistence.queries import workspaces as workspace_queries

SESSION_PREFIX = "session"
SESSION_HOURS = (1, 720)
_SHAPE = re.compile(rf"^{SESSION_PREFIX}_[A-Za-z0-9_-]{{43}}$")


class SessionError(OperatorError):
    """A session request that cannot be carried out; nothing was written."""


class Session(msgspec.Struct, frozen=True):
    member_id: int
    workspace_id: int
    member_name: str
    role: str
    permissions: tuple[str, ...]
    member_status: str
    plan: Plan
    assigned_only: bool = False
    cloud_api_enabled: bool = True
    time_zone: str | None = None
    """The IANA time zone the member's pages show times in (None: not known yet, UTC)."""


def has_session_shape(token: str) -> bool:
    return _SHAPE.fullmatch(token) is not None


async def create_session(db: Database, *, member_id: int, hours: int) -> tuple[str, datetime]:
    """A session lasting `hours` from now by PostgreSQL's clock: its token and when it expires."""
    if not SESSION_HOURS[0] <= hours <= SESSION_HOURS[1]:
        raise SessionError(f"a session lasts {SESSION_HOURS[0]} to {SESSION_HOURS[1]} hours")
    token = f"{SESSION_PREFIX}_{secrets.token_urlsafe(32)}"
    async with db.transaction() as tx:
        member = await workspace_queries.find_member(tx, member_id)
        if member is None:
            raise SessionError(f"no member {member_id}")
        if member["status"] != "active":
            raise SessionError(f"member {member_id} is {member['status']}")
        expires_at = await session_queries.insert_session(tx, token_hash=hash_key(token), member_id=member_id,
                                                          lifetime=timedelta(hours=hours))
    return token, expires_at


async def find_session(db: Database, token: str) -> Session | None:
    """The live session behind a token: None when unknown, signed out or expired (by PostgreSQL's clock, which
    every node shares, never the node's own)."""
    if not has_session_shape(token):
        return None
    row = await session_queries.find_session(db, hash_key(token))
    if row is None or row["revoked_at"] is not None or not row["live"]:
        return None
    return Session(member_id=row["member_id"], workspace_id=row["workspace_id"], member_name=row["member_name"],
                   role=row["role"], permissions=tuple(row["permissions"]), member_status=row["member_status"],
                   plan=Plan(row["plan"]), assigned_only=row["assigned_only"],
                   cloud_api_enabled=row["cloud_api_enabled"], time_zone=row["time_zone"])
