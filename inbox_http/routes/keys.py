"""Key management, `/api/keys`: create, list, edit, rotate, revoke, activity.

Who may: an admin's dashboard session, or a full-access key (scope `all`) an admin created; listing and
activity also members with the settings permission. Each call binds a keys use case (`use_cases/keys.py`, which
names key management's admin rule); writes go to the workspace's key ring actor, reads to PostgreSQL.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.access import key_ring
from inbox_actors.domain import key_rules
from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging.parameter_catalog import QueryParameter
from inbox_actors.use_cases import keys
from inbox_http.contract import answers, body_of, takes
from inbox_http.guard import accepts, guarded, responds
from inbox_http.outcome_answers import run_route

blueprint = Blueprint("keys", __name__, url_prefix="/api/keys")

KEY_LIST_PARAMETERS = (QueryParameter("status", "string", "only keys in this status", key_rules.KEY_STATUSES),)
ACTIVITY_PARAMETERS = (
    QueryParameter("days", "integer", "the last 7 (default) or 30 days", rules={"enum": list(keys.ACTIVITY_DAYS)}),
    QueryParameter("limit", "integer", "1 to 200, default 100", rules={"minimum": 1, "maximum": 200}),
    QueryParameter("cursor", "string", "the previous page's next_cursor (opaque: any other text is invalid_cursor)",
                   rules={"minLength": 1}),
)


@blueprint.post("")
@responds(key_ring.IssuedKey, 201)
@guarded(tier=ApiTier.FULL, use_case=keys.CREATE)
@takes(body_of(keys.CREATE, path=()))
@answers(409)
async def create_key():
    """Create a key; its plaintext is in this answer only."""
    return await run_route(keys.CREATE, 201, body=True)


@blueprint.get("")
@responds(keys.KeyList)
@guarded(tier=ApiTier.FULL, use_case=keys.LIST)
@accepts(KEY_LIST_PARAMETERS)
async def list_keys():
    """Every key of the workspace, newest first (never a plaintext or a hash)."""
    return await run_route(keys.LIST, status=request.args.get("status"))


@blueprint.get("/<id:key_id>")
@responds(key_ring.KeyView)
@guarded(tier=ApiTier.FULL, use_case=keys.SHOW)
@answers(404)
async def show_key(key_id: int):
    """One key."""
    return await run_route(keys.SHOW, key_id=key_id)


@blueprint.patch("/<id:key_id>")
@responds(key_ring.KeyView)
@guarded(tier=ApiTier.FULL, use_case=keys.EDIT)
@takes(body_of(keys.EDIT, path=("key_id",)))
@answers(404, 409)
async def edit_key(key_id: int):
    """Change a key's name, expiry (days from now; null: never), limit (null: the default) or exemption from the
    default limits (`limits_exempt`); not its scopes."""
    return await run_route(keys.EDIT, body=True, key_id=key_id)


@blueprint.post("/<id:key_id>/rotate")
@responds(key_ring.Rotation, 201)
@guarded(tier=ApiTier.FULL, use_case=keys.ROTATE)
@takes(body_of(keys.ROTATE, path=("key_id",)), optional=True)
@answers(404, 409)
async def rotate_key(key_id: int):
    """Replace a key (same name, scopes, limit); the old one works for grace_hours (0 to 168, default 24)."""
    return await run_route(keys.ROTATE, 201, body=True, optional=True, key_id=key_id)


@blueprint.post("/<id:key_id>/revoke")
@responds(key_ring.KeyView)
@guarded(tier=ApiTier.FULL, use_case=keys.REVOKE)
@answers(404, 409)
async def revoke_key(key_id: int):
    """Revoke a key: immediate and irreversible."""
    return await run_route(keys.REVOKE, key_id=key_id)


@blueprint.get("/<id:key_id>/activity")
@responds(keys.ActivityPage)
@guarded(tier=ApiTier.FULL, use_case=keys.ACTIVITY)
@accepts(ACTIVITY_PARAMETERS)
@answers(404)
async def key_activity(key_id: int):
    """Calls made with the key (method, path, status, IP, time), newest first, over the last 7 or 30 days."""
    return await run_route(keys.ACTIVITY, key_id=key_id, query=request.args.to_dict())
