"""The team's calls, `/api/team/*`: the SLA policy and the hand-off queue.

Full API (Scale). The SLA policy is team settings: `team_management` (reads also `team_management:read`); a member's
dashboard session may read it and, with the team_management permission, change it. The hand-off queue is team
accountability data over chats: `inbox` or `team_management` (each with its :read variant); a key limited to
`inbox_assigned_only` sees only the queued chats assigned to its creator. Stable-code errors. Rules live in
`inbox_actors.team`.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.domain.access import assigned_only_member
from inbox_actors.domain.plans import ApiTier
from inbox_actors.reporting import parameter_catalog as catalog
from inbox_actors.team import handoff_queue, sla
from inbox_http.contract import takes
from inbox_http.encoding import json_response
from inbox_http.errors import ApiError
from inbox_http.guard import accepts, current_credential, current_principal, guarded, responds
from inbox_http.json_body import read_json_body
from inbox_http.services import services

blueprint = Blueprint("team", __name__, url_prefix="/api/team")

TEAM_SETTINGS = ("team_management",)
QUEUE_READERS = ("inbox", "team_management")


@blueprint.get("/sla")
@responds(sla.SlaPolicy)
@guarded(tier=ApiTier.FULL, scopes=TEAM_SETTINGS, dashboard=True)
async def read_sla():
    """The SLA policy: seconds a customer may wait for a person, the business hours that clock runs in, who set it."""
    return json_response(await sla.read_policy(services().db, current_principal().workspace_id))


@blueprint.put("/sla")
@responds(sla.SlaPolicy)
@guarded(tier=ApiTier.FULL, scopes=TEAM_SETTINGS, dashboard=True)
@takes(sla.SaveSla)
async def save_sla():
    """Replace the SLA policy (`sla_seconds`, null for no target; `business_hours`, null or absent for around the
    clock). Applies to waits that start from now on; chats already waiting keep their deadlines."""
    state, caller = services(), current_principal()
    body = await read_json_body(sla.SaveSla)
    try:
        policy = await sla.save_policy(state.db, caller.workspace_id, caller.member_id, body, state.clock.now())
    except sla.InvalidSlaPolicy as err:
        raise ApiError(400, "invalid_business_hours", str(err)) from None
    return json_response(policy)


@blueprint.get("/handoff-queue")
@responds(handoff_queue.HandoffQueue)
@guarded(tier=ApiTier.FULL, scopes=QUEUE_READERS)
@accepts(catalog.HANDOFF_QUEUE)
async def read_handoff_queue():
    """Chats handed off to the team and not yet taken, longest waiting first, with their SLA clocks; claim one
    with `POST /api/inbox/conversations/{phone}/claim`."""
    state, credential = services(), current_credential()
    return json_response(await handoff_queue.handoff_queue(
        state.db, credential.workspace_id, request.args, state.clock.now(), assigned_only_member(credential)))
