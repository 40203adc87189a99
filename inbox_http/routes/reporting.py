"""The Reporting API, `/api/reporting/v1`."""

from __future__ import annotations

import msgspec
from quart import Blueprint

from inbox_actors.domain.plans import ApiTier
from inbox_http.encoding import json_response
from inbox_http.guard import current_credential, guarded, responds

blueprint = Blueprint("reporting", __name__, url_prefix="/api/reporting/v1")


class WhoamiKey(msgspec.Struct, frozen=True):
    id: int
    scopes: list[str]
    read_only: bool


class Whoami(msgspec.Struct, frozen=True):
    workspace_id: int
    auth: str
    key: WhoamiKey
    api_access: bool
    api_tier: str
    reporting_api: str


@blueprint.get("/whoami")
@responds(Whoami)
@guarded(tier=ApiTier.CORE)
async def whoami():
    """Who the key is: its workspace, scopes and API tier. Works on Growth and Scale; any valid key."""
    credential = current_credential()
    tier = credential.plan.api_tier
    return json_response(Whoami(
        workspace_id=credential.workspace_id,
        auth="api_key",
        key=WhoamiKey(id=credential.key_id, scopes=list(credential.scopes), read_only=credential.read_only),
        api_access=tier is not ApiTier.NONE,
        api_tier=tier.value,
        reporting_api="v1",
    ))
