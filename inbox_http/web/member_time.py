"""Times as the agent workspace shows them: in the member's time zone, and "3 min ago" / "waiting 3 min" that the
page's script keeps counting.

Each is a `<time>` element whose `datetime` is the moment in UTC, so the script (`app.js`) can rewrite it without
asking the service: a clock time into the member's zone (theirs as stored, else their browser's), on load and after
each swap; a relative time every 30 s. Its text as rendered here is already right when the member's zone is known
(`Session.time_zone`, set through `use_cases/member_settings.py`) and UTC before that, labelled where the page
does not say otherwise. A zone is labelled by its offset ("UTC+05:30"), the same text in Python and in the
browser's `Intl`, so a rewrite by the script changes nothing the service already got right.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from markupsafe import Markup, escape
from quart import Quart, g

from inbox_http.dependencies import dependencies
from inbox_http.web.pages import ago, duration

CLOCK_FORMAT = "%d %b %H:%M"


def member_zone() -> ZoneInfo | timezone:
    """The signed-in member's time zone; UTC while it is not known (or names a zone this machine lacks)."""
    session = g.get("session")
    name = getattr(session, "time_zone", None)
    if name:
        try:
            return ZoneInfo(name)
        except (ValueError, OSError):
            pass
    return timezone.utc


def local_clock(moment: datetime | None) -> str:
    """"28 Nov 14:05" in the member's time zone."""
    return "" if moment is None else moment.astimezone(member_zone()).strftime(CLOCK_FORMAT)


def zoned_time(moment: datetime | None) -> Markup:
    """A time the page says nothing else about: the member's zone named, "28 Nov 14:05 UTC+05:30"."""
    if moment is None:
        return Markup("")
    here = moment.astimezone(member_zone())
    return _time(moment, f"{here.strftime(CLOCK_FORMAT)} {zone_label(here)}", "data-zoned")


def zone_label(moment: datetime) -> str:
    """"UTC", or "UTC+05:30": the offset, as the script writes it from `Intl`'s `longOffset`."""
    offset = moment.utcoffset() or timedelta(0)
    if not offset:
        return "UTC"
    minutes = int(offset.total_seconds()) // 60
    sign, minutes = ("-" if minutes < 0 else "+"), abs(minutes)
    return f"UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def ago_time(moment: datetime | None) -> Markup:
    """"3 min ago", counted on by the script from the moment."""
    return Markup("") if moment is None else _time(moment, ago(moment), "data-ago")


def waiting_time(seconds: int | None) -> Markup:
    """"3 min" of waiting, counted on by the script from when the wait began."""
    if seconds is None:
        return Markup("")
    began = dependencies().clock.now() - timedelta(seconds=seconds)
    return _time(began, duration(seconds), "data-waiting")


def _time(moment: datetime, text: str, kind: str) -> Markup:
    stamp = moment.astimezone(timezone.utc).isoformat(timespec="seconds")
    return Markup(f'<time datetime="{escape(stamp)}" {kind}>{escape(text)}</time>')


def server_now() -> str:
    """The service's time, from which the script counts (a browser's clock may be off)."""
    return dependencies().clock.now().astimezone(timezone.utc).isoformat(timespec="seconds")


def install(app: Quart) -> None:
    app.jinja_env.filters.update(local_clock=local_clock, zoned_time=zoned_time, ago_time=ago_time,
                                 waiting_time=waiting_time)
    app.jinja_env.globals["server_now"] = server_now
