"""The availability rule (`team/presence.py`): what a member is now from what they chose, when a page of theirs was
last seen, the workspace's idle time and its business hours, each reason in its order; and how often an open page
says so."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from inbox_actors.domain.business_hours import parse_business_hours
from inbox_actors.team.presence import MAX_BEAT_SECONDS, beat_seconds, effective, is_open

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)  # a Friday
IDLE = 300


def _row(chosen="online", seen=timedelta(seconds=10), until=None, member_status="active"):
    return {"chosen": chosen, "seen_at": None if seen is None else NOW - seen, "after_hours_until": until,
            "member_status": member_status, "chosen_at": NOW - timedelta(hours=1)}


@pytest.mark.parametrize(("row", "hours_open", "expected"), [
    (_row(), True, ("online", "chosen")),
    (_row("busy"), True, ("busy", "chosen")),
    (_row("offline"), True, ("offline", "chosen")),
    (_row(seen=None), True, ("offline", "no_open_page")),
    (_row(seen=timedelta(seconds=IDLE)), True, ("online", "chosen")),          # exactly the idle time: still seen
    (_row(seen=timedelta(seconds=IDLE + 1)), True, ("offline", "no_open_page")),
    (_row(), False, ("offline", "outside_business_hours")),
    (_row(until=NOW + timedelta(hours=2)), False, ("online", "chosen")),        # chosen after hours, holds
    (_row(until=NOW), False, ("offline", "outside_business_hours")),           # until the opening, not past it
    (_row(member_status="suspended"), True, ("offline", "not_active")),
    (_row("offline", seen=None), False, ("offline", "chosen")),                 # their choice says it first
    (_row(seen=None), False, ("offline", "no_open_page")),
])
def test_what_a_member_is_now_and_why(row, hours_open, expected):
    found = effective(row, NOW, IDLE, hours_open)
    assert (found.status, found.reason) == expected
    assert found.chosen == row["chosen"]


def test_a_choice_made_after_hours_shows_until_when_it_holds_while_it_does():
    until = NOW + timedelta(hours=2)
    assert effective(_row(until=until), NOW, IDLE, False).chosen_until == until
    assert effective(_row(until=NOW - timedelta(days=1)), NOW, IDLE, True).chosen_until is None


def test_the_business_hours_are_open_inside_an_opening_and_not_at_its_close():
    hours = parse_business_hours({"time_zone": "Asia/Kolkata",
                                  "weekly": {"fri": [{"open": "09:00", "close": "18:00"}]}})
    friday = datetime(2026, 11, 27, tzinfo=timezone.utc)
    assert is_open(None, NOW)
    assert is_open(hours, friday + timedelta(hours=3, minutes=30))           # 09:00 in Kolkata
    assert not is_open(hours, friday + timedelta(hours=3, minutes=29))
    assert is_open(hours, friday + timedelta(hours=12, minutes=29))
    assert not is_open(hours, friday + timedelta(hours=12, minutes=30))      # 18:00 in Kolkata: closed
    assert not is_open(hours, friday + timedelta(days=1, hours=5))           # a Saturday


def test_an_open_page_beats_three_times_per_idle_time_and_at_least_every_15_seconds():
    assert beat_seconds(5) == pytest.approx(5 / 3)
    assert beat_seconds(300) == MAX_BEAT_SECONDS == 15.0
    assert beat_seconds(30) == 10.0
