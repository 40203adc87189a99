"""A workspace's API keys: create, edit, rotate and revoke, and reading them and a key's calls. The workspace's key
ring actor owns its keys (the 20-key cap and a rotation's grace are races it settles) and decides each change; its
refusals come back as `Refused`. Who may manage keys is key management's admin rule of the auth ladder
(`domain/auth_ladder.py`: *view* for admins and members with the settings permission, *manage* for admins), which
each declaration names instead of permissions.

The arguments are plain types: the key rules (`domain/key_rules.py`) judge them in the key ring, each answered
with its own code (`invalid_name`, `invalid_expiry`...); the schema states those rules for the contract.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType

from inbox_actors.access import key_reads, key_ring
from inbox_actors.domain import key_rules
from inbox_actors.domain import scopes as scope_rules
from inbox_actors.domain.auth_ladder import AdminRule
from inbox_actors.paging import cursors
from inbox_actors.paging.parameters import InvalidParameter
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused, reason_of_status
from inbox_actors.use_cases.use_case import Kind, UseCase

ACTIVITY_DAYS = (7, 30)
_ACTIVITY_CURSOR = "key_activity"


def _schema(**rules: Any) -> msgspec.Meta:
    """What the key rules enforce, stated for the contract; decoding is unchanged, so the key ring keeps its
    sentences."""
    return msgspec.Meta(extra_json_schema=rules)


Name = Annotated[str, _schema(minLength=1, maxLength=key_rules.MAX_NAME, pattern=key_rules.NAME_PATTERN)]
Scopes = Annotated[list[str], _schema(minItems=1, anyOf=[
    {"items": {"const": scope_rules.ALL}},
    {"items": {"enum": sorted(scope_rules.VALID_SCOPES - {scope_rules.ALL})}}])]
ExpiresInDays = Annotated[int, _schema(minimum=key_rules.EXPIRY_DAYS[0], maximum=key_rules.EXPIRY_DAYS[1])]
RateLimit = Annotated[int, _schema(minimum=key_rules.RATE_LIMIT[0], maximum=key_rules.RATE_LIMIT[1])]
# 0 too: the id a URL's digits beyond any row become (`IdConverter`), answered "no such key".
KeyId = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]


class NewKey(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: Name
    scopes: Scopes
    expires_in_days: ExpiresInDays | None = None
    rate_limit_per_minute: RateLimit | None = None


class KeyEdit(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    key_id: KeyId
    name: Name | UnsetType = UNSET
    expires_in_days: ExpiresInDays | None | UnsetType = UNSET
    """Days from now; None: never."""
    rate_limit_per_minute: RateLimit | None | UnsetType = UNSET
    """None: the default."""
    limits_exempt: bool | UnsetType = UNSET
    """A long-standing integration: exempt from the default per-key limit and the per-IP ceiling."""
    scopes: Annotated[Any, _schema(**{"description": "refused: scopes are fixed when a key is created",
                                      "not": {}})] = UNSET
    """Accepted only to be refused with a clear reason: scopes are fixed at creation."""


class KeyRotation(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    key_id: KeyId
    grace_hours: Annotated[int, _schema(minimum=0, maximum=key_rules.MAX_GRACE_HOURS)] = \
        key_rules.DEFAULT_GRACE_HOURS


class OneKey(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    key_id: KeyId


class KeyQuery(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    status: str | None = None
    """Only keys in this status (`key_rules.KEY_STATUSES`)."""


class ActivityQuery(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    key_id: KeyId
    query: dict[str, str] = {}
    """`days` (7 or 30), `limit` (1 to 200), `cursor`, as the query gives them."""


class KeyList(msgspec.Struct, frozen=True):
    data: list[key_ring.KeyView]


class ActivityItem(msgspec.Struct, frozen=True):
    method: str
    path: str
    status: int
    ip: str
    at: datetime


class ActivityPage(msgspec.Struct, frozen=True):
    key_id: int
    days: int
    data: list[ActivityItem]
    next_cursor: str | None


# -- writes --------------------------------------------------------------------------------------------------


async def _create(deps: UseCaseDeps, caller: Caller, a: NewKey) -> Outcome:
    """A new key acting as the caller's member; its plaintext is in this answer only."""
    return await _change(deps, caller, key_ring.CreateKey(
        created_by=caller.member_id, name=a.name, scopes=tuple(a.scopes), expires_in_days=a.expires_in_days,
        rate_limit_per_minute=a.rate_limit_per_minute, via=caller.author))


async def _edit(deps: UseCaseDeps, caller: Caller, a: KeyEdit) -> Outcome:
    if a.scopes is not UNSET:
        return Refused(Reason.INVALID, "Scopes are fixed when a key is created; create a new key instead.", 400,
                       "invalid_scopes")
    return await _change(deps, caller, key_ring.EditKey(
        key_id=a.key_id, name=a.name, expires_in_days=a.expires_in_days,
        rate_limit_per_minute=a.rate_limit_per_minute, limits_exempt=a.limits_exempt, by_member=caller.member_id,
        via=caller.author))


async def _rotate(deps: UseCaseDeps, caller: Caller, a: KeyRotation) -> Outcome:
    return await _change(deps, caller, key_ring.RotateKey(key_id=a.key_id, grace_hours=a.grace_hours,
                                                          by_member=caller.member_id, via=caller.author))


async def _revoke(deps: UseCaseDeps, caller: Caller, a: OneKey) -> Outcome:
    return await _change(deps, caller, key_ring.RevokeKey(key_id=a.key_id, by_member=caller.member_id,
                                                          via=caller.author))


async def _change(deps: UseCaseDeps, caller: Caller, request: object) -> Outcome:
    reply = await key_ring.change_keys(deps.actors, caller.workspace_id, request)
    if isinstance(reply, key_ring.KeyRefusal):
        return Refused(reason_of_status(reply.status), reply.message, reply.status, reply.error)
    return Done(reply)


# -- reads ---------------------------------------------------------------------------------------------------


def _no_such_key(key_id: int) -> Refused:
    return Refused(Reason.NOT_FOUND, f"No key {key_id} in this workspace.", 404, "not_found")


async def _list(deps: UseCaseDeps, caller: Caller, a: KeyQuery) -> Outcome:
    """Every key of the workspace, newest first (never a plaintext or a hash)."""
    if a.status is not None and a.status not in key_rules.KEY_STATUSES:
        return Refused(Reason.INVALID, f"status must be one of {', '.join(key_rules.KEY_STATUSES)}.", 400,
                       "invalid_status")
    keys = await key_reads.list_keys(deps.db, caller.workspace_id, deps.clock.now())
    return Done(KeyList(data=[key for key in keys if a.status is None or key.status == a.status]))


async def _show(deps: UseCaseDeps, caller: Caller, a: OneKey) -> Outcome:
    key = await key_reads.find_key(deps.db, caller.workspace_id, a.key_id, deps.clock.now())
    return _no_such_key(a.key_id) if key is None else Done(key)


async def _activity(deps: UseCaseDeps, caller: Caller, a: ActivityQuery) -> Outcome:
    """Calls made with the key, newest first, over the last 7 or 30 days."""
    days = _whole(a.query, "days", 7, "invalid_days")
    if days not in ACTIVITY_DAYS:
        raise InvalidParameter("invalid_days", "days must be 7 or 30.")
    limit = _whole(a.query, "limit", 100, "invalid_limit")
    if not 1 <= limit <= 200:
        raise InvalidParameter("invalid_limit", "limit must be 1 to 200.")
    position = cursors.decode(a.query, _ACTIVITY_CURSOR, int)
    calls = await key_reads.key_activity(deps.db, caller.workspace_id, a.key_id,
                                         since=deps.clock.now() - timedelta(days=days),
                                         before_id=position[0] if position else None, limit=limit + 1)
    if calls is None:
        return _no_such_key(a.key_id)
    page = calls[:limit]
    next_cursor = cursors.encode(_ACTIVITY_CURSOR, a.query, page[-1].id) if len(calls) > limit else None
    return Done(ActivityPage(
        key_id=a.key_id, days=days, next_cursor=next_cursor,
        data=[ActivityItem(method=c.method, path=c.path, status=c.status, ip=c.ip, at=c.at) for c in page]))


def _whole(query: dict[str, str], name: str, default: int, code: str) -> int:
    raw = query.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise InvalidParameter(code, f"{name} must be a whole number.") from None


# -- the declarations ----------------------------------------------------------------------------------------

CREATE = UseCase("create_key", NewKey, (), Kind.WRITE, _create, admin=AdminRule.MANAGE)
EDIT = UseCase("edit_key", KeyEdit, (), Kind.WRITE, _edit, admin=AdminRule.MANAGE)
ROTATE = UseCase("rotate_key", KeyRotation, (), Kind.WRITE, _rotate, admin=AdminRule.MANAGE)
REVOKE = UseCase("revoke_key", OneKey, (), Kind.WRITE, _revoke, admin=AdminRule.MANAGE)
LIST = UseCase("list_keys", KeyQuery, (), Kind.READ, _list, admin=AdminRule.VIEW)
SHOW = UseCase("get_key", OneKey, (), Kind.READ, _show, admin=AdminRule.VIEW)
ACTIVITY = UseCase("key_activity", ActivityQuery, (), Kind.READ, _activity, admin=AdminRule.VIEW)
