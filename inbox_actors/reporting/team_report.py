"""The team report: how the team did over a window, as the reports page draws it and `GET /api/team/report`
answers it (docs/team.md#reports).

- Volume: conversations opened (a customer's message that began a wait: nobody was waiting for an answer) and
  resolved, by day and by hour of the day, in a time zone (the caller's own by default).
- First human response: the first agent reply to each wait for a person, sent in the window (the team's
  performance counts the same), median and 90th percentile; the SLA met is the share of those that came before the
  wait's deadline (no breach was announced for it).
- Resolution: each resolve in the window, from the message that opened the conversation it closed.
- Satisfaction: the survey ratings that came in the window (team/csat.py): how many, their mean, and the share that
  were 4 or 5 (the CSAT score), credited to the member who held the chat (else who resolved it) and its team.
- The bot: the chats it worked (it replied, or handed them over), the share it handed over, and the reasons.
- The same per member and per team (a chat counts for the team whose queue it is in now), and each goal set
  beside the figure it is for (team/goals.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import msgspec

from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.domain.satisfaction import RATINGS
from inbox_actors.domain.team_ref import TeamRef
from inbox_actors.domain.time_zones import is_time_zone
from inbox_actors.paging.parameters import InvalidParameter
from inbox_actors.paging.windows import REPLIES_AND_MESSAGES, Window, window
from persistence.database import Database, Record
from persistence.queries import member_settings
from persistence.queries.reporting import team_report as queries
from persistence.statement_fence import fencing_statements

Args = Mapping[str, str | None]
KNOWN_ZONE = "tz must be an IANA time zone name, such as Europe/Berlin or Asia/Kolkata."


class Times(msgspec.Struct, frozen=True):
    """Durations in seconds: how many were timed, their median and 90th percentile (null when none)."""

    count: int
    median_seconds: float | None
    p90_seconds: float | None


class RatingCount(msgspec.Struct, frozen=True):
    rating: int
    label: str
    """Excellent (5), Good, Okay, Poor, Very poor (1): as the survey offered it."""
    count: int


class Satisfaction(msgspec.Struct, frozen=True):
    """Satisfaction survey ratings (1 to 5) that came in the window."""

    responses: int
    average_rating: float | None
    """The mean rating, to two places (null: no ratings)."""
    csat_percent: float | None
    """The share of ratings that were 4 or 5, the CSAT score (null: no ratings)."""
    by_rating: list[RatingCount]
    """How many of each rating, best first."""


class Figures(msgspec.Struct, frozen=True):
    """One subject's figures (the workspace, a member or a team)."""

    resolved: int
    first_human_response: Times
    sla_met_percent: float | None
    """Of the first human responses, the share sent before their wait's SLA deadline (null: none, or the workspace
    has no SLA policy)."""
    resolution: Times
    satisfaction: Satisfaction


class Day(msgspec.Struct, frozen=True):
    day: date
    opened: int
    resolved: int


class Hour(msgspec.Struct, frozen=True):
    hour: int
    """0 to 23, local time."""
    opened: int
    resolved: int


class HandoverReason(msgspec.Struct, frozen=True):
    reason: str
    count: int


class BotFigures(msgspec.Struct, frozen=True):
    chats: int
    """Chats the bot replied in or handed over in the window."""
    handed_over_chats: int
    handover_percent: float | None
    reasons: list[HandoverReason]


class MemberFigures(Figures, frozen=True):
    member: MemberRef


class TeamFigures(Figures, frozen=True):
    team: TeamRef


class TeamReport(msgspec.Struct, frozen=True):
    window: Window
    time_zone: str
    opened: int
    totals: Figures
    by_day: list[Day]
    by_hour: list[Hour]
    bot: BotFigures
    members: list[MemberFigures]
    teams: list[TeamFigures]


async def zone_of(db: Database, workspace_id: int, member_id: int | None, args: Args) -> str:
    """The report's time zone: `tz`, else the member's own, else UTC."""
    asked = args.get("tz")
    if asked is not None:
        if not _known(asked):
            raise InvalidParameter("invalid_tz", KNOWN_ZONE)
        return asked
    own = await member_settings.time_zone(db, workspace_id, member_id) if member_id else None
    return own if own and _known(own) else "UTC"


def _known(name: str) -> bool:
    return name == "UTC" or is_time_zone(name)


async def team_report(db: Database, workspace_id: int, member_id: int | None, args: Args,
                      now: datetime) -> TeamReport:
    span = window(args, now, REPLIES_AND_MESSAGES)
    zone = await zone_of(db, workspace_id, member_id, args)
    # Every figure from one snapshot, each statement planned for its window (a cached generic plan, blind to how
    # wide the window is, took seconds where the window's own takes milliseconds). A read: under no lease fence.
    with fencing_statements(None):
        async with db.transaction() as tx:
            await queries.one_snapshot(tx)
            opened = await queries.opened_by_hour(tx, workspace_id, span.start, span.end, zone)
            resolved = await queries.resolved_by_hour(tx, workspace_id, span.start, span.end, zone)
            responses = _levels(await queries.first_responses(tx, workspace_id, span.start, span.end))
            resolutions = _levels(await queries.resolution_times(tx, workspace_id, span.start, span.end))
            rated = _levels(await queries.satisfaction(tx, workspace_id, span.start, span.end))
            bot = await queries.bot_figures(tx, workspace_id, span.start, span.end)
            sla = await queries.has_sla(tx, workspace_id)
            people, teams = await queries.members_and_teams(tx, workspace_id)
    members = [MemberFigures(**_figures(sla, responses, resolutions, rated, ("member", row["id"])),
                             member=MemberRef(row["id"], row["name"]))
               for row in people if _works_chats(row) or any(("member", row["id"]) in figures
                                                             for figures in (responses, resolutions, rated))]
    return TeamReport(
        window=span, time_zone=zone, opened=sum(row["count"] for row in opened),
        totals=Figures(**_figures(sla, responses, resolutions, rated, ("all", None))),
        by_day=_days(opened, resolved, span, ZoneInfo(zone)), by_hour=_hours(opened, resolved),
        bot=_bot(bot), members=members,
        teams=[TeamFigures(**_figures(sla, responses, resolutions, rated, ("team", row["id"])),
                           team=TeamRef(row["id"], row["name"])) for row in teams])


def _works_chats(row: Record) -> bool:
    return row["status"] != "removed" and bool({"all", "inbox"} & set(row["permissions"]))


def _levels(rows: Iterable[Record]) -> dict[tuple[str, int | None], Record]:
    """Each row of a GROUPING SETS sum by what it sums: ("all", None), ("member", id) or ("team", id)."""
    found = {}
    for row in rows:
        level = row["level"]
        subject = row["member_id"] if level == "member" else row["team_id"] if level == "team" else None
        if level != "all" and subject is None:
            continue        # replies of no member, resolves by the system, chats in no team
        found[(level, subject)] = row
    return found


def _figures(sla: bool, responses: Mapping, resolutions: Mapping, rated: Mapping,
             subject: tuple[str, int | None]) -> dict:
    response, resolution = responses.get(subject), resolutions.get(subject)
    met = None
    if sla and response is not None and response["count"]:
        met = round(100.0 * (response["count"] - response["late"]) / response["count"], 1)
    return dict(resolved=resolution["count"] if resolution else 0, first_human_response=_times(response),
                sla_met_percent=met, resolution=_times(resolution, counted="timed"),
                satisfaction=_satisfaction(rated.get(subject)))


def _satisfaction(row: Record | None) -> Satisfaction:
    counts = [RatingCount(rating, label, row[f"rated_{rating}"] if row is not None else 0)
              for rating, label, _ in RATINGS]
    if row is None or not row["responses"]:
        return Satisfaction(0, None, None, counts)
    return Satisfaction(row["responses"], round(row["average"], 2),
                        round(100.0 * row["satisfied"] / row["responses"], 1), counts)


def _times(row: Record | None, counted: str = "count") -> Times:
    if row is None:
        return Times(0, None, None)
    return Times(row[counted], _rounded(row["median_seconds"]), _rounded(row["p90_seconds"]))


def _rounded(seconds: float | None) -> float | None:
    return round(seconds, 1) if seconds is not None else None


def _days(opened: list[Record], resolved: list[Record], span: Window, zone: ZoneInfo) -> list[Day]:
    """Every local day the window touches, oldest first, with its counts (zero when nothing happened)."""
    first, last = span.start.astimezone(zone).date(), span.end.astimezone(zone).date()
    if span.end.astimezone(zone).time() == datetime.min.time() and last > first:
        last -= timedelta(days=1)       # a window ending at local midnight does not touch the next day
    counts: dict[date, list[int]] = {}
    for which, rows in enumerate((opened, resolved)):
        for row in rows:
            counts.setdefault(row["hour"].date(), [0, 0])[which] += row["count"]
    days, day = [], first
    while day <= last:
        found = counts.get(day, [0, 0])
        days.append(Day(day, found[0], found[1]))
        day += timedelta(days=1)
    return days


def _hours(opened: list[Record], resolved: list[Record]) -> list[Hour]:
    counts = [[0, 0] for _ in range(24)]
    for which, rows in enumerate((opened, resolved)):
        for row in rows:
            counts[row["hour"].hour][which] += row["count"]
    return [Hour(hour, found[0], found[1]) for hour, found in enumerate(counts)]


def _bot(rows: list[Record]) -> BotFigures:
    chats, handed = rows[0]["chats"], rows[0]["handed_over_chats"]
    return BotFigures(chats, handed, round(100.0 * handed / chats, 1) if chats else None,
                      [HandoverReason(row["reason"], row["count"]) for row in rows if row["reason"] is not None])
