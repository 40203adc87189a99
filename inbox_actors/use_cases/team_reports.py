"""The team report and its goals as use cases: the report over a window (with every goal beside its figure), the
goals, setting one and removing one.

The report is team accountability data, as performance is (`inbox`, `team_management` or `analytics`, each with
`:read`); goals are a team setting (`team_management`; reading them also `:read`), recorded in the team audit log.
The figures are `reporting/team_report.py`'s, the goals' rules `team/goals.py`'s.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from inbox_actors.reporting import team_report
from inbox_actors.team import goals
from inbox_actors.team.goals import GoalRefusal, Metric
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.chat_reads import NoArguments
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import BIGINT_MAX
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused, judged
from inbox_actors.use_cases.team import TeamQuery
from inbox_actors.use_cases.use_case import Kind, UseCase, done, rule

GoalMetric = Annotated[Metric, msgspec.Meta(
    description="The figure: " + ", ".join(goals.METRICS) + ".",
    extra=rule("invalid_metric", "metric is one of " + ", ".join(goals.METRICS) + "."))]
Target = Annotated[float, msgspec.Meta(
    ge=0, description="Seconds for a time (at most 30 days), a percentage for sla_met_percent and csat_percent "
                      "(at most 100).",
    extra=rule("invalid_target", "target is a number of at least 0."))]
SubjectId = Annotated[int, msgspec.Meta(ge=1, le=BIGINT_MAX)]
GoalId = Annotated[int, msgspec.Meta(description="The goal's id.")]
NO_SUCH_GOAL = Refused(Reason.NOT_FOUND, goals.NOT_FOUND.message, 404, "not_found")


class GoalChoice(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    metric: GoalMetric
    target: Target
    team_id: Annotated[SubjectId | None, msgspec.Meta(
        description="The team the goal is for; with member_id left out too, the workspace's goal.",
        extra=rule("invalid_team", "team_id is a team's id."))] = None
    member_id: Annotated[SubjectId | None, msgspec.Meta(
        description="The member the goal is for.", extra=rule("invalid_member", "member_id is a member's id."))] = None


class OneGoal(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    goal_id: GoalId


async def _report(deps: UseCaseDeps, caller: Caller, a: TeamQuery) -> Outcome:
    member = None if caller.is_operator else caller.member_id
    report = await team_report.team_report(deps.db, caller.workspace_id, member, a.query, deps.clock.now())
    return Done(await goals.report_with_goals(deps.db, caller.workspace_id, report))


async def _goals(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(await goals.goals(deps.db, caller.workspace_id))


async def _put(deps: UseCaseDeps, caller: Caller, a: GoalChoice) -> Outcome:
    by = None if caller.is_operator else caller.member_id
    return done(await judged(goals.put(deps.db, caller.workspace_id, by, caller.author, a.metric, a.target,
                                       a.team_id, a.member_id, deps.clock.now()), GoalRefusal))


async def _remove(deps: UseCaseDeps, caller: Caller, a: OneGoal) -> Outcome:
    by = None if caller.is_operator else caller.member_id
    if not 1 <= a.goal_id <= BIGINT_MAX:
        return NO_SUCH_GOAL      # no goal has it
    return done(await judged(goals.remove(deps.db, caller.workspace_id, by, caller.author, a.goal_id,
                                          deps.clock.now()), GoalRefusal))


# -- the declarations ----------------------------------------------------------------------------------------

REPORT = UseCase("team_report", TeamQuery, permissions.TEAM_DATA, Kind.READ, _report)
GOALS = UseCase("list_goals", NoArguments, permissions.TEAM_SETTINGS, Kind.READ, _goals)
SET_GOAL = UseCase("set_goal", GoalChoice, permissions.TEAM_SETTINGS, Kind.WRITE, _put)
REMOVE_GOAL = UseCase("remove_goal", OneGoal, permissions.TEAM_SETTINGS, Kind.WRITE, _remove)
