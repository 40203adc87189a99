"""The team report's pure parts: its local days, goals judged by their figure's direction, and the bar charts'
geometry (what the reports page draws)."""

from __future__ import annotations

from datetime import date, datetime, timezone
from zoneinfo import ZoneInfo

import msgspec

from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.paging.windows import Window
from inbox_actors.reporting import team_report
from inbox_actors.reporting.team_report import BotFigures, Figures, MemberFigures, Satisfaction, TeamReport, Times
from inbox_actors.team.goals import Goal, judge
from inbox_http.web.bar_charts import BASELINE, HEIGHT, TOP, goal_bars, grouped_bars

UTC = timezone.utc


def test_a_week_from_local_midnight_to_local_midnight_is_seven_days_and_each_count_lands_on_its_local_day():
    zone = ZoneInfo("Asia/Kolkata")
    span = Window(datetime(2026, 11, 22, 18, 30, tzinfo=UTC), datetime(2026, 11, 29, 18, 30, tzinfo=UTC))
    opened = [{"hour": datetime(2026, 11, 23, 0, 0), "count": 2}]      # local time, as `AT TIME ZONE` gives it
    resolved = [{"hour": datetime(2026, 11, 29, 23, 0), "count": 1}]
    days = team_report._days(opened, resolved, span, zone)
    assert [d.day for d in days] == [date(2026, 11, n) for n in range(23, 30)]
    assert (days[0].opened, days[-1].resolved) == (2, 1)
    hours = team_report._hours(opened, resolved)
    assert len(hours) == 24 and hours[0].opened == 2 and hours[23].resolved == 1


def _report(median: float | None, met: float | None, csat: float | None = None) -> TeamReport:
    figures = Figures(resolved=3, first_human_response=Times(3, median, median), sla_met_percent=met,
                      resolution=Times(3, 600.0, 900.0),
                      satisfaction=Satisfaction(2 if csat is not None else 0, 4.5 if csat is not None else None, csat,
                                                []))
    return TeamReport(window=Window(datetime(2026, 11, 23, tzinfo=UTC), datetime(2026, 11, 28, tzinfo=UTC)),
                      time_zone="UTC", opened=3, totals=figures, by_day=[], by_hour=[],
                      bot=BotFigures(0, 0, None, []),
                      members=[MemberFigures(**msgspec.structs.asdict(figures), member=MemberRef(7, "Ravi"))],
                      teams=[])


def _goal(metric: str, target: float, member: MemberRef | None = None) -> Goal:
    return Goal(id=1, metric=metric, target=target, team=None, member=member,
                updated_at=datetime(2026, 11, 28, tzinfo=UTC), updated_by=None)


def test_a_time_is_met_at_or_under_its_target_and_sla_met_at_or_over_it_and_nothing_measured_is_not_judged():
    assert judge(_goal("first_response_median_seconds", 300), _report(300.0, 90.0)).met is True
    assert judge(_goal("first_response_median_seconds", 300), _report(301.0, 90.0)).met is False
    assert judge(_goal("sla_met_percent", 90), _report(1.0, 90.0)).met is True
    assert judge(_goal("sla_met_percent", 95), _report(1.0, 90.0)).met is False
    assert judge(_goal("csat_percent", 80), _report(1.0, 90.0, csat=80.0)).met is True
    assert judge(_goal("csat_percent", 85), _report(1.0, 90.0, csat=80.0)).met is False
    assert judge(_goal("csat_percent", 85), _report(1.0, 90.0)).actual is None
    unmeasured = judge(_goal("first_response_median_seconds", 300), _report(None, None))
    assert (unmeasured.actual, unmeasured.met) == (None, None)
    ravi = judge(_goal("resolution_median_seconds", 600, MemberRef(7, "Ravi")), _report(1.0, 1.0))
    assert (ravi.actual, ravi.met) == (600.0, True)
    nobody = judge(_goal("resolution_median_seconds", 300, MemberRef(99, "Gone")), _report(1.0, 1.0))
    assert (nobody.actual, nobody.met) == (None, None)


def test_bars_scale_to_the_largest_value_a_zero_stays_a_line_and_a_goal_line_stands_at_its_share():
    chart = grouped_bars(["Mon", "Tue"], [("Opened", [4, 0]), ("Resolved", [2, 1])], "Each day.")
    tallest = max(chart.bars, key=lambda bar: bar.height)
    assert (tallest.value, tallest.y) == (4, TOP) and chart.top_value == "4"
    assert min(bar.height for bar in chart.bars) == BASELINE
    assert all(bar.y + bar.height <= HEIGHT for bar in chart.bars) and len(chart.labels) == 2
    goals = goal_bars([("First response", 150.0, 300.0, True, "2 min against 5 min"),
                       ("SLA met", None, 90.0, None, "— against 90 %")], "1 of 2 goals met.")
    first, unmeasured = goals.rows
    assert first.width < first.goal_x - goals.left and unmeasured.width == 0
