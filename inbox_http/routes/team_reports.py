"""The team report and its goals, `/api/team/report` and `/api/team/goals*` (full API; ours: the specification's
`team_management` scope names goals without shapes, and its `analytics` the team's figures).

Each call binds one of `inbox_actors/use_cases/team_reports.py`'s declarations: the report is team accountability
data (`inbox`, `team_management` or `analytics`, each with `:read`), goals a team setting (`team_management`,
reading them also `:read`). A member's dashboard session may call them with the same permissions; stable-code
errors. The reports page draws the same report (`/app/reports`).
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging import parameter_catalog as catalog
from inbox_actors.team.goals import Goal, GoalList, ReportWithGoals
from inbox_actors.use_cases import team_reports
from inbox_http.contract import answers, body_of, takes
from inbox_http.guard import accepts, guarded, responds
from inbox_http.outcome_answers import run_route

blueprint = Blueprint("team_reports", __name__, url_prefix="/api/team")


@blueprint.get("/report")
@responds(ReportWithGoals)
@guarded(tier=ApiTier.FULL, use_case=team_reports.REPORT, dashboard=True)
@accepts(catalog.TEAM_REPORT)
async def team_report():
    """How the team did over the window (default 7 days, at most 90), by day and hour in a time zone: conversations
    opened and resolved, first human response and resolution times (median, p90), SLA met, the bot's hand-overs;
    per member and per team; and every goal beside its figure."""
    return await run_route(team_reports.REPORT, query=request.args.to_dict())


@blueprint.get("/goals")
@responds(GoalList)
@guarded(tier=ApiTier.FULL, use_case=team_reports.GOALS, dashboard=True)
async def list_goals():
    """The workspace's goals: its own first, then each team's, then each member's."""
    return await run_route(team_reports.GOALS)


@blueprint.put("/goals")
@responds(Goal)
@guarded(tier=ApiTier.FULL, use_case=team_reports.SET_GOAL, dashboard=True)
@takes(body_of(team_reports.SET_GOAL, path=()))
async def set_goal():
    """Set a goal: {metric, target, team_id?, member_id?}; one per figure and subject, so setting it again replaces
    its target."""
    return await run_route(team_reports.SET_GOAL, body=True)


@blueprint.delete("/goals/<id:goal_id>")
@responds(Goal)
@guarded(tier=ApiTier.FULL, use_case=team_reports.REMOVE_GOAL, dashboard=True)
@answers(404)
async def remove_goal(goal_id: int):
    """Remove a goal; the answer is the goal as it was."""
    return await run_route(team_reports.REMOVE_GOAL, goal_id=goal_id)
