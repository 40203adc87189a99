"""Workspaces, members and keys as the operator sets them up (the `inbox-actors` CLI, the demo seed).

These are operator actions, not API calls: no plan rule limits them (the CLI can give a Starter workspace a
key, as after a downgrade); the HTTP key-management calls apply the plan and admin rules on top.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta, timezone

import msgspec

from inbox_actors.access import passwords
from inbox_actors.access.key_ring import IssuedKey, issue_key
from inbox_actors.access.sign_in import member_for_password
from inbox_actors.domain import key_rules, team_audit
from inbox_actors.domain import scopes as scope_rules
from inbox_actors.domain.errors import OperatorError
from inbox_actors.domain.plans import Plan
from persistence.database import Database
from persistence.queries import sessions as session_queries
from persistence.queries import sign_in as sign_in_queries
from persistence.queries import team_audit as audit_queries
from persistence.queries import workspaces as workspace_queries

ROLES = ("admin", "agent")
MEMBER_STATUSES = ("active", "suspended", "removed")


class AccountError(OperatorError):
    """An operator request that cannot be carried out; the message says why. Nothing was written."""


class CreatedWorkspace(msgspec.Struct, frozen=True):
    workspace_id: int
    phone_number_id: str


class PlanChange(msgspec.Struct, frozen=True):
    workspace_id: int
    plan: str


async def create_workspace(db: Database, *, name: str, plan: str,
                           phone_number_id: str | None = None) -> CreatedWorkspace:
    name = _required_text("workspace name", name)
    plan_value = _plan(plan)
    async with db.transaction() as tx:
        if phone_number_id is not None:
            phone_number_id = _required_text("phone number id", phone_number_id)
            if await workspace_queries.phone_number_id_taken(tx, phone_number_id):
                raise AccountError(f"phone number id {phone_number_id} belongs to another workspace")
        else:
            phone_number_id = await _unused_phone_number_id(tx)
        row = await workspace_queries.insert_workspace(tx, name=name, plan=plan_value.value,
                                                       phone_number_id=phone_number_id)
    return CreatedWorkspace(workspace_id=row["id"], phone_number_id=row["phone_number_id"])


async def set_plan(db: Database, *, workspace_id: int, plan: str) -> PlanChange:
    plan_value = _plan(plan)
    async with db.transaction() as tx:
        row = await workspace_queries.update_plan(tx, workspace_id, plan_value.value)
    if row is None:
        raise AccountError(f"no workspace {workspace_id}")
    return PlanChange(workspace_id=row["id"], plan=row["plan"])


async def set_cloud_api(db: Database, *, workspace_id: int, enabled: bool) -> dict:
    """Switch sending through the cloud API on or off (off: sends are refused 403 feature_disabled_for_org)."""
    async with db.transaction() as tx:
        row = await workspace_queries.set_cloud_api(tx, workspace_id, enabled)
    if row is None:
        raise AccountError(f"no workspace {workspace_id}")
    return {"workspace_id": row["id"], "cloud_api_enabled": row["cloud_api_enabled"]}


async def add_member(
    db: Database, *, workspace_id: int, name: str, role: str, email: str | None = None,
    assigned_only: bool = False, permissions: list[str] | None = None,
) -> int:
    name = _required_text("member name", name)
    if role not in ROLES:
        raise AccountError(f"role must be one of {', '.join(ROLES)}")
    if email is not None and ("@" not in email or len(email) > 320):
        raise AccountError(f"not an email address: {email!r}")
    if permissions is None:
        granted = [scope_rules.ALL] if role == "admin" else list(scope_rules.AGENT_PERMISSIONS)
    else:
        granted = list(_scopes(permissions))
    async with db.transaction() as tx:
        if await workspace_queries.find_workspace(tx, workspace_id) is None:
            raise AccountError(f"no workspace {workspace_id}")
        if email is not None and await workspace_queries.email_taken(tx, workspace_id, email):
            raise AccountError(f"a member with email {email} already exists in workspace {workspace_id}")
        row = await workspace_queries.insert_member(
            tx, workspace_id=workspace_id, name=name, email=email, role=role,
            permissions=granted, assigned_only=assigned_only,
        )
    return row["id"]


async def set_member_status(db: Database, *, member_id: int, status: str) -> None:
    """Removing a member also signs out their dashboard sessions for good, so re-adding them later does not
    bring old sessions back. A suspension only blocks them (answered account_suspended) until lifted."""
    if status not in MEMBER_STATUSES:
        raise AccountError(f"status must be one of {', '.join(MEMBER_STATUSES)}")
    async with db.transaction() as tx:
        if await workspace_queries.update_member_status(tx, member_id, status) is None:
            raise AccountError(f"no member {member_id}")
        if status == "removed":
            await session_queries.revoke_member_sessions(tx, member_id, datetime.now(timezone.utc))


async def set_member_password(db: Database, *, member_id: int, password: str, now: datetime | None = None) -> None:
    """Set a member's password as the operator, who gives it to them some other way (a sign-in link is the usual
    way). Like a password set through a link, it ends the member's sessions: a password is often replaced because
    the old one may be known to someone else."""
    refused = passwords.check_new_password(password)
    if refused is not None:
        raise AccountError(refused)
    now = now or datetime.now(timezone.utc)
    password_hash = await passwords.hash_in_thread(password)
    async with db.transaction() as tx:
        member = await member_for_password(tx, member_id)
        if isinstance(member, str):
            raise AccountError(member)
        await sign_in_queries.set_password_hash(tx, member_id, password_hash, now)
        await session_queries.revoke_member_sessions(tx, member_id, now)


async def create_key(
    db: Database, *, workspace_id: int, member_id: int, name: str, scopes: list[str],
    expires_in_days: int | None = None, rate_limit_per_minute: int | None = None, now: datetime | None = None,
) -> IssuedKey:
    """Issue a key as the operator: no plan rule and no limit of 20 (those guard the HTTP calls)."""
    try:
        name = key_rules.key_name(name)
        granted = key_rules.key_scopes(scopes)
        key_rules.expiry_days(expires_in_days)
        key_rules.rate_limit(rate_limit_per_minute)
    except key_rules.KeyRuleError as err:
        raise AccountError(str(err)) from None
    now = now or datetime.now(timezone.utc)
    expires_at = now + timedelta(days=expires_in_days) if expires_in_days is not None else None
    async with db.transaction() as tx:
        member = await workspace_queries.find_member(tx, member_id)
        if member is None or member["workspace_id"] != workspace_id:
            raise AccountError(f"no member {member_id} in workspace {workspace_id}")
        if member["status"] != "active":
            raise AccountError(f"member {member_id} is {member['status']}; only an active member can own a key")
        issued = await issue_key(tx, now, workspace_id=workspace_id, created_by=member_id, name=name,
                                 scopes=list(granted), expires_at=expires_at, rate_limit=rate_limit_per_minute)
        await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=None, via=team_audit.OPERATOR,
                                   action=team_audit.KEY_CREATED, subject=team_audit.key_subject(issued.id),
                                   details={"name": name, "scopes": list(granted), "owner": member_id})
        return issued


def _plan(plan: str) -> Plan:
    try:
        return Plan(plan)
    except ValueError:
        raise AccountError(f"plan must be one of {', '.join(p.value for p in Plan)}") from None


def _scopes(raw: list[str]) -> tuple[str, ...]:
    try:
        return scope_rules.parse_scopes(raw)
    except scope_rules.InvalidScopes as err:
        raise AccountError(str(err)) from None


def _required_text(what: str, value: str) -> str:
    value = value.strip()
    if not 1 <= len(value) <= 200:
        raise AccountError(f"{what} must be 1 to 200 characters")
    return value


async def _unused_phone_number_id(tx) -> str:
    """A platform-style numeric phone number id for a workspace that was not given one."""
    while True:
        candidate = str(10**14 + secrets.randbelow(9 * 10**14))
        if not await workspace_queries.phone_number_id_taken(tx, candidate):
            return candidate
