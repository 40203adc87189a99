"""Goals: a target for one figure of the team report (docs/team.md#goals), for the whole workspace, one team or one
member, and how each stands against the report's actual figure. A team setting, recorded in the team audit log."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

from inbox_actors.domain import team_audit
from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.domain.team_ref import TeamRef
from inbox_actors.reporting.team_report import Figures, TeamReport
from persistence.database import Database, Record
from persistence.queries import goals as queries
from persistence.queries import team_audit as audit_queries
from persistence.queries import teams as team_queries
from persistence.queries import workspaces as workspace_queries

Metric = Literal["first_response_median_seconds", "first_response_p90_seconds", "resolution_median_seconds",
                 "sla_met_percent", "csat_percent"]
METRICS: dict[str, str] = {
    "first_response_median_seconds": "First human response, median",
    "first_response_p90_seconds": "First human response, 90th percentile",
    "resolution_median_seconds": "Resolution time, median",
    "sla_met_percent": "SLA met",
    "csat_percent": "Customer satisfaction (CSAT)",
}
"""Each figure a goal can be set for, with what the reports page calls it."""
HIGHER_IS_BETTER = frozenset({"sla_met_percent", "csat_percent"})
"""The figures a goal is met by reaching (at or above its target); the others by staying at or below it."""
MAX_TARGET = {"sla_met_percent": 100.0, "csat_percent": 100.0}
MAX_SECONDS = 30 * 86_400.0


class GoalRefusal(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


NOT_FOUND = GoalRefusal(404, "not_found", "No such goal in this workspace.")


class Goal(msgspec.Struct, frozen=True):
    id: int
    metric: Metric
    target: float
    team: TeamRef | None
    """The team the goal is for (null: the workspace, or a member)."""
    member: MemberRef | None
    """The member the goal is for (null: the workspace, or a team)."""
    updated_at: datetime
    updated_by: MemberRef | None


class GoalList(msgspec.Struct, frozen=True):
    data: list[Goal]


class JudgedGoal(Goal, frozen=True):
    actual: float | None
    """The report's figure for the goal's subject over the report's window (null: nothing to measure yet)."""
    met: bool | None


async def goals(db: Database, workspace_id: int) -> GoalList:
    return GoalList([_goal(row) for row in await queries.goals(db, workspace_id)])


async def put(db: Database, workspace_id: int, by: int | None, via: str, metric: str, target: float,
              team_id: int | None, member_id: int | None, now: datetime) -> Goal:
    """Set the goal of the figure for its subject (one per figure and subject: a second replaces the target)."""
    if target > MAX_TARGET.get(metric, MAX_SECONDS):
        limit = MAX_TARGET.get(metric, MAX_SECONDS)
        raise GoalRefusal(400, "invalid_target", f"A {metric} target is at most {limit:g}.")
    if team_id is not None and member_id is not None:
        raise GoalRefusal(400, "invalid_subject", "A goal is for the workspace, one team or one member: give "
                                                  "team_id or member_id, not both.")
    async with db.transaction() as tx:
        if team_id is not None and await team_queries.find_team(tx, workspace_id, team_id) is None:
            raise GoalRefusal(400, "invalid_team", f"No team {team_id} in this workspace.")
        if member_id is not None:
            member = await workspace_queries.find_member(tx, member_id)
            if member is None or member["workspace_id"] != workspace_id or member["status"] == "removed":
                raise GoalRefusal(400, "invalid_member", f"No member {member_id} in this workspace.")
        goal_id = await queries.put(tx, workspace_id, metric, target, team_id, member_id, by)
        await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=by, via=via,
                                   action=team_audit.GOAL_SET, subject=f"goal:{goal_id}",
                                   details={"metric": metric, "target": target, "team_id": team_id,
                                            "member_id": member_id})
        return _goal(await queries.find(tx, workspace_id, goal_id))


async def remove(db: Database, workspace_id: int, by: int | None, via: str, goal_id: int, now: datetime) -> Goal:
    """Remove the goal; the answer is the goal as it was."""
    async with db.transaction() as tx:
        row = await queries.find(tx, workspace_id, goal_id)
        if row is None or not await queries.delete(tx, workspace_id, goal_id):
            raise NOT_FOUND
        await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=by, via=via,
                                   action=team_audit.GOAL_REMOVED, subject=f"goal:{goal_id}",
                                   details={"metric": row["metric"], "target": row["target"]})
    return _goal(row)


def judge(goal: Goal, report: TeamReport) -> JudgedGoal:
    """The goal beside the report's figure for its subject."""
    figures: Figures | None = report.totals
    if goal.team is not None:
        figures = next((t for t in report.teams if t.team.id == goal.team.id), None)
    elif goal.member is not None:
        figures = next((m for m in report.members if m.member.user_id == goal.member.user_id), None)
    actual = actual_of(figures, goal.metric) if figures is not None else None
    met = None if actual is None else (actual >= goal.target if goal.metric in HIGHER_IS_BETTER
                                       else actual <= goal.target)
    return JudgedGoal(**msgspec.structs.asdict(goal), actual=actual, met=met)


def actual_of(figures: Figures, metric: str) -> float | None:
    return {"first_response_median_seconds": figures.first_human_response.median_seconds,
            "first_response_p90_seconds": figures.first_human_response.p90_seconds,
            "resolution_median_seconds": figures.resolution.median_seconds,
            "sla_met_percent": figures.sla_met_percent,
            "csat_percent": figures.satisfaction.csat_percent}[metric]


def _goal(row: Record) -> Goal:
    return Goal(id=row["id"], metric=row["metric"], target=row["target"],
                team=TeamRef(row["team_id"], row["team_name"]) if row["team_id"] is not None else None,
                member=MemberRef(row["member_id"], row["member_name"]) if row["member_id"] is not None else None,
                updated_at=row["updated_at"],
                updated_by=MemberRef(row["updated_by"], row["updated_by_name"]) if row["updated_by"] else None)


class ReportWithGoals(TeamReport, frozen=True):
    goals: list[JudgedGoal]
    """Every goal of the workspace beside the report's figure for its subject."""


async def report_with_goals(db: Database, workspace_id: int, report: TeamReport) -> ReportWithGoals:
    found = await goals(db, workspace_id)
    return ReportWithGoals(**msgspec.structs.asdict(report), goals=[judge(goal, report) for goal in found.data])
