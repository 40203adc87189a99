"""The reports page: `/app/reports` (how the team did over this week, last week, the last 7 or 30 days, in the
member's time zone: charts drawn as SVG, each followed by its table, and every goal beside its figure) and
`/app/reports/<table>.csv` (each table as CSV, for a spreadsheet).

The page runs the declared team report (`use_cases/team_reports.py`: the figures `GET /api/team/report` answers,
with the same window and time zone) and is offered to whoever the declaration allows (`inbox`, `team_management`
or `analytics`). Goals are set here by whoever may change them (`team_management`): the form runs `set_goal`.
The satisfaction survey's ratings (how many of each, and the latest responses with their comments) are the
declared `list_csat_responses` over the same window (`use_cases/satisfaction.py`), shown to whoever it allows.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple

import msgspec
from quart import Blueprint, Response, redirect, request

from inbox_actors.paging.parameters import MAX_PAGE
from inbox_actors.reporting.csat_responses import CsatResponse
from inbox_actors.reporting.team_report import RatingCount
from inbox_actors.team.goals import METRICS, ReportWithGoals
from inbox_actors.use_cases import satisfaction, team_reports
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.bar_charts import Chart, goal_bars, grouped_bars
from inbox_http.web.member_time import member_zone
from inbox_http.web.page_guard import WebRefusal, signed_in
from inbox_http.web.pages import duration, page

blueprint = Blueprint("web_reports", __name__, url_prefix="/app/reports", template_folder="templates")

RANGES = {"this_week": "This week", "last_week": "Last week", "last_7_days": "The last 7 days",
          "last_30_days": "The last 30 days"}
_DONE = {"goal": "Goal saved.", "goal-removed": "Goal removed."}
SECONDS_METRICS = frozenset(metric for metric in METRICS if metric.endswith("_seconds"))
SHOWN_RESPONSES = 50
# The responses CSV reads the period's responses page by page: past this many it holds the newest and says so.
MAX_COUNTED = 5_000


class Ratings(msgspec.Struct, frozen=True):
    """The period's ratings: how many of each (the report's sums), and its responses, newest first, as far as they
    were read (the page's latest, or the CSV's all)."""

    by_rating: list[RatingCount]
    responses: list[CsatResponse]
    complete: bool
    """False: more came than were read, and `responses` holds the newest of them."""

    def counts(self) -> list[tuple[int, str, int]]:
        """(rating, label, how many) for each of the five ratings, best first."""
        return [(counted.rating, counted.label, counted.count) for counted in self.by_rating]

    @property
    def total(self) -> int:
        return sum(counted.count for counted in self.by_rating)


class Period(NamedTuple):
    """What the page and its tables show of one period: the report, and the ratings when the caller may read
    them."""

    report: ReportWithGoals
    ratings: Ratings | None


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


def _window() -> dict[str, str]:
    """The chosen range as the reads' query (`since`, `to`), fixed once so every read of a page sees one window."""
    start, end = window_of(_range(), dependencies().clock.now())
    return {"since": start.astimezone(timezone.utc).isoformat(), "to": end.astimezone(timezone.utc).isoformat()}


async def _report(window: dict[str, str]) -> ReportWithGoals:
    caller = current_caller()
    if not team_reports.REPORT.allows(caller):
        raise WebRefusal(403, f"Reports need the {team_reports.REPORT.needed()} permission.")
    outcome = await run(dependencies().use_case_deps, caller, team_reports.REPORT,
                        {"query": {**window, "tz": _zone_name()}})
    if isinstance(outcome, Refused):
        raise WebRefusal(outcome.status, outcome.message)
    return outcome.data


async def _ratings(window: dict[str, str], report: ReportWithGoals, *, every: bool = False) -> Ratings | None:
    """The window's ratings: the report's counts, and the latest SHOWN_RESPONSES responses (`every`: page after page
    up to MAX_COUNTED); None when the caller may not read them."""
    caller = current_caller()
    if not satisfaction.RESPONSES.allows(caller):
        return None
    query, found = {**window, "limit": str(MAX_PAGE if every else SHOWN_RESPONSES)}, []
    while True:
        outcome = await run(dependencies().use_case_deps, caller, satisfaction.RESPONSES, {"query": query})
        if isinstance(outcome, Refused):
            raise WebRefusal(outcome.status, outcome.message)
        found.extend(outcome.data.data)
        more = outcome.data.next_cursor is not None
        if not every or not more or len(found) >= MAX_COUNTED:
            return Ratings(report.totals.satisfaction.by_rating, found[:MAX_COUNTED],
                           not more and len(found) <= MAX_COUNTED)
        query = {**query, "cursor": outcome.data.next_cursor}


async def _period() -> Period:
    window = _window()
    report = await _report(window)
    return Period(report, await _ratings(window, report))


def seconds(value: float | None) -> str:
    """A time as a person reads it ("4 min", "1 h 5 min"); "—" when there is none."""
    return "—" if value is None else duration(int(round(value)))


def percent(value: float | None) -> str:
    """"87.5 %", the sign kept on the number's line (a narrow column would break between them)."""
    return "—" if value is None else f"{value:g}\u00a0%"


def goal_value(metric: str, value: float | None) -> str:
    if value is None:
        return "—"
    return seconds(value) if metric in SECONDS_METRICS else percent(value)


def _ratings_chart(ratings: Ratings) -> Chart:
    counts = ratings.counts()
    return grouped_bars([label for _, label, _ in counts], [("Ratings", [n for _, _, n in counts])],
                        "Satisfaction ratings by value this period: " +
                        ", ".join(f"{label} {n}" for _, label, n in counts) + ".")


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
    report, ratings = await _period()
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
                      ratings=ratings, ratings_chart=_ratings_chart(ratings) if ratings else None,
                      shown_responses=SHOWN_RESPONSES, metrics=METRICS, may_set_goals=may_set, subject=_subject,
                      seconds=seconds, percent=percent, goal_value=goal_value, notice=notice,
                      refusal=refused.message if refused else None)


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
            figures.resolution.median_seconds, figures.resolution.p90_seconds, figures.satisfaction.responses,
            figures.satisfaction.average_rating, figures.satisfaction.csat_percent]


def _response_row(r: CsatResponse) -> list[Any]:
    return [r.rated_at.isoformat(), r.phone, r.rating, r.label, r.comment, r.member.user_id if r.member else None,
            r.member.name if r.member else None, r.team.id if r.team else None, r.team.name if r.team else None]


_FIGURE_COLUMNS = ["resolved", "first_responses", "first_response_median_seconds", "first_response_p90_seconds",
                   "sla_met_percent", "resolutions_timed", "resolution_median_seconds", "resolution_p90_seconds",
                   "csat_responses", "csat_average", "csat_percent"]
TABLES: dict[str, tuple[list[str], Callable[[Period], list[list[Any]]]]] = {
    "days": (["day", "opened", "resolved"],
             lambda p: [[d.day.isoformat(), d.opened, d.resolved] for d in p.report.by_day]),
    "hours": (["hour", "opened", "resolved"], lambda p: [[h.hour, h.opened, h.resolved] for h in p.report.by_hour]),
    "members": (["user_id", "name", *_FIGURE_COLUMNS],
                lambda p: [[m.member.user_id, m.member.name, *_times(m)] for m in p.report.members]),
    "teams": (["team_id", "name", *_FIGURE_COLUMNS],
              lambda p: [[t.team.id, t.team.name, *_times(t)] for t in p.report.teams]),
    "handovers": (["reason", "count"], lambda p: [[x.reason, x.count] for x in p.report.bot.reasons]),
    "goals": (["metric", "subject", "target", "actual", "met"],
              lambda p: [[g.metric, _subject(g), g.target, g.actual, g.met] for g in p.report.goals]),
    "ratings": (["rating", "label", "count"], lambda p: [list(counted) for counted in p.ratings.counts()]),
    # Every response read (up to MAX_COUNTED), not only the page's latest: a spreadsheet wants them all.
    "responses": (["rated_at", "phone", "rating", "label", "comment", "member_id", "member", "team_id", "team"],
                  lambda p: [_response_row(r) for r in p.ratings.responses]),
}
RATING_TABLES = frozenset({"ratings", "responses"})


@blueprint.get("/<name>.csv")
@signed_in
async def table_csv(name: str):
    if name not in TABLES:
        raise WebRefusal(404, "No such table: the reports' tables are " + ", ".join(TABLES) + ".")
    window = _window()
    report = await _report(window)
    ratings = await _ratings(window, report, every=True) if name in RATING_TABLES else None
    if name in RATING_TABLES and ratings is None:
        raise WebRefusal(403, f"The survey's ratings need the {satisfaction.RESPONSES.needed()} permission.")
    columns, rows = TABLES[name]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    for row in rows(Period(report, ratings)):
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
