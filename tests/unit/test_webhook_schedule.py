"""One event's attempt schedule on trio's MockClock: the first attempt at once, then after 1 s and 4 s, only
after network errors, timeouts and 5xx; each attempt recorded before the next; a resumed event continues.

The receiver is scripted at the transport's seam (a third party we do not run); the transport itself is
tested against real sockets in tests/integration/test_webhook_transport.py.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
import trio

from inbox_actors.runtime.clock import TrioWallClock
from inbox_actors.webhooks.address_guard import AddressGuard
from inbox_actors.webhooks.delivery import ATTEMPT_TIMEOUT, Destination, OutboxEvent, deliver
from inbox_actors.webhooks.transport import AttemptResult


class ScriptedReceiver:
    """Answers each post with the next scripted result, noting when (trio time) and with what it was called."""

    def __init__(self, *results: AttemptResult) -> None:
        self.results = list(results)
        self.calls: list[tuple[float, float, dict]] = []

    async def post(self, endpoint, headers, body, *, timeout, before_write=None):
        self.calls.append((trio.current_time(), timeout, dict(headers)))
        return self.results.pop(0)


def answer(status: int | None, error: str | None = None) -> AttemptResult:
    return AttemptResult(status_code=status, error=error, duration_ms=3)


EVENT = OutboxEvent(id=7, event="message_received", correlation_id="evt_x_y", actor="customer",
                    data_json='{"phone": "919800000001"}')
DESTINATION = Destination(endpoint=AddressGuard().check_url("https://example.com/hook"), secret="whsec_c2VjcmV0")


async def run(receiver: ScriptedReceiver, event: OutboxEvent = EVENT, clock=None):
    recorded: list[tuple[float, object]] = []

    async def record(attempt) -> None:
        await trio.sleep(0.01)  # a commit takes a moment; the next attempt waits for it
        recorded.append((trio.current_time(), attempt))

    made = await deliver(event, DESTINATION, transport=receiver, clock=clock or TrioWallClock(), record=record)
    return made, recorded


async def test_two_5xx_then_success_take_attempts_at_0_1_and_5_seconds(autojump_clock):
    receiver = ScriptedReceiver(answer(500), answer(503), answer(200))
    start = trio.current_time()
    made, recorded = await run(receiver)
    times = [call[0] - start for call in receiver.calls]
    assert times[0] == 0
    assert times[1] == pytest.approx(1.0, abs=0.02) and times[2] - times[1] == pytest.approx(4.0, abs=0.02)
    assert [a.outcome for a in made] == ["pending", "pending", "delivered"]
    assert [a.attempt for a in made] == [1, 2, 3]
    assert all(call[1] == ATTEMPT_TIMEOUT == 8.0 for call in receiver.calls)
    # Each attempt was on record before the next began.
    for (recorded_at, _), next_call in zip(recorded, receiver.calls[1:]):
        assert recorded_at <= next_call[0]


async def test_network_errors_and_timeouts_are_retried_then_the_event_fails(autojump_clock):
    receiver = ScriptedReceiver(answer(None, "connection refused"), answer(None, "timeout after 8s"),
                                answer(None, "connection refused"))
    made, _ = await run(receiver)
    assert [a.outcome for a in made] == ["pending", "pending", "failed"]
    assert [a.error for a in made] == ["connection refused", "timeout after 8s", "connection refused"]


@pytest.mark.parametrize("status", [400, 404, 410, 429, 301, 302])
async def test_a_4xx_or_3xx_ends_the_event_after_one_attempt(autojump_clock, status):
    receiver = ScriptedReceiver(answer(status))
    made, _ = await run(receiver)
    assert [(a.attempt, a.outcome, a.status_code) for a in made] == [(1, "failed", status)]


async def test_a_resumed_event_continues_its_schedule_from_what_was_recorded(autojump_clock):
    clock = TrioWallClock()
    # Attempt 1 failed 3 s ago (before a restart): attempt 2 is due at once; attempt 3 waits the full 4 s.
    resumed = OutboxEvent(id=7, event="message_received", correlation_id="evt_x_y", actor="customer",
                          data_json="{}", attempts=1, last_attempt_at=clock.now() - timedelta(seconds=3))
    receiver = ScriptedReceiver(answer(502), answer(200))
    start = trio.current_time()
    made, _ = await run(receiver, resumed, clock)
    assert [a.attempt for a in made] == [2, 3]
    times = [call[0] - start for call in receiver.calls]
    assert times[0] == 0 and times[1] == pytest.approx(4.0, abs=0.02)


async def test_every_attempt_is_signed_afresh_with_the_same_correlation_id(autojump_clock):
    receiver = ScriptedReceiver(answer(500), answer(200))
    await run(receiver)
    first, second = (call[2] for call in receiver.calls)
    assert first[b"x-correlation-id"] == second[b"x-correlation-id"] == b"evt_x_y"
    assert int(second[b"x-webhook-timestamp"]) - int(first[b"x-webhook-timestamp"]) in (0, 1, 2)
    assert first[b"x-webhook-signature"].startswith(b"sha256=")
    assert second[b"webhook-signature"].startswith(b"v1,")
