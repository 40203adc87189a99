"""The webhook endpoint actor against a real PostgreSQL and a real receiver: a backlog larger than its window
drains completely and in each chat's order; a stop mid-delivery loses nothing (the outbox holds it); a resumed
event continues its attempt count."""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone

import trio

from inbox_actors.runtime import ActorSystem
from inbox_actors.runtime.clock import WallClock
from inbox_actors.webhooks.address_guard import AddressGuard
from inbox_actors.webhooks.endpoint import EndpointDeps, wake_endpoint, webhook_endpoint_kind
from inbox_actors.webhooks.settings import new_secret
from inbox_actors.webhooks.transport import WebhookTransport
from tests import builders
from tests.webhook_receiver import webhook_receiver


@asynccontextmanager
async def endpoint_actors(db, *, window: int = 2_000, concurrency: int = 16):
    guard = AddressGuard((ipaddress.ip_network("127.0.0.0/8"),))
    async with WebhookTransport(guard) as transport:
        system = ActorSystem([webhook_endpoint_kind(EndpointDeps(
            db=db, clock=WallClock(), transport=transport, guard=guard, concurrency=concurrency, window=window))])
        async with trio.open_nursery() as nursery:
            await nursery.start(system.run)
            yield system
            await system.shutdown(0.5)


async def configured_workspace(db, url: str) -> int:
    workspace_id = await builders.workspace(db, "scale")
    member = await builders.member(db, workspace_id)
    await db.execute("INSERT INTO webhook_configs (workspace_id, endpoint_url, events, signing_secret, updated_by)"
                     " VALUES ($1, $2, $3, $4, $5)", workspace_id, url, ["message_received"], new_secret(), member)
    return workspace_id


async def append_events(db, workspace_id: int, count: int, phones: int) -> None:
    await db.execute(
        "INSERT INTO webhook_outbox (workspace_id, event, correlation_id, actor, data)"
        " SELECT $1::bigint, 'message_received', 'evt_t_' || $1::bigint || '_' || n, 'customer',"
        "  jsonb_build_object('phone', '9198' || lpad((n % $3)::text, 8, '0'), 'seq', n)"
        " FROM generate_series(1, $2) AS n", workspace_id, count, phones)


async def pending(db, workspace_id: int) -> int:
    return await db.fetchval("SELECT count(*) FROM webhook_outbox WHERE workspace_id = $1 AND outcome = 'pending'",
                             workspace_id)


async def wait_drained(db, workspace_id: int, timeout: float = 20) -> None:
    with trio.fail_after(timeout):
        while await pending(db, workspace_id):
            await trio.sleep(0.05)


async def test_a_backlog_larger_than_the_window_drains_in_each_chat_s_order(db):
    async with webhook_receiver() as receiver:
        workspace_id = await configured_workspace(db, receiver.url)
        await append_events(db, workspace_id, 600, phones=40)
        async with endpoint_actors(db, window=50, concurrency=8) as system:
            wake_endpoint(system, workspace_id)
            await wait_drained(db, workspace_id)
    assert await db.fetchval("SELECT count(*) FROM webhook_outbox WHERE workspace_id = $1 AND outcome = 'delivered'",
                             workspace_id) == 600
    sequences: dict[str, list[int]] = defaultdict(list)
    for delivery in receiver.received:
        data = delivery.envelope["data"]
        sequences[data["phone"]].append(data["seq"])
    assert sum(len(seqs) for seqs in sequences.values()) == 600, "each event once"
    assert all(seqs == sorted(seqs) for seqs in sequences.values()), "a chat's events in commit order"


async def test_a_stop_mid_delivery_loses_nothing_and_the_next_start_resumes(db):
    async with webhook_receiver() as receiver:
        workspace_id = await configured_workspace(db, receiver.url)
        await append_events(db, workspace_id, 40, phones=40)
        receiver.hold = trio.Event()  # requests arrive and hang: the actor is mid-delivery
        async with endpoint_actors(db) as system:
            wake_endpoint(system, workspace_id)
            await receiver.wait_for(16)
        assert await pending(db, workspace_id) == 40, "nothing was recorded as delivered"
        receiver.hold.set()
        receiver.hold = None
        async with endpoint_actors(db) as system:
            wake_endpoint(system, workspace_id)  # what the outbox listener does on start
            await wait_drained(db, workspace_id)
    correlation_ids = {d.envelope["correlation_id"] for d in receiver.received}
    assert len(correlation_ids) == 40, "every event arrived at least once"
    assert await db.fetchval("SELECT count(*) FROM webhook_attempts a JOIN webhook_outbox o ON o.id = a.outbox_id"
                             " WHERE o.workspace_id = $1", workspace_id) == 40, "only finished attempts recorded"


async def test_a_resumed_event_continues_its_attempt_count(db):
    async with webhook_receiver() as receiver:
        workspace_id = await configured_workspace(db, receiver.url)
        await append_events(db, workspace_id, 1, phones=1)
        await db.execute("UPDATE webhook_outbox SET attempts = 1, last_attempt_at = $2 WHERE workspace_id = $1",
                         workspace_id, datetime.now(timezone.utc) - timedelta(seconds=30))
        async with endpoint_actors(db) as system:
            wake_endpoint(system, workspace_id)
            await wait_drained(db, workspace_id)
    row = await db.fetchrow("SELECT attempts, outcome FROM webhook_outbox WHERE workspace_id = $1", workspace_id)
    assert (row["attempts"], row["outcome"]) == (2, "delivered")
    assert len(receiver.received) == 1
