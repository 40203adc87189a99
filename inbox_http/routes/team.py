"""The team's calls, `/api/team/*`: the roster, performance, the audit log, the SLA policy and the hand-off queue.

Full API (Scale). Each call binds one of the team's use cases (`inbox_actors/use_cases/team.py`, where their
permissions are declared): the roster and the SLA policy are team settings (`team_management`, reads also
`team_management:read`), removing a member `team_remove_member`; the audit log needs `audit_view`; performance is
team accountability data (`inbox`, `team_management` or `analytics`, each with :read); the hand-off queue is team
accountability data over chats (`inbox` or `team_management`, each with its :read variant), and a key limited to
`inbox_assigned_only` sees only the queued chats assigned to its creator. A member's dashboard session may call
all but the queue with the same permissions; stable-code errors. The rules live in `inbox_actors/team/`, the
query parameters' in `inbox_actors/paging/`.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging import parameter_catalog as catalog
from inbox_actors.team import audit_log, handoff_queue, performance, roster, sla
from inbox_actors.use_cases import team
from inbox_http.contract import answers, takes
from inbox_http.guard import accepts, guarded, responds
from inbox_http.outcome_answers import run_route

blueprint = Blueprint("team", __name__, url_prefix="/api/team")


@blueprint.get("/audit-log")
@responds(audit_log.AuditPage)
@guarded(tier=ApiTier.FULL, use_case=team.AUDIT_LOG, dashboard=True)
@accepts(catalog.AUDIT_LOG)
async def read_audit_log():
    """The team audit log, newest first: who claimed, released, transferred or resolved which chat, changed which
    member, key or the SLA policy, and when (window default 30 days, at most 365)."""
    return await run_route(team.AUDIT_LOG, query=request.args.to_dict())


@blueprint.get("/performance")
@responds(performance.TeamPerformance)
@guarded(tier=ApiTier.FULL, use_case=team.PERFORMANCE, dashboard=True)
@accepts(catalog.WINDOW_ONLY)
async def team_performance():
    """Per member over the window (default 7 days, at most 90): chats claimed, transferred in and resolved,
    replies sent, first human response (count, median, p90 seconds), SLA breaches."""
    return await run_route(team.PERFORMANCE, query=request.args.to_dict())


@blueprint.get("/members")
@responds(roster.RosterPage)
@guarded(tier=ApiTier.FULL, use_case=team.MEMBERS, dashboard=True)
@accepts(catalog.ROSTER)
async def list_members():
    """The team: each member's role, status, permissions, assigned-only flag and live load, oldest member first."""
    return await run_route(team.MEMBERS, query=request.args.to_dict())


@blueprint.post("/members")
@responds(roster.Member, 201)
@guarded(tier=ApiTier.FULL, use_case=team.ADD_MEMBER, dashboard=True)
@takes(roster.AddMember)
@answers(409)
async def add_member():
    """Add a member (active at once) with a role and, optionally, permissions within your own."""
    return await run_route(team.ADD_MEMBER, 201, body=True)


@blueprint.get("/members/<id:member_id>")
@responds(roster.Member)
@guarded(tier=ApiTier.FULL, use_case=team.MEMBER, dashboard=True)
@answers(404)
async def read_member(member_id: int):
    """One member, with their load."""
    return await run_route(team.MEMBER, member_id=member_id)


@blueprint.patch("/members/<id:member_id>")
@responds(roster.Member)
@guarded(tier=ApiTier.FULL, use_case=team.CHANGE_MEMBER, dashboard=True)
@takes(roster.ChangeMember)
@answers(404, 409)
async def change_member(member_id: int):
    """Change a member's name, email, role, permissions or assigned-only flag; it applies to their keys at once."""
    return await run_route(team.CHANGE_MEMBER, body=True, member_id=member_id)


@blueprint.post("/members/<id:member_id>/suspend")
@responds(roster.Member)
@guarded(tier=ApiTier.FULL, use_case=team.SUSPEND_MEMBER, dashboard=True)
@answers(404, 409)
async def suspend_member(member_id: int):
    """Suspend a member: their keys and sessions are refused (account_suspended) until reactivated."""
    return await run_route(team.SUSPEND_MEMBER, member_id=member_id)


@blueprint.post("/members/<id:member_id>/reactivate")
@responds(roster.Member)
@guarded(tier=ApiTier.FULL, use_case=team.REACTIVATE_MEMBER, dashboard=True)
@answers(404, 409)
async def reactivate_member(member_id: int):
    """Lift a suspension."""
    return await run_route(team.REACTIVATE_MEMBER, member_id=member_id)


@blueprint.delete("/members/<id:member_id>")
@responds(roster.Removed)
@guarded(tier=ApiTier.FULL, use_case=team.REMOVE_MEMBER, dashboard=True)
@answers(404, 409)
async def remove_member(member_id: int):
    """Remove a member for good: signed out, keys refused (membership_revoked), open chats back to the queue."""
    return await run_route(team.REMOVE_MEMBER, member_id=member_id)


@blueprint.get("/sla")
@responds(sla.SlaPolicy)
@guarded(tier=ApiTier.FULL, use_case=team.SLA_POLICY, dashboard=True)
async def read_sla():
    """The SLA policy: seconds a customer may wait for a person, the business hours that clock runs in, who set it."""
    return await run_route(team.SLA_POLICY)


@blueprint.put("/sla")
@responds(sla.SlaPolicy)
@guarded(tier=ApiTier.FULL, use_case=team.SAVE_SLA, dashboard=True)
@takes(sla.SaveSla)
async def save_sla():
    """Replace the SLA policy (`sla_seconds`, null for no target; `business_hours`, null or absent for around the
    clock). Applies to waits that start from now on; chats already waiting keep their deadlines."""
    return await run_route(team.SAVE_SLA, body=True)


@blueprint.get("/handoff-queue")
@responds(handoff_queue.HandoffQueue)
@guarded(tier=ApiTier.FULL, use_case=team.HANDOFF_QUEUE)
@accepts(catalog.HANDOFF_QUEUE)
async def read_handoff_queue():
    """Chats handed off to the team and not yet taken, longest waiting first, with their SLA clocks; claim one
    with `POST /api/inbox/conversations/{phone}/claim`."""
    return await run_route(team.HANDOFF_QUEUE, query=request.args.to_dict())
