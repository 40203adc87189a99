import random

import pytest

from inbox_actors.domain.rate_window import SlidingWindow


def test_admits_up_to_the_limit_then_refuses_until_the_oldest_leaves():
    window = SlidingWindow(3)
    assert [window.admit(t).allowed for t in (0.0, 1.0, 2.0, 3.0)] == [True, True, True, False]
    refused = window.admit(30.0)
    assert not refused.allowed
    assert refused.retry_after_seconds == 30  # the admission at t=0 leaves at t=60
    assert window.admit(60.0).allowed
    assert not window.admit(60.5).allowed
    assert window.admit(61.0).allowed


def test_headers_state():
    window = SlidingWindow(5)
    first = window.admit(10.0)
    assert (first.limit, first.remaining, first.reset_seconds) == (5, 4, 60)
    later = window.admit(40.0)
    assert (later.remaining, later.reset_seconds) == (3, 30)
    idle = window.admit(200.0)
    assert (idle.remaining, idle.reset_seconds) == (4, 60)


def test_memory_follows_the_traffic_not_the_limit():
    window = SlidingWindow(100_000)
    for t in range(10):
        window.admit(float(t))
    assert len(window._admitted) == 10
    window.admit(100.0)
    assert len(window._admitted) == 1


def test_no_sixty_second_interval_ever_exceeds_the_limit():
    rng = random.Random(7)
    limit = 50
    window = SlidingWindow(limit)
    now, admitted = 0.0, []
    for _ in range(20_000):
        now += rng.expovariate(5.0)  # ~300 requests a minute against a limit of 50
        if window.admit(now).allowed:
            admitted.append(now)
    start = 0
    for end in range(len(admitted)):
        while admitted[end] - admitted[start] >= 60.0:
            start += 1
        assert end - start + 1 <= limit
    # And the limit is used, not merely respected: nearly 50 per minute over the run.
    assert len(admitted) >= 0.95 * limit * now / 60.0


def test_resize_keeps_what_was_counted():
    window = SlidingWindow(10)
    for t in range(10):
        window.admit(float(t))
    window.resize(4)
    assert window.limit == 4
    refused = window.admit(10.0)
    assert not refused.allowed and refused.remaining == 0
    # Ten are counted against a limit of four: the seventh oldest (t=6) must leave first, at t=66.
    assert refused.retry_after_seconds == 56
    window.resize(20)
    assert window.admit(10.0).remaining == 9


def test_limit_must_be_positive():
    with pytest.raises(ValueError):
        SlidingWindow(0)


def test_peek_admits_nothing():
    window = SlidingWindow(2)
    window.admit(0.0)
    assert window.peek(1.0).remaining == 1
    assert window.peek(1.0).remaining == 1
    assert window.admit(1.0).remaining == 0
    assert window.peek(60.5).remaining == 1
