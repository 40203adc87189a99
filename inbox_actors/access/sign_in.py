"""Signing in to the web app with an email and a password, and signing out: what the sign-in page calls.

A success is a dashboard session (`sessions.create_session`), the same credential `inbox-actors session create`
issues. Every refusal is a value (`SignInRefusal`), never an exception: its status, a stable code and a sentence
the page can show as it is.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from inbox_actors.access import passwords
from inbox_actors.access.rate_bucket import AddressAdmission
from inbox_actors.access.sessions import SessionError, create_session, has_session_shape
from inbox_actors.domain.api_keys import hash_key
from persistence.database import Database, Record, UnitOfWork
from persistence.queries import sessions as session_queries
from persistence.queries import sign_in as sign_in_queries

# A working day: signing in each morning is expected, and a session left on a shared machine ends by the evening.
WEB_SESSION_HOURS = 12
# Attempts per sliding minute, counted before any password is checked (a check costs ~0.2 s of CPU, so the limits
# also keep guessing from taking the service's CPU). Per client address: an office behind one NAT whose people
# mistype now and then stays far below it, while one machine trying a password against many accounts is held to
# 20 a minute.
SIGN_IN_ATTEMPTS_PER_IP = 20
# Per account (the email, whether or not it is a member's), from any address: guessing one person's password from
# many machines still gets 5 tries a minute. Someone else's guessing slows the owner for at most a minute, never
# locks them out.
SIGN_IN_ATTEMPTS_PER_ACCOUNT = 5
# The rate buckets' keys; their own namespaces keep sign-in attempts out of the API's per-address ceiling.
IP_BUCKET_PREFIX = "sign-in-ip:"
ACCOUNT_BUCKET_PREFIX = "sign-in-account:"
MAX_EMAIL_LENGTH = 320


class SignedIn(msgspec.Struct, frozen=True):
    token: str                 # `session_…`, shown this once: only its SHA-256 is stored
    expires_at: datetime
    member_id: int
    workspace_id: int


class SignInRefusal(msgspec.Struct, frozen=True):
    status: int                # 400 bad input, 401 wrong credentials, 403 member inactive, 404 unusable link,
                               # 429 too many attempts
    code: str                  # wrong_credentials, member_inactive, too_many_attempts, invalid_input,
                               # invite_invalid, weak_password
    message: str
    retry_after_seconds: int | None = None


WRONG_CREDENTIALS = SignInRefusal(
    401, "wrong_credentials",
    "That email and password do not match an account. Check both and try again, or ask your admin for a new "
    "sign-in link.")
SUSPENDED = SignInRefusal(403, "member_inactive", "Your account is suspended. Ask your admin to reactivate it.")
REMOVED = SignInRefusal(403, "member_inactive",
                        "You were removed from this workspace. Ask its admin to add you again.")


async def sign_in(db: Database, addresses: AddressAdmission, *, email: str, password: str, ip: str,
                  now: datetime) -> SignedIn | SignInRefusal:
    """`ip` is the address the client's attempts are counted against: the HTTP front's per-IP bucket address
    (an IPv6 client by its /64, as the guard counts API calls), so walking through addresses gains nothing."""
    email = email.strip()
    bad_input = _bad_input(email, password)
    if bad_input is not None:
        return bad_input
    email = email.lower()
    limited = await _over_limit(addresses, ip, email)
    if limited is not None:
        return limited

    members = await sign_in_queries.members_for_email(db, email)
    if not members:
        await passwords.verify_in_thread(None, password)  # as long as a known email's check
        return WRONG_CREDENTIALS
    inactive: SignInRefusal | None = None
    for member in members:
        if not await passwords.verify_in_thread(member["password_hash"], password):
            continue
        if member["status"] != "active":
            # A person active in another workspace with the same password signs in there; only if none is do
            # they hear that this account is blocked (the password was right, so saying so gives nothing away).
            inactive = inactive or (SUSPENDED if member["status"] == "suspended" else REMOVED)
            continue
        if passwords.needs_rehash(member["password_hash"]):
            await sign_in_queries.set_password_hash(db, member["id"], await passwords.hash_in_thread(password), now)
        return await open_session(db, member_id=member["id"], workspace_id=member["workspace_id"])
    return inactive or WRONG_CREDENTIALS


async def sign_out(db: Database, token: str, now: datetime) -> None:
    """End the session behind `token` for good, whoever holds a copy; a token already signed out, expired or
    unknown is no error (signing out twice is still signed out)."""
    if has_session_shape(token):
        await session_queries.revoke_session(db, hash_key(token), now)


async def open_session(db: Database, *, member_id: int, workspace_id: int) -> SignedIn | SignInRefusal:
    """A web session for a member whose password was just proven (by signing in or by setting it)."""
    try:
        token, expires_at = await create_session(db, member_id=member_id, hours=WEB_SESSION_HOURS)
    except SessionError:  # suspended or removed since the password was checked
        return SUSPENDED
    return SignedIn(token=token, expires_at=expires_at, member_id=member_id, workspace_id=workspace_id)


def _bad_input(email: str, password: str) -> SignInRefusal | None:
    if not email or len(email) > MAX_EMAIL_LENGTH or "@" not in email:
        return SignInRefusal(400, "invalid_input", "Enter the email address your sign-in link was sent for.")
    if not password:
        return SignInRefusal(400, "invalid_input", "Enter your password.")
    if len(password) > passwords.MAX_LENGTH:
        # No password can be this long, and checking it would cost more than a real one does.
        return SignInRefusal(400, "invalid_input", f"A password has at most {passwords.MAX_LENGTH} characters.")
    return None


async def _over_limit(addresses: AddressAdmission, ip: str, email: str) -> SignInRefusal | None:
    """Count the attempt against its address, then its account; the refusal of the first bucket that is full."""
    for bucket, limit in ((IP_BUCKET_PREFIX + ip, SIGN_IN_ATTEMPTS_PER_IP),
                          (ACCOUNT_BUCKET_PREFIX + email, SIGN_IN_ATTEMPTS_PER_ACCOUNT)):
        admission = await addresses.admit(bucket, limit)
        if not admission.allowed:
            wait = admission.retry_after_seconds
            return SignInRefusal(429, "too_many_attempts",
                                 f"Too many sign-in attempts. Wait {wait} second{'s' if wait != 1 else ''}, "
                                 "then try again.", retry_after_seconds=wait)
    return None


async def member_for_password(tx: UnitOfWork, member_id: int) -> Record | str:
    """The member a password or an invite link is for, or why they cannot have one: a sentence (no such member, a
    removed one, one without the email address they would sign in with)."""
    member = await sign_in_queries.find_member_for_sign_in(tx, member_id)
    if member is None:
        return f"no member {member_id}"
    if member["status"] == "removed":
        return f"member {member_id} was removed; a removed member cannot sign in"
    if member["email"] is None:
        return f"member {member_id} has no email address, which is what they sign in with; give them one first"
    return member
