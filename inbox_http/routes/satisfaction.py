"""Customer satisfaction surveys, `/api/team/csat` and `/api/team/csat/responses` (full API; ours: the specification's
`team_management` scope names performance without shapes). Each call binds one of
`inbox_actors/use_cases/satisfaction.py`'s declarations: the settings are a team setting (`team_management`, reading
them also `:read`), the responses team data (`inbox`, `team_management` or `analytics`, each with `:read`). A member's
dashboard session may call them with the same permissions; stable-code errors.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging import parameter_catalog as catalog
from inbox_actors.reporting.csat_responses import CsatResponsePage
from inbox_actors.team.csat import CsatSettings
from inbox_actors.use_cases import satisfaction
from inbox_http.contract import body_of, takes
from inbox_http.guard import accepts, guarded, responds
from inbox_http.outcome_answers import run_route

blueprint = Blueprint("satisfaction", __name__, url_prefix="/api/team/csat")


@blueprint.get("")
@responds(CsatSettings)
@guarded(tier=ApiTier.FULL, use_case=satisfaction.SETTINGS, dashboard=True)
async def read_csat_settings():
    """Satisfaction surveys: whether a resolved chat's customer is sent one, its question and the thanks that
    invites a comment (surveys are off until saved)."""
    return await run_route(satisfaction.SETTINGS)


@blueprint.put("")
@responds(CsatSettings)
@guarded(tier=ApiTier.FULL, use_case=satisfaction.SAVE_SETTINGS, dashboard=True)
@takes(body_of(satisfaction.SAVE_SETTINGS, path=()))
async def save_csat_settings():
    """Set satisfaction surveys: {enabled, question?, thanks?}; chats resolved from now on follow them."""
    return await run_route(satisfaction.SAVE_SETTINGS, body=True)


@blueprint.get("/responses")
@responds(CsatResponsePage)
@guarded(tier=ApiTier.FULL, use_case=satisfaction.RESPONSES, dashboard=True)
@accepts(catalog.CSAT_RESPONSES)
async def list_csat_responses():
    """The ratings that came in the window (default 7 days, at most 90), newest survey first, each with its comment
    and the member and team it is credited to; filter by team_id or member_id."""
    return await run_route(satisfaction.RESPONSES, query=request.args.to_dict())
