"""Three nodes on one PostgreSQL, each the real service on a real socket, sharing one platform (the first node's
built-in simulator): requests for one workspace spread over all three are answered as one node answers them,
because every one of them is served by the node holding the workspace's lease, the others relaying it there."""

from __future__ import annotations

import json
import re

import pytest
import trio

from inbox_actors.access.activity_log import wait_recorded
from inbox_http.cluster.forwarding_proof import body_digest, sign
from tests.e2e.chat_helpers import chat, customer_writes, outbox_events, scale_workspace
from tests.e2e.conftest import bearer, with_settings
from tests.e2e.running_nodes import (
    CLUSTER_SECRET,
    cluster_settings,
    on_first_nodes_platform,
    running_node,
    running_node_of_its_own,
)
from tests.e2e.test_bad_input import body_of, chunked_over_the_limit_then_another, status_of
from tests.waiting import eventually

PHONE = "919812345777"


@pytest.fixture
async def nodes(db, service_settings):
    # Each node on a pool of its own, as each process has (running_nodes.own_pool); the first on `db`.
    shared = cluster_settings(service_settings)
    async with running_node(db, shared) as first:
        platform = on_first_nodes_platform(shared, first)
        async with running_node_of_its_own(db, platform) as second, running_node_of_its_own(db, platform) as third:
            yield [first, second, third]


async def test_one_workspace_spread_over_three_nodes_is_served_by_one_of_them(nodes):
    first, second, third = nodes
    workspace_id, number, _, key = await scale_workspace(first.state.db)
    # The customer's message reaches the first node (the simulator posts there); the chat is whichever node's takes
    # the workspace first: the second's, asked before anyone else.
    assert (await second.client.get("/api/reporting/v1/whoami", headers=bearer(key))).status_code == 200
    assert second.holds(workspace_id) and not first.holds(workspace_id) and not third.holds(workspace_id)
    await customer_writes(first, number, PHONE, "Where is my order?")
    for node in nodes:
        assert (await chat(node, key, PHONE))["phone"] == PHONE

    answers = []
    for n, node in enumerate([first, second, third, first, third]):
        answers.append(await node.client.post("/api/send-message", headers=bearer(key),
                                              json={"to": PHONE, "message": f"Reply {n}"}))
    assert [answer.status_code for answer in answers] == [200] * 5
    # Every chat actor, key bucket and send pacer of the workspace lives on the second node alone.
    assert (first.live("conversation"), second.live("conversation"), third.live("conversation")) == (0, 1, 0)
    assert first.live("send_pacer") == third.live("send_pacer") == 0 and second.live("send_pacer") == 1
    assert first.live("key_rate_bucket") == third.live("key_rate_bucket") == 0

    sent = await first.state.db.fetch("SELECT text FROM messages WHERE text LIKE 'Reply %' AND status <> 'pending'")
    assert sorted(row["text"] for row in sent) == [f"Reply {n}" for n in range(5)]
    events = await outbox_events(first.state.db, workspace_id)
    assert events.count("message_received") == 1 and events.count("message_sent") == 5
    # What operators see: the first node relayed its calls and the customer's message, the second took them.
    relayed = (await first.client.get("/metrics")).text
    assert re.search(r'^inbox_node_requests_total\{way="relayed"\} [1-9]', relayed, re.M), relayed
    assert re.search(r"^inbox_node_workspaces_held 0\.0$", relayed, re.M)
    taken = (await second.client.get("/metrics")).text
    assert re.search(r'^inbox_node_requests_total\{way="taken"\} [1-9]', taken, re.M)
    assert re.search(r"^inbox_node_workspaces_held 1\.0$", taken, re.M)


async def test_an_idempotency_key_replays_on_any_node(nodes):
    first, second, third = nodes
    _, number, _, key = await scale_workspace(first.state.db)
    await customer_writes(first, number, PHONE, "hello")
    body, headers = {"to": PHONE, "message": "Once"}, {**bearer(key), "Idempotency-Key": "order-7"}
    answers = [await node.client.post("/api/send-message", headers=headers, json=body) for node in nodes]
    assert [answer.status_code for answer in answers] == [200] * 3
    assert len({answer.json()["messageId"] for answer in answers}) == 1
    assert await first.state.db.fetchval("SELECT count(*) FROM messages WHERE text = 'Once'") == 1


async def test_a_key_limit_holds_whichever_node_a_call_lands_on(nodes):
    from tests import builders

    issued = await builders.plaintext_key(nodes[0].state.db, rate_limit_per_minute=10)
    statuses = [(await nodes[n % 3].client.get("/api/reporting/v1/whoami", headers=bearer(issued.key))).status_code
                for n in range(13)]
    assert statuses == [200] * 10 + [429] * 3


async def test_a_node_that_stops_hands_its_workspaces_over_at_once(db, service_settings):
    shared = with_settings(service_settings, cluster_secret="test-cluster-secret")
    async with running_node(db, shared) as staying:
        workspace_id, _, _, key = await scale_workspace(db)
        async with running_node_of_its_own(db, shared) as leaving:
            assert (await leaving.client.get("/api/reporting/v1/whoami", headers=bearer(key))).status_code == 200
            assert leaving.holds(workspace_id)
            assert (await staying.client.get("/api/reporting/v1/whoami", headers=bearer(key))).status_code == 200
            assert not staying.holds(workspace_id)
        # Released on the way out: the next call takes it, with no expiry to wait for. The staying node still
        # remembers the leaving one as the holder: the relay finds it gone, and the call is served here, its body
        # read once.
        with trio.fail_after(2):
            made = await staying.client.post("/api/contacts", headers=bearer(key),
                                             json={"phone": "919812345778", "name": "Meera"})
        assert made.status_code in (200, 201), made.text
        assert staying.holds(workspace_id)
        assert await db.fetchval("SELECT name FROM contacts WHERE workspace_id = $1", workspace_id) == "Meera"


async def test_a_request_for_a_node_that_is_gone_is_answered_503_until_its_lease_expires(db, service_settings):
    shared = with_settings(service_settings, cluster_secret="test-cluster-secret")
    async with running_node(db, shared) as staying:
        workspace_id, _, _, key = await scale_workspace(db)
        await db.execute("INSERT INTO workspace_leases (workspace_id, node_id, epoch, expires_at)"
                         " VALUES ($1, 'http://127.0.0.1:9', 1, now() + interval '1 second')", workspace_id)
        gone = await staying.client.get("/api/reporting/v1/whoami", headers=bearer(key))
        assert gone.status_code == 503 and gone.json()["error"] == "node_unavailable"
        assert gone.headers["Retry-After"] == "1"

        async def answered() -> bool:
            return (await staying.client.get("/api/reporting/v1/whoami", headers=bearer(key))).status_code == 200

        await eventually(answered)
        assert staying.holds(workspace_id)


async def test_a_proof_seen_on_the_wire_carries_no_other_send_and_no_second_one(nodes):
    """A proof one node made for a send, claiming its client's address: taken once for that body, refused for
    another body (sent again: 403; made afresh and sent with another body: 400), so the claimed address is the
    caller's of the one send it was made for."""
    first, second, _third = nodes
    workspace_id, number, _, key = await scale_workspace(first.state.db)
    assert (await second.client.get("/api/reporting/v1/whoami", headers=bearer(key))).status_code == 200
    await customer_writes(first, number, PHONE, "hello")
    path = "/api/send-message"
    signed_for, other = (json.dumps({"to": PHONE, "message": text}).encode() for text in ("Signed", "Swapped"))

    def proof() -> dict[str, str]:
        made = sign(CLUSTER_SECRET.encode(), first.url.encode(), b"203.0.113.9", b"POST", path.encode(),
                    body_digest(signed_for))
        return {**bearer(key), "Content-Type": "application/json",
                **{name.decode(): value.decode() for name, value in made.headers}}

    captured = proof()
    taken = await second.client.post(path, content=signed_for, headers=captured)
    assert taken.status_code == 200, taken.text
    again = await second.client.post(path, content=other, headers=captured)
    assert (again.status_code, again.json()["error"]) == (403, "forwarding_replayed"), again.text
    swapped = await second.client.post(path, content=other, headers=proof())
    assert (swapped.status_code, swapped.json()["error"]) == (400, "forwarded_body_mismatch"), swapped.text

    texts = await first.state.db.fetch("SELECT text FROM messages WHERE text IN ('Signed', 'Swapped')")
    assert [row["text"] for row in texts] == ["Signed"]
    await wait_recorded(second.state.actors)
    sends = await first.state.db.fetch(
        "SELECT status, ip FROM key_activity WHERE workspace_id = $1 AND path = $2", workspace_id, path)
    assert [(row["status"], row["ip"]) for row in sends if row["ip"] == "203.0.113.9"] == [(200, "203.0.113.9")]


async def test_a_chunked_body_over_the_limit_relayed_to_the_workspaces_node_is_413(nodes):
    first, second, _third = nodes
    _, _, _, key = await scale_workspace(first.state.db)
    assert (await second.client.get("/api/reporting/v1/whoami", headers=bearer(key))).status_code == 200
    answer, after = await chunked_over_the_limit_then_another(first.url, "/api/bulk-send", key, 9 * 1024 * 1024)
    assert status_of(answer) == 413 and b'"error":"payload_too_large"' in body_of(answer), answer
    assert after is None or status_of(after) == 200, after
    assert (await first.client.get("/api/reporting/v1/whoami", headers=bearer(key))).status_code == 200
