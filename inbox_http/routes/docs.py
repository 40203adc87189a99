"""`GET /api/docs/routes`: every route the service answers, for reference."""

from __future__ import annotations

from quart import Blueprint, current_app

from inbox_actors.domain.plans import ApiTier
from inbox_http.encoding import json_response
from inbox_http.guard import guarded
from inbox_http.route_table import route_table

blueprint = Blueprint("docs", __name__, url_prefix="/api/docs")


@blueprint.get("/routes")
@guarded(tier=ApiTier.FULL)
async def routes():
    """Routes with their method, tier, scopes and whether the spec documents them (undocumented ones may change)."""
    table = route_table(current_app)
    return json_response({"data": table, "count": len(table)})
