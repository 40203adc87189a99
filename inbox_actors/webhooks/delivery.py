"""One event's delivery: the spec's attempt schedule, each attempt signed afresh and recorded before the next.

Rules (the spec's "Delivery rules"): a 2xx is success; up to 3 attempts, the first at once, then after waits of
1 s and 4 s, only after a network error, a timeout or a 5xx; a 3xx (redirects are not followed) or a 4xx ends
the event at once; each attempt has 8 s. An event resumed after a restart continues its schedule from the
attempts already recorded.

Each attempt goes out only while the node still holds the event's workspace, checked right before the request is
written (inbox_actors/cluster/effect_fence.py): otherwise `deliver` raises EffectAbandoned and the event stays
pending in the outbox, as it was, for the node that holds the workspace now. A connector hook's copy is delivered
here too, under the same check.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

import msgspec
import trio

from inbox_actors.cluster.effect_fence import check_effect
from inbox_actors.runtime.clock import Clock
from inbox_actors.webhooks.address_guard import EndpointUrl
from inbox_actors.webhooks.signing import envelope_body, signed_headers
from inbox_actors.webhooks.transport import AttemptResult, WebhookTransport
from persistence.queries.webhook_delivery import AttemptRecord

MAX_ATTEMPTS = 3
WAITS_BEFORE_RETRY = (1.0, 4.0)
"""Seconds before attempt 2 and attempt 3, counted from the failure of the one before."""
ATTEMPT_TIMEOUT = 8.0

PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"


class OutboxEvent(msgspec.Struct, frozen=True):
    """An outbox row as delivery needs it; `attempts`/`last_attempt_at`: what earlier runs already recorded."""

    id: int
    event: str
    correlation_id: str
    actor: str
    data_json: str
    attempts: int = 0
    last_attempt_at: datetime | None = None
    hook_id: int | None = None
    """A connector hook's copy of the event (its body also carries the event's `id`, as the trigger's samples
    do); None: the event itself, for the workspace's endpoint."""


class Destination(msgspec.Struct, frozen=True):
    """Where and how to sign, as the settings said when the event was taken."""

    endpoint: EndpointUrl
    secret: str


def outcome_of(result: AttemptResult, attempt: int) -> str:
    if result.succeeded:
        return DELIVERED
    if result.retryable and attempt < MAX_ATTEMPTS:
        return PENDING
    return FAILED


async def deliver(event: OutboxEvent, destination: Destination, *, transport: WebhookTransport, clock: Clock,
                  record: Callable[[AttemptRecord], Awaitable[None]],
                  limiter: trio.Semaphore | None = None) -> list[AttemptRecord]:
    """Attempt `event` until it is delivered or has failed for good; each attempt is recorded (`record`
    returns once it is durable) before the next begins. Returns the attempts this call made."""
    made: list[AttemptRecord] = []
    attempt = event.attempts
    last_at = event.last_attempt_at
    while attempt < MAX_ATTEMPTS:
        attempt += 1
        if attempt > 1:
            await _wait_before(attempt, last_at, clock)
        if limiter is not None:
            async with limiter:
                result, at = await _attempt(event, destination, transport, clock)
        else:
            result, at = await _attempt(event, destination, transport, clock)
        outcome = outcome_of(result, attempt)
        done = AttemptRecord(outbox_id=event.id, attempt=attempt, at=at, status_code=result.status_code,
                             error=result.error, duration_ms=result.duration_ms, outcome=outcome)
        await record(done)
        made.append(done)
        if outcome != PENDING:
            break
        last_at = clock.now()
    return made


async def _attempt(event: OutboxEvent, destination: Destination, transport: WebhookTransport,
                   clock: Clock) -> tuple[AttemptResult, datetime]:
    at = clock.now()
    body = envelope_body(event=event.event, sent_at=at, correlation_id=event.correlation_id, actor=event.actor,
                         data_json=event.data_json,
                         item_id=event.correlation_id if event.hook_id is not None else None)
    headers = signed_headers(secret=destination.secret, body=body, event=event.event,
                             correlation_id=event.correlation_id, timestamp=int(at.timestamp()))
    return await transport.post(destination.endpoint, headers, body, timeout=ATTEMPT_TIMEOUT,
                                before_write=check_effect), at


async def _wait_before(attempt: int, last_at: datetime | None, clock: Clock) -> None:
    wait = WAITS_BEFORE_RETRY[attempt - 2]
    if last_at is not None:
        # A resumed event: part of the wait may have passed while the service was down.
        wait = min(wait, max(0.0, wait - (clock.now() - last_at).total_seconds()))
    await trio.sleep(wait)
