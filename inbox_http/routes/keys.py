"""Key management, `/api/keys`: create, list, edit, rotate, revoke, activity.

Who may: an admin's dashboard session, or a full-access key (scope `all`) an admin created; listing and
activity also members with the settings permission. Writes go to the workspace's key ring actor; reads go to
PostgreSQL.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any

import msgspec
from quart import Blueprint, request

from inbox_actors.access import key_reads, key_ring
from inbox_actors.domain import key_rules, scopes
from inbox_actors.domain.auth_ladder import AdminRule
from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging import cursors
from inbox_actors.paging.parameter_catalog import QueryParameter
from inbox_actors.use_cases import keys as key_actions
from inbox_http.contract import answers, rule, takes
from inbox_http.dependencies import dependencies
from inbox_http.encoding import json_response
from inbox_http.errors import ApiError
from inbox_http.guard import accepts, current_caller, guarded, responds
from inbox_http.json_body import read_json_body
from inbox_http.outcome_answers import answer

blueprint = Blueprint("keys", __name__, url_prefix="/api/keys")

ACTIVITY_DAYS = (7, 30)
_ACTIVITY_CURSOR = "key_activity"
KEY_LIST_PARAMETERS = (QueryParameter("status", "string", "only keys in this status", key_rules.KEY_STATUSES),)
ACTIVITY_PARAMETERS = (
    QueryParameter("days", "integer", "the last 7 (default) or 30 days", rules={"enum": list(ACTIVITY_DAYS)}),
    QueryParameter("limit", "integer", "1 to 200, default 100", rules={"minimum": 1, "maximum": 200}),
    QueryParameter("cursor", "string", "the previous page's next_cursor (opaque: any other text is invalid_cursor)",
                   rules={"minLength": 1}),
)


# Decoded as plain types; `rule` describes what inbox_actors.domain.key_rules then enforces (400 invalid_*).
_Name = Annotated[str, rule(min_length=1, max_length=key_rules.MAX_NAME, pattern=key_rules.NAME_PATTERN)]
_Scopes = Annotated[list[str], rule(min_items=1, any_of=[
    {"items": {"const": scopes.ALL}},
    {"items": {"enum": sorted(scopes.VALID_SCOPES - {scopes.ALL})}}])]
_ExpiresInDays = Annotated[int, rule(minimum=key_rules.EXPIRY_DAYS[0], maximum=key_rules.EXPIRY_DAYS[1])]
_RateLimit = Annotated[int, rule(minimum=key_rules.RATE_LIMIT[0], maximum=key_rules.RATE_LIMIT[1])]


class CreateKeyBody(msgspec.Struct, forbid_unknown_fields=True):
    name: _Name
    scopes: _Scopes
    expires_in_days: _ExpiresInDays | None = None
    rate_limit_per_minute: _RateLimit | None = None


class EditKeyBody(msgspec.Struct, forbid_unknown_fields=True):
    name: _Name | msgspec.UnsetType = msgspec.UNSET
    expires_in_days: _ExpiresInDays | None | msgspec.UnsetType = msgspec.UNSET
    rate_limit_per_minute: _RateLimit | None | msgspec.UnsetType = msgspec.UNSET
    # A long-standing integration: exempt from the default per-key limit and the per-IP ceiling.
    limits_exempt: bool | msgspec.UnsetType = msgspec.UNSET
    # Accepted only to be refused with a clear reason: scopes are fixed at creation.
    scopes: Annotated[Any, rule(description="refused: scopes are fixed when a key is created",
                                not_={})] = msgspec.UNSET


class RotateKeyBody(msgspec.Struct, forbid_unknown_fields=True):
    grace_hours: Annotated[int, rule(minimum=0, maximum=key_rules.MAX_GRACE_HOURS)] = key_rules.DEFAULT_GRACE_HOURS


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


@blueprint.post("")
@responds(key_ring.IssuedKey, 201)
@guarded(tier=ApiTier.FULL, admin=AdminRule.MANAGE)
@takes(CreateKeyBody)
@answers(409)
async def create_key():
    """Create a key; its plaintext is in this answer only."""
    body = await read_json_body(CreateKeyBody)
    return answer(await key_actions.create(dependencies().use_case_deps, current_caller(), name=body.name,
                                           scopes=tuple(body.scopes), expires_in_days=body.expires_in_days,
                                           rate_limit_per_minute=body.rate_limit_per_minute), 201)


@blueprint.get("")
@responds(KeyList)
@guarded(tier=ApiTier.FULL, admin=AdminRule.VIEW)
@accepts(KEY_LIST_PARAMETERS)
async def list_keys():
    """Every key of the workspace, newest first (never a plaintext or a hash)."""
    state = dependencies()
    keys = await key_reads.list_keys(state.db, current_caller().workspace_id, state.clock.now())
    wanted = request.args.get("status")
    if wanted is not None and wanted not in key_rules.KEY_STATUSES:
        raise ApiError(400, "invalid_status", f"status must be one of {', '.join(key_rules.KEY_STATUSES)}.")
    if wanted is not None:
        keys = [k for k in keys if k.status == wanted]
    return json_response(KeyList(data=keys))


@blueprint.get("/<id:key_id>")
@responds(key_ring.KeyView)
@guarded(tier=ApiTier.FULL, admin=AdminRule.VIEW)
@answers(404)
async def show_key(key_id: int):
    """One key."""
    state = dependencies()
    key = await key_reads.find_key(state.db, current_caller().workspace_id, key_id, state.clock.now())
    if key is None:
        raise ApiError(404, "not_found", f"No key {key_id} in this workspace.")
    return json_response(key)


@blueprint.patch("/<id:key_id>")
@responds(key_ring.KeyView)
@guarded(tier=ApiTier.FULL, admin=AdminRule.MANAGE)
@takes(EditKeyBody)
@answers(404, 409)
async def edit_key(key_id: int):
    """Change a key's name, expiry (days from now; null: never), limit (null: the default) or exemption from the
    default limits (`limits_exempt`); not its scopes."""
    body = await read_json_body(EditKeyBody)
    if body.scopes is not msgspec.UNSET:
        raise ApiError(400, "invalid_scopes", "Scopes are fixed when a key is created; create a new key instead.")
    return answer(await key_actions.edit(dependencies().use_case_deps, current_caller(), key_id, name=body.name,
                                         expires_in_days=body.expires_in_days,
                                         rate_limit_per_minute=body.rate_limit_per_minute,
                                         limits_exempt=body.limits_exempt))


@blueprint.post("/<id:key_id>/rotate")
@responds(key_ring.Rotation, 201)
@guarded(tier=ApiTier.FULL, admin=AdminRule.MANAGE)
@takes(RotateKeyBody, optional=True)
@answers(404, 409)
async def rotate_key(key_id: int):
    """Replace a key (same name, scopes, limit); the old one works for grace_hours (0 to 168, default 24)."""
    body = await read_json_body(RotateKeyBody, empty_ok=True)
    rotated = await key_actions.rotate(dependencies().use_case_deps, current_caller(), key_id, body.grace_hours)
    return answer(rotated, 201)


@blueprint.post("/<id:key_id>/revoke")
@responds(key_ring.KeyView)
@guarded(tier=ApiTier.FULL, admin=AdminRule.MANAGE)
@answers(404, 409)
async def revoke_key(key_id: int):
    """Revoke a key: immediate and irreversible."""
    return answer(await key_actions.revoke(dependencies().use_case_deps, current_caller(), key_id))


@blueprint.get("/<id:key_id>/activity")
@responds(ActivityPage)
@guarded(tier=ApiTier.FULL, admin=AdminRule.VIEW)
@accepts(ACTIVITY_PARAMETERS)
@answers(404)
async def key_activity(key_id: int):
    """Calls made with the key (method, path, status, IP, time), newest first, over the last 7 or 30 days."""
    state = dependencies()
    days = _int_arg("days", 7, "invalid_days")
    if days not in ACTIVITY_DAYS:
        raise ApiError(400, "invalid_days", "days must be 7 or 30.")
    limit = _int_arg("limit", 100, "invalid_limit")
    if not 1 <= limit <= 200:
        raise ApiError(400, "invalid_limit", "limit must be 1 to 200.")
    position = cursors.decode(request.args, _ACTIVITY_CURSOR, int)
    calls = await key_reads.key_activity(state.db, current_caller().workspace_id, key_id,
                                         since=state.clock.now() - timedelta(days=days),
                                         before_id=position[0] if position else None,
                                         limit=limit + 1)
    if calls is None:
        raise ApiError(404, "not_found", f"No key {key_id} in this workspace.")
    page = calls[:limit]
    next_cursor = cursors.encode(_ACTIVITY_CURSOR, request.args, page[-1].id) if len(calls) > limit else None
    return json_response(ActivityPage(
        key_id=key_id, days=days, next_cursor=next_cursor,
        data=[ActivityItem(method=c.method, path=c.path, status=c.status, ip=c.ip, at=c.at) for c in page]))


# -- helpers -------------------------------------------------------------------------------------------------


def _int_arg(name: str, default: int, code: str) -> int:
    raw = request.args.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ApiError(400, code, f"{name} must be a whole number.") from None

