"""Business hours: the weekly opening times that an SLA deadline counts in, and the deadline arithmetic. No I/O.

The deadline rule: only open time counts. A wait that begins while the workspace is open counts from its first
second; one that begins while it is closed starts counting at the next opening. Closed days, holidays and the
gaps between openings do not count. The deadline is the instant at which the SLA's seconds of open time have
passed; if they run out exactly at a closing time, the deadline is that closing instant, not the next opening.
Without business hours the clock runs around the clock: the deadline is the start plus the seconds.

Opening times are local wall-clock times in the workspace's time zone, turned into instants as zoneinfo does by
default (fold=0, the same choice as java.time and RFC 5545): a time skipped when clocks spring forward is moved
later by the length of the skip, and a time repeated when clocks fall back means its first occurrence. An opening
then counts the real seconds between its two instants, so a night opening loses an hour in spring and gains one in
autumn. A "24:00" close is 00:00 local of the next day.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
MAX_OPENINGS_PER_DAY = 4
MAX_HOLIDAYS = 366

_FIELDS = ("time_zone", "weekly", "holidays")
_OPENING_FIELDS = ("open", "close")
_CLOCK = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")
_END_OF_DAY = "24:00"
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_MINUTES_PER_DAY = 24 * 60
# These load, but are not a place's civil time: "localtime" is the server's own zone, and the "right/" copies count
# leap seconds, which would shift every deadline by about half a minute.
_REFUSED_ZONE_PREFIXES = ("localtime", "posixrules", "posix/", "right/")


class InvalidBusinessHours(ValueError):
    """str(err) is one English sentence for an API client, naming the field path."""


class Opening(msgspec.Struct, frozen=True):
    open: str  # "HH:MM", 00:00..23:59
    close: str  # "HH:MM", after open, up to "24:00" (end of day)


class BusinessHours(msgspec.Struct, frozen=True):
    time_zone: str  # IANA name, e.g. "Asia/Kolkata"
    weekly: dict[str, tuple[Opening, ...]]  # keys among DAYS; absent or empty: closed that day
    holidays: tuple[str, ...] = ()  # "YYYY-MM-DD" local dates, closed all day


def parse_business_hours(value: object) -> BusinessHours | None:
    """The validated setting from a decoded JSON value; None means no business hours. Raises InvalidBusinessHours."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidBusinessHours("business_hours must be an object or null.")
    for key in value:
        if key not in _FIELDS:
            raise InvalidBusinessHours(
                f"business_hours.{key} is not a known field; use time_zone, weekly and holidays."
            )
    for key in ("time_zone", "weekly"):
        if key not in value:
            raise InvalidBusinessHours(f"business_hours.{key} is required.")
    time_zone = _parse_time_zone(value["time_zone"])
    weekly = _parse_weekly(value["weekly"])
    if not weekly:
        raise InvalidBusinessHours(
            "business_hours.weekly must hold at least one opening; send business_hours as null for no business hours."
        )
    return BusinessHours(time_zone=time_zone, weekly=weekly, holidays=_parse_holidays(value.get("holidays", [])))


def business_hours_json(hours: BusinessHours | None) -> dict | None:
    """The stored and answered form, which parse_business_hours takes back unchanged."""
    if hours is None:
        return None
    return {
        "time_zone": hours.time_zone,
        "weekly": {
            day: [{"open": opening.open, "close": opening.close} for opening in hours.weekly[day]]
            for day in DAYS
            if hours.weekly.get(day)
        },
        "holidays": list(hours.holidays),
    }


def sla_deadline(since: datetime, seconds: int, hours: BusinessHours | None) -> datetime:
    """The instant, in UTC, at which `seconds` of open time have passed since `since` (see the module rule)."""
    if seconds < 0:
        raise ValueError("seconds must not be negative")
    since = _as_utc(since)
    if hours is None:
        return since + timedelta(seconds=seconds)
    remaining = timedelta(seconds=seconds)
    walk = _Walk(hours)
    for start, end in walk.open_intervals(since, last_day=walk.local_date(since) + _walk_limit(seconds, hours)):
        start = max(start, since)
        if end <= start:
            continue
        if remaining <= end - start:
            return start + remaining
        remaining -= end - start
    raise ValueError("no deadline found within the walk limit")


def open_seconds_between(start: datetime, end: datetime, hours: BusinessHours | None) -> float:
    """How many seconds of [start, end) lie inside opening hours; all of them without business hours."""
    if end <= start:
        return 0.0
    if hours is None:
        return (end - start).total_seconds()
    start, end = _as_utc(start), _as_utc(end)
    walk = _Walk(hours)
    # One day past end's local date: a DST shift can move the first opening of the next day before `end`.
    last_day = walk.local_date(end) + timedelta(days=1)
    total = timedelta()
    for opening_start, opening_end in walk.open_intervals(start, last_day=last_day):
        if opening_start >= end:
            break
        overlap = min(opening_end, end) - max(opening_start, start)
        if overlap > timedelta():
            total += overlap
    return total.total_seconds()


def _walk_limit(seconds: int, hours: BusinessHours) -> timedelta:
    """A bound on the days walked that valid hours never reach: twice the weeks the seconds need at the wall-clock
    weekly total (spring-forward nights can shorten a few weeks a year), one more week per holiday, and two weeks of
    slack for the partial weeks at either end. Only hours without any opening (built by hand) can exceed it."""
    weekly_seconds = sum(
        (_minutes(opening.close) - _minutes(opening.open)) * 60 for openings in hours.weekly.values()
        for opening in openings
    )
    if weekly_seconds <= 0:
        raise ValueError("business hours without any opening can never reach a deadline")
    weeks = 2 * math.ceil(seconds / weekly_seconds) + len(hours.holidays) + 2
    return timedelta(weeks=weeks)


class _Walk:
    """The opening intervals of a BusinessHours as UTC instants, day by day."""

    def __init__(self, hours: BusinessHours) -> None:
        self.zone = ZoneInfo(hours.time_zone)
        self.holidays = frozenset(date.fromisoformat(holiday) for holiday in hours.holidays)
        # Opening minutes by date.weekday() (Monday is 0, as in DAYS).
        self.minutes_by_weekday = tuple(
            tuple((_minutes(opening.open), _minutes(opening.close)) for opening in hours.weekly.get(day, ()))
            for day in DAYS
        )
        # The walk steps from one open weekday to the next, so a sparse week costs its open days, not seven.
        self.days_to_next_open_weekday = tuple(
            next((step for step in range(1, 8) if self.minutes_by_weekday[(weekday + step) % 7]), 1)
            for weekday in range(7)
        )

    def local_date(self, instant: datetime) -> date:
        return instant.astimezone(self.zone).date()

    def open_intervals(self, since: datetime, last_day: date) -> Iterator[tuple[datetime, datetime]]:
        """Non-overlapping, increasing [start, end) UTC intervals of the openings on local dates up to last_day,
        from the day before since's local date (a "24:00" close, moved by a DST gap, can reach into since's day)."""
        day = self.local_date(since) - timedelta(days=1)
        previous_end: datetime | None = None
        while day <= last_day:
            weekday = day.weekday()
            openings = () if day in self.holidays else self.minutes_by_weekday[weekday]
            for open_minutes, close_minutes in openings:
                start = self._instant(day, open_minutes)
                end = self._instant(day, close_minutes)
                # A time moved forward out of a DST gap can land after the next opening's start; clipping to the
                # previous end keeps every real second counted once.
                if previous_end is not None and start < previous_end:
                    start = previous_end
                if end > start:
                    yield start, end
                    previous_end = end
            day += timedelta(days=self.days_to_next_open_weekday[weekday])

    def _instant(self, day: date, minutes: int) -> datetime:
        if minutes == _MINUTES_PER_DAY:
            day, minutes = day + timedelta(days=1), 0
        local = datetime(day.year, day.month, day.day, minutes // 60, minutes % 60, tzinfo=self.zone)
        return local.astimezone(timezone.utc)


def _as_utc(instant: datetime) -> datetime:
    # A naive datetime would silently be read as the server's local time.
    if instant.utcoffset() is None:
        raise ValueError("instants must be timezone-aware")
    return instant.astimezone(timezone.utc)


def _minutes(clock: str) -> int:
    hours, minutes = clock.split(":")
    return int(hours) * 60 + int(minutes)


def _parse_time_zone(value: object) -> str:
    field = "business_hours.time_zone"
    if not isinstance(value, str):
        raise InvalidBusinessHours(f'{field} must be a string such as "Europe/Berlin".')
    unknown = InvalidBusinessHours(f'{field} must be an IANA time zone name such as "Europe/Berlin".')
    if value.startswith(_REFUSED_ZONE_PREFIXES):
        raise unknown
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise unknown from None
    return value


def _parse_weekly(value: object) -> dict[str, tuple[Opening, ...]]:
    if not isinstance(value, dict):
        raise InvalidBusinessHours("business_hours.weekly must be an object keyed by day, such as mon.")
    for key in value:
        if key not in DAYS:
            raise InvalidBusinessHours(
                f"business_hours.weekly.{key} is not a day; use mon, tue, wed, thu, fri, sat or sun."
            )
    weekly = {}
    for day in DAYS:
        if day in value:
            openings = _parse_day(f"business_hours.weekly.{day}", value[day])
            if openings:
                weekly[day] = openings
    return weekly


def _parse_day(field: str, value: object) -> tuple[Opening, ...]:
    if not isinstance(value, list):
        raise InvalidBusinessHours(f"{field} must be a list of openings.")
    if len(value) > MAX_OPENINGS_PER_DAY:
        raise InvalidBusinessHours(f"{field} may hold at most {MAX_OPENINGS_PER_DAY} openings.")
    indexed = sorted(
        ((index, _parse_opening(f"{field}[{index}]", item)) for index, item in enumerate(value)),
        key=lambda pair: pair[1].open,
    )
    for (earlier_index, earlier), (later_index, later) in zip(indexed, indexed[1:]):
        if later.open < earlier.close:  # "HH:MM" strings order like the times they name
            raise InvalidBusinessHours(
                f"{field}[{later_index}] overlaps {field}[{earlier_index}]; openings of one day must not overlap."
            )
    return tuple(opening for _, opening in indexed)


def _parse_opening(field: str, value: object) -> Opening:
    if not isinstance(value, dict):
        raise InvalidBusinessHours(f"{field} must be an object with open and close.")
    for key in value:
        if key not in _OPENING_FIELDS:
            raise InvalidBusinessHours(f"{field}.{key} is not a known field; use open and close.")
    for key in _OPENING_FIELDS:
        if key not in value:
            raise InvalidBusinessHours(f"{field}.{key} is required.")
    open_, close = value["open"], value["close"]
    if not isinstance(open_, str) or _CLOCK.fullmatch(open_) is None:
        raise InvalidBusinessHours(f'{field}.open must be a time "HH:MM" from 00:00 to 23:59.')
    if not isinstance(close, str) or (close != _END_OF_DAY and _CLOCK.fullmatch(close) is None):
        raise InvalidBusinessHours(f'{field}.close must be a time "HH:MM" up to 24:00.')
    if close <= open_:
        raise InvalidBusinessHours(f"{field}.close must be after open.")
    return Opening(open=open_, close=close)


def _parse_holidays(value: object) -> tuple[str, ...]:
    field = "business_hours.holidays"
    if not isinstance(value, list):
        raise InvalidBusinessHours(f'{field} must be a list of dates "YYYY-MM-DD".')
    if len(value) > MAX_HOLIDAYS:
        raise InvalidBusinessHours(f"{field} may hold at most {MAX_HOLIDAYS} dates.")
    first_index_by_date: dict[str, int] = {}
    for index, item in enumerate(value):
        if not isinstance(item, str) or _ISO_DATE.fullmatch(item) is None or not _is_calendar_date(item):
            raise InvalidBusinessHours(f'{field}[{index}] must be a date "YYYY-MM-DD".')
        if item in first_index_by_date:
            raise InvalidBusinessHours(f"{field}[{index}] repeats {field}[{first_index_by_date[item]}].")
        first_index_by_date[item] = index
    return tuple(sorted(first_index_by_date))


def _is_calendar_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True
