"""The event catalog and what each plan may receive; the credits_threshold payload."""

from __future__ import annotations

from datetime import datetime, timezone

from inbox_actors.domain import events
from inbox_actors.domain.plans import Plan


def test_the_catalog_lists_the_eleven_events_with_their_plan():
    assert [entry.event for entry in events.CATALOG] == list(events.ALL_EVENTS) and len(events.CATALOG) == 12
    assert {entry.event for entry in events.CATALOG if entry.plan == "any"} == set(events.CORE_EVENTS)
    assert all(entry.group and entry.description.endswith(".") for entry in events.CATALOG)


def test_starter_receives_none_growth_the_core_five_scale_all():
    assert events.events_in_plan(Plan.STARTER) == ()
    assert events.events_in_plan(Plan.GROWTH) == events.CORE_EVENTS
    assert events.events_in_plan(Plan.SCALE) == events.ALL_EVENTS


def test_the_credits_threshold_payload_names_the_level_and_both_balances():
    data = events.credits_threshold_data(level=100, balance=95, previous_balance=102,
                                         at=datetime(2026, 11, 23, 10, 0, tzinfo=timezone.utc))
    assert data == {"level": 100, "balance": 95, "previous_balance": 102, "at": "2026-11-23T10:00:00Z"}
