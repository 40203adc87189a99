"""Webhook delivery over real sockets: a chat's events reach a receiver signed as documented, in the chat's
order; failures are retried on the spec's schedule or not at all; the log shows every attempt; plans, the
settings and the test call behave as docs/webhooks.md says."""

from __future__ import annotations

import re
from collections import deque
from datetime import datetime, timedelta, timezone
from typing import Any, Awaitable, Callable

import pytest
import trio
from standardwebhooks import Webhook

from inbox_actors.domain import events
from inbox_actors.webhooks import endpoint
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.waiting import eventually
from tests.webhook_receiver import webhook_receiver

CONFIG = "/api/webhook/outbound/config"
DELIVERIES = "/api/webhook/outbound/deliveries"
PHONE = "919812345670"


async def subscribe(service, auth: dict, url: str, chosen=events.ALL_EVENTS) -> str:
    response = await service.client.put(CONFIG, headers=auth, json={"endpoint_url": url, "events": list(chosen)})
    assert response.status_code == 200, response.text
    return response.json()["secret"]


async def log_of(service, auth: dict, **params) -> dict:
    response = await service.client.get(DELIVERIES, headers=auth, params=params)
    assert response.status_code == 200, response.text
    return response.json()


async def test_a_chat_s_events_arrive_signed_in_order_and_verifiable_with_standard_webhooks(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    auth = bearer(key)
    async with webhook_receiver() as receiver:
        secret = await subscribe(service, auth, receiver.url, [events.CONTACT_CREATED, events.MESSAGE_RECEIVED])
        await customer_writes(service, number, PHONE, "Hello there")
        await customer_writes(service, number, PHONE, "Second message")
        await receiver.wait_for(3)

        first, hello, second = receiver.received[:3]
        assert [r.event for r in receiver.received[:3]] == ["contact_created", "message_received", "message_received"]
        assert hello.envelope["data"]["text"] == "Hello there" and second.envelope["data"]["text"] == "Second message"
        for delivery in receiver.received:
            envelope = delivery.envelope
            assert set(envelope) == {"event", "sent_at", "correlation_id", "actor", "data"}
            assert re.fullmatch(r"evt_[0-9a-z]+_[0-9a-f]{24}", envelope["correlation_id"])
            assert delivery.headers["x-correlation-id"] == envelope["correlation_id"]
            assert delivery.headers["x-webhook-event"] == envelope["event"]
            assert delivery.signed_by(secret)
            sent_at = datetime.fromisoformat(envelope["sent_at"].replace("Z", "+00:00"))
            # The attempt's time: the event's, or later when an attempt was made again (a loaded machine's timeout).
            assert -1 < int(delivery.headers["x-webhook-timestamp"]) - sent_at.timestamp() < 30
            assert abs(sent_at - datetime.now(timezone.utc)) < timedelta(seconds=30)
            # A receiver using the Standard Webhooks library verifies the same request, timestamp included.
            assert Webhook(secret).verify(delivery.body, delivery.headers) == envelope
            assert delivery.headers["webhook-id"] == envelope["correlation_id"]
        assert first.envelope["actor"] == "customer" and first.envelope["data"]["phone"] == PHONE
        assert not first.signed_by(secret + "x")

    await eventually(lambda: _count_delivered(service, workspace_id, 3))
    log = await log_of(service, auth)
    assert [entry["event"] for entry in log["data"][-3:]] == ["message_received", "message_received",
                                                             "contact_created"], "newest first"
    # Delivered, each last attempt answered 200. (On a loaded machine an attempt may time out and be made again;
    # the order and the receiver's view above hold either way.)
    assert all(entry["outcome"] == "delivered" and entry["attempts"][-1]["status_code"] == 200
               for entry in log["data"]), log["data"]


async def test_a_5xx_is_retried_after_1_and_4_seconds_and_a_4xx_or_3xx_is_not(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    auth = bearer(key)
    async with webhook_receiver() as receiver:
        await subscribe(service, auth, receiver.url, [events.MESSAGE_RECEIVED])
        receiver.answers.extend([500, 503, 200])
        await customer_writes(service, number, PHONE, "flaky receiver")
        await receiver.wait_for(3, timeout=15)
        arrivals = [r.at for r in receiver.received]
        assert arrivals[1] - arrivals[0] == pytest.approx(1.0, abs=0.4)
        assert arrivals[2] - arrivals[1] == pytest.approx(4.0, abs=0.6)
        assert len({r.envelope["correlation_id"] for r in receiver.received}) == 1, "the same event each time"

        entry = (await eventually(lambda: _delivered_entry(service, auth)))
        assert [a["status_code"] for a in entry["attempts"]] == [500, 503, 200]
        assert [a["attempt"] for a in entry["attempts"]] == [1, 2, 3]

        receiver.received.clear()
        receiver.answers.extend([404, 302])
        await customer_writes(service, number, "919812345671", "rejected")
        await customer_writes(service, number, "919812345672", "redirected")
        await receiver.wait_for(2)

        async def both_failed():
            log = await log_of(service, auth, outcome="failed")
            return log if len(log["data"]) == 2 else None

        # "failed" is final: the endpoint never takes a failed event again, so no retry can follow.
        failed = await eventually(both_failed)
        assert len(receiver.received) == 2
    assert sorted(entry["attempts"][0]["status_code"] for entry in failed["data"]) == [302, 404]
    assert all(len(entry["attempts"]) == 1 for entry in failed["data"])


async def _delivered_entry(service, auth):
    log = await log_of(service, auth, outcome="delivered")
    return log["data"][0] if log["data"] else None


async def test_three_failures_end_the_event_as_failed_with_each_error_in_the_log(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    auth = bearer(key)
    # Nothing listens on this port: every attempt is a network error.
    await subscribe(service, auth, "http://127.0.0.1:9/hook", [events.MESSAGE_RECEIVED])
    await customer_writes(service, number, PHONE, "nobody listens")

    async def failed():
        log = await log_of(service, auth, outcome="failed")
        return log["data"][0] if log["data"] else None

    entry = await eventually(failed, timeout=15)
    assert [a["attempt"] for a in entry["attempts"]] == [1, 2, 3]
    assert all(a["status_code"] is None and a["error"] for a in entry["attempts"])
    assert "whsec_" not in str(entry)


async def test_unsubscribed_events_are_skipped_and_a_plan_drop_stops_scale_events(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    auth = bearer(key)
    async with webhook_receiver() as receiver:
        await subscribe(service, auth, receiver.url,
                        [events.MESSAGE_RECEIVED, events.CONVERSATION_SEEN, events.MESSAGE_STATUS])
        await customer_writes(service, number, PHONE, "one")
        await receiver.wait_for(1)
        opened = await service.client.post(f"/api/inbox/conversations/{PHONE}/open", headers=auth)
        assert opened.status_code == 200, opened.text
        await receiver.wait_for(2)
        assert [r.event for r in receiver.received] == ["message_received", "conversation_seen"]

        # On Growth the subscribed Scale events stop: a send's delivery statuses are skipped.
        await change_plan(service, workspace_id, "growth")
        sent = await service.client.post("/api/send-message", headers=auth, json={"to": PHONE, "message": "hi"})
        assert sent.status_code == 200, sent.text
        await eventually(lambda: _skipped(service, workspace_id, "message_status", 1))
        await customer_writes(service, number, PHONE, "a sentinel")
        await receiver.wait_for(3)
        assert [r.event for r in receiver.received] == ["message_received", "conversation_seen", "message_received"]

        await change_plan(service, workspace_id, "starter")
        await customer_writes(service, number, PHONE, "starter now")
        await eventually(lambda: _skipped(service, workspace_id, "message_received", 1))
        assert len(receiver.received) == 3
    skipped = await service.db.fetch("SELECT DISTINCT event FROM webhook_outbox WHERE workspace_id = $1"
                                     " AND outcome = 'skipped'", workspace_id)
    assert {row["event"] for row in skipped} >= {"contact_created", "message_status", "message_sent",
                                                 "message_received"}


async def change_plan(service, workspace_id: int, plan: str) -> None:
    """Change the workspace's plan straight in the database, and return once its webhook endpoint has heard."""
    await until_the_endpoint_hears(service, workspace_id, lambda: service.db.execute(
        "UPDATE workspaces SET plan = $2 WHERE id = $1", workspace_id, plan))


async def until_the_endpoint_hears(service, workspace_id: int, change: Callable[[], Awaitable[Any]]) -> None:
    """Make `change`, an access change (the plan, a key) written straight to the database, and return once the
    workspace's webhook endpoint has heard of it: the change is announced (NOTIFY), and the endpoint, told,
    reads its settings and hooks afresh for the next event.

    First the endpoint settles: nothing in its mailbox (a Wake told by an earlier call would pass for the one
    awaited), no pump or delivery running (a read of its settings begun before the change would be kept after
    it). Then it has heard once it handled a message after the change (the test tells it nothing else), or when
    it is not in memory (it reads them when it starts)."""
    def stats():
        return service.actors.statistics(endpoint.KIND, str(workspace_id))

    await eventually(lambda: (s := stats()) is None or (s.mailbox_used == 0 and s.tasks_running == 0),
                     what="the webhook endpoint settling")
    before = trio.current_time()
    await change()
    await eventually(lambda: (s := stats()) is None or (s.last_activity_at or before) > before,
                     timeout=5, interval=0.005, what="the webhook endpoint hearing of the change")


async def _skipped(service, workspace_id: int, event: str, count: int) -> bool:
    return await service.db.fetchval("SELECT count(*) FROM webhook_outbox WHERE workspace_id = $1 AND event = $2"
                                     " AND outcome = 'skipped'", workspace_id, event) >= count


async def test_the_test_call_delivers_a_signed_event_now_and_logs_it(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    auth = bearer(key)
    async with webhook_receiver() as receiver:
        secret = await subscribe(service, auth, receiver.url, [])
        receiver.answers.extend([502])
        response = await service.client.post("/api/webhook/outbound/test", headers=auth, timeout=30)
        assert response.status_code == 200, response.text
        sent = response.json()
        assert sent["event"] == "webhook_test" and sent["outcome"] == "delivered"
        assert [a["status_code"] for a in sent["attempts"]] == [502, 200]
        assert len(receiver.received) == 2 and receiver.received[1].signed_by(secret)
        assert receiver.received[1].envelope["correlation_id"] == sent["correlation_id"]
    log = await log_of(service, auth, event="webhook_test")
    assert log["data"][0]["correlation_id"] == sent["correlation_id"] and log["data"][0]["test"] is True


async def test_the_delivery_log_pages_newest_first_with_a_cursor_bound_to_its_filters(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    auth = bearer(key)
    async with webhook_receiver() as receiver:
        await subscribe(service, auth, receiver.url, [events.MESSAGE_RECEIVED])
        for n in range(5):
            await customer_writes(service, number, f"91981234{5680 + n}", f"m{n}")
        await receiver.wait_for(5)
    await eventually(lambda: _count_delivered(service, workspace_id, 5))
    first = await log_of(service, auth, limit=2, event="message_received")
    second = await log_of(service, auth, limit=2, event="message_received", cursor=first["next_cursor"])
    third = await log_of(service, auth, limit=2, event="message_received", cursor=second["next_cursor"])
    ids = [e["id"] for page in (first, second, third) for e in page["data"]]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 5 and third["next_cursor"] is None
    for params, code in (({"outcome": "lost"}, "invalid_outcome"), ({"event": "nope"}, "invalid_event"),
                         ({"limit": "0"}, "invalid_limit"), ({"cursor": "garbage"}, "invalid_cursor"),
                         ({"cursor": first["next_cursor"]}, "invalid_cursor")):
        response = await service.client.get(DELIVERIES, headers=auth, params=params)
        assert response.status_code == 400 and response.json()["error"] == code, (params, response.text)


async def _count_delivered(service, workspace_id: int, count: int) -> bool:
    return await service.db.fetchval("SELECT count(*) FROM webhook_outbox WHERE workspace_id = $1"
                                     " AND outcome = 'delivered'", workspace_id) >= count


async def test_a_slow_chat_does_not_hold_back_another_chat(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    auth = bearer(key)
    async with webhook_receiver() as receiver:
        await subscribe(service, auth, receiver.url, [events.MESSAGE_RECEIVED])
        receiver.answers = deque([500])  # the first chat's event fails once and waits 1 s for its retry
        await customer_writes(service, number, "919800000001", "slow")
        await receiver.wait_for(1)
        await customer_writes(service, number, "919800000002", "fast")
        await receiver.wait_for(2)
        assert receiver.received[1].envelope["data"]["text"] == "fast", "not behind the other chat's retry"
        await customer_writes(service, number, "919800000001", "after slow")
        await receiver.wait_for(4, timeout=5)
        texts = [r.envelope["data"]["text"] for r in receiver.received]
        assert texts.index("slow", 2) < texts.index("after slow"), "one chat's events keep their order"
