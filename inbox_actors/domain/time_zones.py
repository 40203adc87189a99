"""The time zones this machine knows: what a member's setting and a report's `tz` may name."""

from __future__ import annotations

import functools
import zoneinfo


@functools.cache
def known_time_zones() -> frozenset[str]:
    """The IANA names this machine's time zone database has (the system's, else the tzdata package's)."""
    return frozenset(zoneinfo.available_timezones())


def is_time_zone(name: str) -> bool:
    return name in known_time_zones()
