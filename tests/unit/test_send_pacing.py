"""The send schedule: no second ever holds more than the limit, and waits are as short as that allows."""

from __future__ import annotations

import pytest

from inbox_actors.domain.send_pacing import SendSchedule


def test_sends_within_the_limit_go_at_once_and_the_next_waits_for_the_oldest_to_leave():
    schedule = SendSchedule(limit=3, window=1.0)
    assert [schedule.reserve(10.0, max_wait=5) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert schedule.reserve(10.2, max_wait=5) == pytest.approx(0.8)
    assert schedule.reserve(10.2, max_wait=5) == pytest.approx(0.8)
    assert schedule.reserve(10.2, max_wait=5) == pytest.approx(0.8)
    assert schedule.reserve(10.2, max_wait=5) == pytest.approx(1.8)


def test_no_one_second_interval_holds_more_than_the_limit():
    schedule, times = SendSchedule(limit=80, window=1.0), []
    now = 0.0
    for n in range(2_000):
        now += 0.001  # 1,000 asks a second
        delay = schedule.reserve(now, max_wait=1e9)
        times.append(now + delay)
    times.sort()
    busiest = max(sum(1 for t in times[i:i + 200] if t < start + 1.0) for i, start in enumerate(times))
    assert busiest == 80
    # As fast as the limit allows: the 25th batch of 80 starts 24 s after the first (which took 0.08 s to ask).
    assert times[-1] == pytest.approx(24.08)


def test_a_saturated_number_refuses_without_reserving():
    schedule = SendSchedule(limit=1, window=1.0)
    assert schedule.reserve(0.0, max_wait=2) == 0.0
    assert schedule.reserve(0.0, max_wait=2) == pytest.approx(1.0)
    assert schedule.reserve(0.0, max_wait=2) == pytest.approx(2.0)
    assert schedule.reserve(0.0, max_wait=2) is None
    assert len(schedule) == 3
    assert schedule.reserve(5.0, max_wait=2) == 0.0 and len(schedule) == 1
