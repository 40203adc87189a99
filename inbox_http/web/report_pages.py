"""The reports page: `/app/reports` (how the team did over this week, last week, the last 7 or 30 days, in the
member's time zone: charts drawn as SVG, each followed by its table, and every goal beside its figure) and
`/app/reports/<table>.csv` (each table as CSV, for a spreadsheet).

The page runs the declared team report (`use_cases/team_reports.py`: the figures `GET /api/team/report` answers,
with the same window and time zone) and is offered to whoever the declaration allows (`inbox`, `team_management`
or `analytics`). Goals are set here by whoever may change them (`team_management`): the form runs `set_goal`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from quart import Blueprint, Response, redirect, request

from inbox_actors.team.goals import METRICS, ReportWithGoals
from inbox_actors.use_cases import team_reports
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.bar_charts import goal_bars, grouped_bars
from inbox_http.web.member_time import member_zone
from inbox_http.web.page_guard import WebRefusal, signed_in
from inbox_http.web.pages import duration, page

blueprint = Blueprint("web_reports", __name__, url_prefix="/app/reports", template_folder="templates")

RANGES = {"this_week": "This week", "last_week": "Last week", "last_7_days": "The last 7 days",
          "last_30_days": "The last 30 days"}
_DONE = {"goal": "Goal saved.", "goal-removed": "Goal removed."}
SECONDS_METRICS = frozenset(metric for metric in METRICS if metric.endswith("_seconds"))


def _zone_name() -> str:
    zone = member_zone()
    return getattr(zone, "key", "UTC")


def window_of(range_name: str, now: datetime) -> tuple[datetime, datetime]:
    """The range's bounds in the member's time zone: a week runs from Monday 00:00, local time."""
    zone = member_zone()
    local = now.astimezone(zone)
    monday = (local - timedelta(days=local.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    if range_name == "last_week":
        return monday - timedelta(days=7), monday
    if range_name == "last_7_days":
        return now - timedelta(days=7), now
    if range_name == "last_30_days":
        return now - timedelta(days=30), now
    return monday, now


def _range() -> str:
    asked = request.args.get("range", "this_week")
    return asked if asked in RANGES else "this_week"


async def _report() -> ReportWithGoals:
    caller = current_caller()
    if not team_reports.REPORT.allows(caller):
        raise WebRefusal(403, f"Reports need the {team_reports.REPORT.needed()} permission.")
    start, end = window_of(_range(), dependencies().clock.now())
    query = {"since": start.astimezone(timezone.utc).isoformat(), "to": end.astimezone(timezone.utc).isoformat(),
             "tz": _zone_name()}
    outcome = await run(dependencies().use_case_deps, caller, team_reports.REPORT, {"query": query})
    if isinstance(outcome, Refused):
        raise WebRefusal(outcome.status, outcome.message)
    return outcome.data


def seconds(value: float | None) -> str:
    """A time as a person reads it ("4 min", "1 h 5 min"); "—" when there is none."""
    return "—" if value is None else duration(int(round(value)))


def goal_value(metric: str, value: float | None) -> str:
    if value is None:
        return "—"
    return seconds(value) if metric in SECONDS_METRICS else f"{value:g} %"


def _subject(goal) -> str:
    if goal.team is not None:
        return f"Team {goal.team.name}"
    if goal.member is not None:
        return goal.member.name or f"Member {goal.member.user_id}"
    return "Everyone"


@blueprint.get("")
@signed_in
async def reports_page():
    return await _page(notice=_DONE.get(request.args.get("done", "")))


async def _page(refused: Refused | None = None, notice: str | None = None):
    report = await _report()
    caller = current_caller()
    days = [f"{d.day:%a %d %b}" if len(report.by_day) <= 8 else f"{d.day:%d %b}" for d in report.by_day]
    by_day = grouped_bars(days, [("Opened", [d.opened for d in report.by_day]),
                                 ("Resolved", [d.resolved for d in report.by_day])],
                          f"Conversations opened and resolved each day, {report.opened} opened and "
                          f"{report.totals.resolved} resolved in all.")
    by_hour = grouped_bars([f"{h.hour:02d}" for h in report.by_hour],
                           [("Opened", [h.opened for h in report.by_hour]),
                            ("Resolved", [h.resolved for h in report.by_hour])],
                           f"Conversations opened and resolved by hour of the day ({report.time_zone}).")
    reasons = report.bot.reasons
    handovers = grouped_bars([r.reason.replace("_", " ") for r in reasons],
                             [("Hand-overs", [r.count for r in reasons])],
                             f"The bot's hand-overs by reason: {report.bot.handed_over_chats} of the "
                             f"{report.bot.chats} chats it worked.")
    goals_chart = goal_bars(
        [(f"{METRICS[g.metric]} — {_subject(g)}", g.actual, g.target, g.met,
          f"{goal_value(g.metric, g.actual)} against {goal_value(g.metric, g.target)}")
         for g in report.goals],
        f"{sum(1 for g in report.goals if g.met)} of {len(report.goals)} goals met.")
    may_set = team_reports.SET_GOAL.allows(caller)
    return await page("reports.html", refused.status if refused else 200, report=report, ranges=RANGES,
                      chosen=_range(), by_day=by_day, by_hour=by_hour, handovers=handovers, goals_chart=goals_chart,
                      metrics=METRICS, may_set_goals=may_set, subject=_subject, seconds=seconds,
                      goal_value=goal_value, notice=notice, refusal=refused.message if refused else None)


@blueprint.post("/goals")
@signed_in
async def set_goal():
    form = await request.form
    subject = (form.get("subject") or "").strip()
    kind, _, number = subject.partition(":")
    arguments: dict[str, Any] = {"metric": (form.get("metric") or "").strip(), "target": _target(form)}
    if kind in ("team", "member") and number.isdigit():
        arguments[f"{kind}_id"] = int(number)
    outcome = await run(dependencies().use_case_deps, current_caller(), team_reports.SET_GOAL, arguments,
                        strict=False)
    if isinstance(outcome, Refused):
        return await _page(outcome)
    return redirect(f"/app/reports?range={_range()}&done=goal", 303)


def _target(form) -> float | str:
    """The target as typed: minutes for a time (what people set a response goal in), a percentage otherwise."""
    raw = (form.get("target") or "").strip()
    try:
        value = float(raw)
    except ValueError:
        return raw
    return value * 60 if (form.get("metric") or "") in SECONDS_METRICS else value


@blueprint.post("/goals/<int:goal_id>/remove")
@signed_in
async def remove_goal(goal_id: int):
    outcome = await run(dependencies().use_case_deps, current_caller(), team_reports.REMOVE_GOAL,
                        {"goal_id": goal_id})
    if isinstance(outcome, Refused):
        return await _page(outcome)
    return redirect(f"/app/reports?range={_range()}&done=goal-removed", 303)


# -- the tables as CSV -------------------------------------------------------------------------------------------

def _times(figures) -> list[Any]:
    return [figures.resolved, figures.first_human_response.count, figures.first_human_response.median_seconds,
            figures.first_human_response.p90_seconds, figures.sla_met_percent, figures.resolution.count,
            figures.resolution.median_seconds, figures.resolution.p90_seconds]


_FIGURE_COLUMNS = ["resolved", "first_responses", "first_response_median_seconds", "first_response_p90_seconds",
                   "sla_met_percent", "resolutions_timed", "resolution_median_seconds", "resolution_p90_seconds"]
TABLES: dict[str, tuple[list[str], Callable[[ReportWithGoals], list[list[Any]]]]] = {
    "days": (["day", "opened", "resolved"], lambda r: [[d.day.isoformat(), d.opened, d.resolved] for d in r.by_day]),
    "hours": (["hour", "opened", "resolved"], lambda r: [[h.hour, h.opened, h.resolved] for h in r.by_hour]),
    "members": (["user_id", "name", *_FIGURE_COLUMNS],
                lambda r: [[m.member.user_id, m.member.name, *_times(m)] for m in r.members]),
    "teams": (["team_id", "name", *_FIGURE_COLUMNS], lambda r: [[t.team.id, t.team.name, *_times(t)] for t in r.teams]),
    "handovers": (["reason", "count"], lambda r: [[x.reason, x.count] for x in r.bot.reasons]),
    "goals": (["metric", "subject", "target", "actual", "met"],
              lambda r: [[g.metric, _subject(g), g.target, g.actual, g.met] for g in r.goals]),
}


@blueprint.get("/<name>.csv")
@signed_in
async def table_csv(name: str):
    if name not in TABLES:
        raise WebRefusal(404, "No such table: the reports' tables are " + ", ".join(TABLES) + ".")
    report = await _report()
    columns, rows = TABLES[name]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    for row in rows(report):
        writer.writerow(["" if value is None else _safe(value) for value in row])
    start = report.window.start.astimezone(member_zone()).date()
    filename = f"report-{name}-{start.isoformat()}.csv"
    return Response(out.getvalue(), content_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})


def _safe(value: Any) -> Any:
    """A text a spreadsheet would run as a formula (a name beginning with =, +, - or @) is kept as text."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value
