"""Reporting windows: which stretch of time a read covers, as the spec defines it.

`since` (alias `from`) is an ISO 8601 date-time or a date `YYYY-MM-DD` meaning the start of that UTC day; `to`
(alias `until`) defaults to now. A date-time without an offset is taken as UTC. Defaults: 30 days for chat
lists, 7 for replies and messages; the longest window is 400 days for chat lists, 90 for replies and messages.
The window used is echoed in responses as `window: {from, to}`.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone

import msgspec

from inbox_actors.paging.parameters import InvalidParameter

CHAT_LISTS = (30, 400)            # (default days, longest days)
REPLIES_AND_MESSAGES = (7, 90)
MAX_OLDER_THAN = timedelta(days=90)
DEFAULT_OLDER_THAN = "30m"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_OLDER_THAN = re.compile(r"^(\d{1,9})([smhd])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _at_most(limit: int) -> str:
    """A regular expression for the whole numbers 0 to `limit`, written without leading zeros."""
    digits = str(limit)
    choices = ["0"] if limit else []
    if len(digits) > 1:
        choices.append(rf"[1-9]\d{{0,{len(digits) - 2}}}")
    for i, digit in enumerate(digits):
        low = "1" if i == 0 else "0"
        if int(digit) > int(low):
            choices.append(f"{digits[:i]}[{low}-{int(digit) - 1}]" + (rf"\d{{{len(digits) - i - 1}}}"
                                                                        if i < len(digits) - 1 else ""))
    choices.append(digits)
    return "(?:" + "|".join(dict.fromkeys(choices)) + ")"


# `older_than` as a JSON Schema pattern: a number and a unit, at most MAX_OLDER_THAN.
OLDER_THAN_PATTERN = r"^\s*(?:" + "|".join(
    f"{_at_most(int(MAX_OLDER_THAN.total_seconds()) // seconds)}{unit}" for unit, seconds in _UNIT_SECONDS.items()
) + r")\s*$"


class Window(msgspec.Struct, frozen=True, rename={"start": "from", "end": "to"}):
    start: datetime
    end: datetime


def instant(raw: str, name: str) -> datetime:
    """A date-time or a date (the start of that UTC day), in UTC."""
    text = raw.strip()
    try:
        if _DATE.match(text):
            day = date.fromisoformat(text)
            return datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
        value = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InvalidParameter("invalid_since", f"{name} must be an ISO 8601 date-time or a date YYYY-MM-DD.") \
            from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def window(args: dict[str, str | None], now: datetime, limits: tuple[int, int]) -> Window:
    """The window of `since`/`from` and `to`/`until` (`args` maps each name to its raw value or None)."""
    default_days, longest_days = limits
    since_raw = _first(args, "since", "from")
    to_raw = _first(args, "to", "until")
    end = instant(to_raw[1], to_raw[0]) if to_raw else now
    if since_raw:
        start = instant(since_raw[1], since_raw[0])
    elif end - datetime.min.replace(tzinfo=end.tzinfo) < timedelta(days=default_days):
        # The default window would begin before the calendar does (`to` in year 1).
        raise InvalidParameter(f"invalid_{to_raw[0]}" if to_raw else "invalid_to",
                               f"{to_raw[0] if to_raw else 'to'} is too early to end a window; give since too.")
    else:
        start = end - timedelta(days=default_days)
    if start > end:
        raise InvalidParameter("since_after_to", "since must not be later than to.")
    if end - start > timedelta(days=longest_days):
        raise InvalidParameter("window_too_large", f"The window may be at most {longest_days} days long.")
    return Window(start, end)


def optional_window(args: dict[str, str | None]) -> tuple[datetime | None, datetime | None]:
    """since/to for reads over a chat's whole life: each bound only if given."""
    since_raw = _first(args, "since", "from")
    to_raw = _first(args, "to", "until")
    start = instant(since_raw[1], since_raw[0]) if since_raw else None
    end = instant(to_raw[1], to_raw[0]) if to_raw else None
    if start is not None and end is not None and start > end:
        raise InvalidParameter("since_after_to", "since must not be later than to.")
    return start, end


def older_than(raw: str | None) -> timedelta:
    """`<number><s|m|h|d>`, default 30m, at most 90 days."""
    match = _OLDER_THAN.match((raw if raw is not None else DEFAULT_OLDER_THAN).strip())
    if match is None:
        raise InvalidParameter("invalid_older_than", "older_than must be a number and a unit s, m, h or d, "
                               "such as 30m, 2h or 1d.")
    span = timedelta(seconds=int(match[1]) * _UNIT_SECONDS[match[2]])
    if span > MAX_OLDER_THAN:
        raise InvalidParameter("invalid_older_than", "older_than may be at most 90 days.")
    return span


def _first(args: dict[str, str | None], name: str, alias: str) -> tuple[str, str] | None:
    """(the name used, its value) for a parameter given under its name or its alias (not both differently)."""
    value, other = args.get(name), args.get(alias)
    if value is not None and other is not None and value != other:
        raise InvalidParameter("invalid_since" if name == "since" else "invalid_to",
                               f"Give {name} or {alias}, not both.")
    if value is not None:
        return name, value
    if other is not None:
        return alias, other
    return None
