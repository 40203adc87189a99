"""The team's calls, `/api/team/*`: the roster, performance, the audit log, the SLA policy and the hand-off queue.

Full API (Scale). The roster and the SLA policy are team settings: `team_management` (reads also
`team_management:read`), removing a member `team_remove_member`; the audit log needs `audit_view`; a member's
dashboard session may call these with the same permissions. Performance is team accountability data (`inbox`,
`team_management` or `analytics`, each with :read). The hand-off queue is team accountability data over chats:
`inbox` or `team_management` (each with its :read variant); a key limited to `inbox_assigned_only` sees only the
queued chats assigned to its creator. Stable-code errors. The writes are the team actions
(`inbox_actors/actions/team.py`); their rules live in `inbox_actors/team/`.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.actions import permissions, team
from inbox_actors.domain.auth_ladder import assigned_only_member
from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging import parameter_catalog as catalog
from inbox_actors.team import audit_log, handoff_queue, performance, roster, sla
from inbox_http.contract import answers, takes
from inbox_http.encoding import json_response
from inbox_http.guard import accepts, current_caller, current_credential, guarded, responds
from inbox_http.json_body import read_json_body
from inbox_http.outcome_answers import answer
from inbox_http.services import services

blueprint = Blueprint("team", __name__, url_prefix="/api/team")


@blueprint.get("/audit-log")
@responds(audit_log.AuditPage)
@guarded(tier=ApiTier.FULL, scopes=permissions.AUDIT_LOG, dashboard=True)
@accepts(catalog.AUDIT_LOG)
async def read_audit_log():
    """The team audit log, newest first: who claimed, released, transferred or resolved which chat, changed which
    member, key or the SLA policy, and when (window default 30 days, at most 365)."""
    state = services()
    return json_response(await audit_log.audit_log(state.db, current_caller().workspace_id, request.args,
                                                   state.clock.now()))


@blueprint.get("/performance")
@responds(performance.TeamPerformance)
@guarded(tier=ApiTier.FULL, scopes=permissions.TEAM_DATA, dashboard=True)
@accepts(catalog.WINDOW_ONLY)
async def team_performance():
    """Per member over the window (default 7 days, at most 90): chats claimed, transferred in and resolved,
    replies sent, first human response (count, median, p90 seconds), SLA breaches."""
    state = services()
    return json_response(await performance.team_performance(state.db, current_caller().workspace_id,
                                                             request.args, state.clock.now()))


@blueprint.get("/members")
@responds(roster.RosterPage)
@guarded(tier=ApiTier.FULL, scopes=permissions.TEAM_SETTINGS, dashboard=True)
@accepts(catalog.ROSTER)
async def list_members():
    """The team: each member's role, status, permissions, assigned-only flag and live load, oldest member first."""
    state = services()
    return json_response(await roster.roster(state.db, current_caller().workspace_id, request.args,
                                             state.clock.now()))


@blueprint.post("/members")
@responds(roster.Member, 201)
@guarded(tier=ApiTier.FULL, scopes=permissions.TEAM_SETTINGS, dashboard=True)
@takes(roster.AddMember)
@answers(409)
async def add_member():
    """Add a member (active at once) with a role and, optionally, permissions within your own."""
    body = await read_json_body(roster.AddMember)
    return answer(await team.add_member(services().action_deps, current_caller(), body), 201)


@blueprint.get("/members/<id:member_id>")
@responds(roster.Member)
@guarded(tier=ApiTier.FULL, scopes=permissions.TEAM_SETTINGS, dashboard=True)
@answers(404)
async def read_member(member_id: int):
    """One member, with their load."""
    return answer(await team.member(services().action_deps, current_caller(), member_id))


@blueprint.patch("/members/<id:member_id>")
@responds(roster.Member)
@guarded(tier=ApiTier.FULL, scopes=permissions.TEAM_SETTINGS, dashboard=True)
@takes(roster.ChangeMember)
@answers(404, 409)
async def change_member(member_id: int):
    """Change a member's name, email, role, permissions or assigned-only flag; it applies to their keys at once."""
    body = await read_json_body(roster.ChangeMember)
    return answer(await team.change_member(services().action_deps, current_caller(), member_id, body))


@blueprint.post("/members/<id:member_id>/suspend")
@responds(roster.Member)
@guarded(tier=ApiTier.FULL, scopes=permissions.TEAM_SETTINGS, dashboard=True)
@answers(404, 409)
async def suspend_member(member_id: int):
    """Suspend a member: their keys and sessions are refused (account_suspended) until reactivated."""
    return answer(await team.suspend_member(services().action_deps, current_caller(), member_id))


@blueprint.post("/members/<id:member_id>/reactivate")
@responds(roster.Member)
@guarded(tier=ApiTier.FULL, scopes=permissions.TEAM_SETTINGS, dashboard=True)
@answers(404, 409)
async def reactivate_member(member_id: int):
    """Lift a suspension."""
    return answer(await team.reactivate_member(services().action_deps, current_caller(), member_id))


@blueprint.delete("/members/<id:member_id>")
@responds(roster.Removed)
@guarded(tier=ApiTier.FULL, scopes=permissions.REMOVE_MEMBERS, dashboard=True)
@answers(404, 409)
async def remove_member(member_id: int):
    """Remove a member for good: signed out, keys refused (membership_revoked), open chats back to the queue."""
    return answer(await team.remove_member(services().action_deps, current_caller(), member_id))


@blueprint.get("/sla")
@responds(sla.SlaPolicy)
@guarded(tier=ApiTier.FULL, scopes=permissions.TEAM_SETTINGS, dashboard=True)
async def read_sla():
    """The SLA policy: seconds a customer may wait for a person, the business hours that clock runs in, who set it."""
    return json_response(await sla.read_policy(services().db, current_caller().workspace_id))


@blueprint.put("/sla")
@responds(sla.SlaPolicy)
@guarded(tier=ApiTier.FULL, scopes=permissions.TEAM_SETTINGS, dashboard=True)
@takes(sla.SaveSla)
async def save_sla():
    """Replace the SLA policy (`sla_seconds`, null for no target; `business_hours`, null or absent for around the
    clock). Applies to waits that start from now on; chats already waiting keep their deadlines."""
    body = await read_json_body(sla.SaveSla)
    return answer(await team.save_sla(services().action_deps, current_caller(), body))


@blueprint.get("/handoff-queue")
@responds(handoff_queue.HandoffQueue)
@guarded(tier=ApiTier.FULL, scopes=permissions.TEAM_OVERVIEW)
@accepts(catalog.HANDOFF_QUEUE)
async def read_handoff_queue():
    """Chats handed off to the team and not yet taken, longest waiting first, with their SLA clocks; claim one
    with `POST /api/inbox/conversations/{phone}/claim`."""
    state, credential = services(), current_credential()
    return json_response(await handoff_queue.handoff_queue(
        state.db, credential.workspace_id, request.args, state.clock.now(), assigned_only_member(credential)))
