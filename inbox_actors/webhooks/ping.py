"""The webhook ping, `POST /api/webhook/outbound/test`: a signed `webhook_test` event, delivered now by the call
that asks for it.

It follows the same rules as every event (signatures, attempt schedule, address checks) and is recorded in
the delivery log, but it goes to the endpoint whatever events the settings subscribe to, and the endpoint actor
never picks it up (the outbox row is marked `test`).
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from inbox_actors.domain import events
from inbox_actors.domain.plans import Plan
from inbox_actors.runtime.clock import Clock
from inbox_actors.webhooks.address_guard import AddressGuard, InvalidEndpointUrl
from inbox_actors.webhooks.attempt_log import AttemptLog
from inbox_actors.webhooks.delivery import Destination, OutboxEvent, deliver
from inbox_actors.webhooks.settings import NOT_IN_PLAN, SettingsRefusal
from inbox_actors.webhooks.transport import WebhookTransport
from persistence.database import Database
from persistence.queries import webhook_configs as config_queries
from persistence.queries.webhook_delivery import insert_test_event


class AttemptView(msgspec.Struct, frozen=True):
    attempt: int
    at: datetime
    status_code: int | None
    error: str | None
    duration_ms: int


class SentTestEvent(msgspec.Struct, frozen=True):
    event: str
    correlation_id: str
    endpoint_url: str
    outcome: str
    """"delivered" or "failed"."""
    attempts: list[AttemptView]


async def send_test_event(db: Database, guard: AddressGuard, transport: WebhookTransport, clock: Clock, *,
                          workspace_id: int, plan: Plan, actor: str) -> SentTestEvent | SettingsRefusal:
    if plan is Plan.STARTER:
        return NOT_IN_PLAN
    config = await config_queries.find_config(db, workspace_id)
    if config is None:
        return SettingsRefusal(404, "not_found", "No webhook endpoint is configured; save the settings first.")
    try:
        endpoint = guard.check_url(config["endpoint_url"])
    except InvalidEndpointUrl as err:
        return SettingsRefusal(400, "invalid_endpoint_url", str(err))
    now = clock.now()
    correlation_id = events.new_correlation_id()
    data = msgspec.json.encode({
        "message": "A test event from Inbox Actors: your endpoint received and can verify it.",
        "workspace_id": workspace_id, "at": events.iso(now)}).decode()
    outbox_id = await insert_test_event(db, workspace_id=workspace_id, correlation_id=correlation_id,
                                        event=events.WEBHOOK_TEST, actor=actor, data=data)
    event = OutboxEvent(id=outbox_id, event=events.WEBHOOK_TEST, correlation_id=correlation_id, actor=actor,
                        data_json=data)
    made = await deliver(event, Destination(endpoint=endpoint, secret=config["signing_secret"]),
                         transport=transport, clock=clock, record=AttemptLog(db).record)
    return SentTestEvent(
        event=events.WEBHOOK_TEST, correlation_id=correlation_id, endpoint_url=config["endpoint_url"],
        outcome=made[-1].outcome,
        attempts=[AttemptView(attempt=a.attempt, at=a.at, status_code=a.status_code, error=a.error,
                              duration_ms=a.duration_ms) for a in made])
