"""One-time links that let a member set their password (their first, or a new one) and sign in with it.

A link is `/app/invite/invite_` followed by 43 URL-safe characters (256 random bits); only the token's SHA-256 is
stored, so the link is shown once, to whoever issued it. It works once, until it expires, and only while it is the
member's latest: issuing another ends the earlier ones.
"""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timedelta

import msgspec

from inbox_actors.access import passwords
from inbox_actors.access.sign_in import SUSPENDED, SignedIn, SignInRefusal, member_for_password, open_session
from inbox_actors.domain.api_keys import hash_key
from inbox_actors.domain.errors import OperatorError
from persistence.database import Database, Record
from persistence.queries import sessions as session_queries
from persistence.queries import sign_in as sign_in_queries

INVITE_PREFIX = "invite"
INVITE_PATH = "/app/invite/"
INVITE_HOURS = (1, 720)
DEFAULT_INVITE_HOURS = 72
_SHAPE = re.compile(rf"^{INVITE_PREFIX}_[A-Za-z0-9_-]{{43}}$")

INVITE_INVALID = SignInRefusal(
    404, "invite_invalid",
    "This link no longer works: it was already used, it expired, or a newer one was sent. Ask your admin for a "
    "new link.")


class InviteError(OperatorError):
    """An invitation that cannot be issued; the message says why. Nothing was written."""


class Invite(msgspec.Struct, frozen=True):
    token: str                 # shown this once: only its SHA-256 is stored
    path: str                  # /app/invite/<token>, to put after the web app's address
    member_id: int
    workspace_id: int
    email: str
    expires_at: datetime


class InviteView(msgspec.Struct, frozen=True):
    """What the page behind a link shows before a password is chosen."""

    member_name: str
    email: str | None
    workspace_name: str
    expires_at: datetime
    usable: bool
    reason: str | None         # why the link cannot be used, as a sentence; None while it can


def has_invite_shape(token: str) -> bool:
    return _SHAPE.fullmatch(token) is not None


async def invite_member(db: Database, *, member_id: int, now: datetime, created_by: str,
                        hours: int = DEFAULT_INVITE_HOURS) -> Invite:
    """A new link for the member; their earlier unused links stop working."""
    if not INVITE_HOURS[0] <= hours <= INVITE_HOURS[1]:
        raise InviteError(f"an invitation lasts {INVITE_HOURS[0]} to {INVITE_HOURS[1]} hours")
    token = f"{INVITE_PREFIX}_{secrets.token_urlsafe(32)}"
    async with db.transaction() as tx:
        member = await member_for_password(tx, member_id)
        if isinstance(member, str):
            raise InviteError(member)
        # `hours` from now by PostgreSQL's clock, which judges the link's expiry too: no node's own clock moves it.
        expires_at = await sign_in_queries.insert_invite(tx, member_id=member_id, token_hash=hash_key(token),
                                                         lifetime=timedelta(hours=hours), created_by=created_by,
                                                         at=now)
    return Invite(token=token, path=f"{INVITE_PATH}{token}", member_id=member_id,
                  workspace_id=member["workspace_id"], email=member["email"], expires_at=expires_at)


async def invite_status(db: Database, token: str) -> InviteView | None:
    """The link's member and whether it can still be used (expiry by PostgreSQL's clock); None for a token that was
    never a link."""
    if not has_invite_shape(token):
        return None
    row = await sign_in_queries.find_invite(db, hash_key(token))
    if row is None:
        return None
    reason = _unusable(row)
    return InviteView(member_name=row["member_name"], email=row["email"], workspace_name=row["workspace_name"],
                      expires_at=row["expires_at"], usable=reason is None, reason=reason)


async def accept_invite(db: Database, *, token: str, password: str, now: datetime) -> SignedIn | SignInRefusal:
    """Set the member's password through the link, which then works no more, and sign them in. Setting it ends the
    member's other sessions: a new password is often chosen because the old one may be known to someone else."""
    weak = passwords.check_new_password(password)
    if weak is not None:
        return SignInRefusal(400, "weak_password", weak)
    if not has_invite_shape(token):
        return INVITE_INVALID
    # Hashed before the transaction, which then holds its connection for milliseconds rather than a hash's time.
    password_hash = await passwords.hash_in_thread(password)
    async with db.transaction() as tx:
        invite = await sign_in_queries.find_invite(tx, hash_key(token))
        if invite is None or invite["member_status"] == "removed":
            return INVITE_INVALID
        if invite["member_status"] == "suspended":
            return SUSPENDED  # the link is kept: it works once they are reactivated, if still unexpired
        if not await sign_in_queries.use_invite(tx, invite["id"], now):
            return INVITE_INVALID  # used, expired or replaced, perhaps a moment ago by a concurrent acceptance
        await sign_in_queries.set_password_hash(tx, invite["member_id"], password_hash, now)
        await session_queries.revoke_member_sessions(tx, invite["member_id"], now)
    return await open_session(db, member_id=invite["member_id"], workspace_id=invite["workspace_id"])


def _unusable(invite: Record) -> str | None:
    if invite["used_at"] is not None:
        return "This link was already used to set a password. Sign in with it, or ask your admin for a new link."
    if invite["member_status"] == "removed":
        return "This member was removed from the workspace."
    if invite["expired"]:
        return "This link expired, or a newer one was sent. Ask your admin for a new link."
    if invite["member_status"] == "suspended":
        return "This account is suspended. Ask your admin to reactivate it."
    return None
