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
    # (now + delay recovers each slot to within a rounding error: 1e-9 of slack)
    busiest = max(sum(1 for t in times[i:i + 200] if t < start + 1.0 - 1e-9) for i, start in enumerate(times))
    assert busiest == 80
    # As fast as the limit allows: a burst of 16 at once (asked over 0.016 s), then one every 1/80 s.
    assert times[-1] == pytest.approx(0.016 + (2_000 - 16) / 80, abs=0.01)


def test_sends_are_spread_a_burst_at_a_time_not_a_second_s_worth_at_once():
    schedule, times = SendSchedule(limit=80, window=1.1), []
    for _ in range(200):
        times.append(schedule.reserve(0.0, max_wait=1e9))
    assert times[:16] == [0.0] * 16 and times == sorted(times)
    # No tenth of a second holds more than the burst and the tenth's share of the rate.
    busiest = max(sum(1 for t in times if start <= t < start + 0.1) for start in times)
    assert busiest <= 16 + 0.1 * 80 / 1.1 + 1
    # The burst is lent by the window: the limit's rate over it, however spread.
    assert (200 - 16) * 1.1 / 80 <= times[-1] <= 200 * 1.1 / 80


def test_a_saturated_number_refuses_without_reserving():
    schedule = SendSchedule(limit=1, window=1.0)
    assert schedule.reserve(0.0, max_wait=2) == 0.0
    assert schedule.reserve(0.0, max_wait=2) == pytest.approx(1.0)
    assert schedule.reserve(0.0, max_wait=2) == pytest.approx(2.0)
    assert schedule.reserve(0.0, max_wait=2) is None
    assert len(schedule) == 3
    assert schedule.reserve(5.0, max_wait=2) == 0.0 and len(schedule) == 1


def test_bulk_sends_leave_a_fifth_of_the_limit_to_replies():
    schedule = SendSchedule(limit=10, window=1.0)
    assert schedule.bulk_limit == 8
    assert [schedule.reserve_bulk(0.0) for _ in range(8)] == [0.0] * 8
    # The ninth bulk send waits for the first to leave the window; nothing was reserved for it.
    assert schedule.reserve_bulk(0.5) == pytest.approx(0.5)
    assert len(schedule) == 8
    # Replies still go at once.
    assert [schedule.reserve(0.5, max_wait=5) for _ in range(2)] == [0.0, 0.0]


def test_replies_go_first_when_both_want_the_whole_limit():
    """Replies asking as fast as bulk sends take every slot they ask for; bulk gets what is left."""
    schedule = SendSchedule(limit=10, window=1.0)
    replies = bulk = 0
    now = 0.0
    waiting_replies: list[float] = []
    for _ in range(10_000):
        now += 0.001
        delay = schedule.reserve(now, max_wait=5)
        if delay is not None:
            waiting_replies.append(delay)
            replies += 1
        if schedule.reserve_bulk(now) == 0.0:
            bulk += 1
    # 10 s of both at 1,000 asks a second: replies reserve their slots ahead, so bulk hardly ever fits.
    assert replies >= 95 and bulk <= 5


def test_bulk_never_delays_a_reply_beyond_its_share():
    """A number sending bulk at its full bulk lane: a reply burst of a fifth of the limit goes at once."""
    schedule = SendSchedule(limit=80, window=1.1)
    now, sent = 0.0, 0
    while now < 5.0:
        now += 0.001
        if schedule.reserve_bulk(now) == 0.0:
            sent += 1
    assert 64 * 4 <= sent <= 64 * 5 + 64
    assert [schedule.reserve(now, max_wait=5) for _ in range(16)] == [0.0] * 16
