"""The per-address limits over three nodes on one PostgreSQL, each the real service on a real socket: the per-IP
ceiling and the sign-in attempts count a client address once, whichever node its requests land on, because every
node admits them in the bucket of the node that owns the address (inbox_http/cluster/address_admission.py)."""

from __future__ import annotations

import msgspec
import pytest
import trio

from inbox_actors.access.sign_in import ACCOUNT_BUCKET_PREFIX, SIGN_IN_ATTEMPTS_PER_ACCOUNT
from inbox_http.cluster.address_admission import ADMISSION_PATH
from inbox_http.cluster.forwarding_proof import body_digest, sign
from tests.e2e.conftest import with_settings
from tests.e2e.running_nodes import CLUSTER_SECRET, running_cluster

CEILING = 30
WHOAMI = "/api/reporting/v1/whoami"


@pytest.fixture
async def nodes(db, service_settings):
    async with running_cluster(db, with_settings(service_settings, ip_limit_per_minute=CEILING), 3) as (_, nodes):
        yield nodes


def _admissions(nodes, way: str) -> int:
    return sum(int(node.state.metrics.address_admissions.labels(way)._value.get()) for node in nodes)


async def test_the_per_ip_ceiling_counts_an_address_once_whichever_node_it_lands_on(nodes):
    # Calls without a key are served where they land: each node's guard admits the address.
    statuses = [(await nodes[n % 3].client.get(WHOAMI)).status_code for n in range(CEILING + 3)]
    assert statuses == [401] * CEILING + [429] * 3
    # One node owns 127.0.0.1 and counted all of them: its own, and those the two others asked it to.
    assert _admissions(nodes, "here") == 11 and _admissions(nodes, "owner") == 22
    assert _admissions(nodes, "unanswered") == 0


async def test_sign_in_attempts_count_once_whichever_node_they_land_on(nodes):
    form = {"email": "ann@example.com", "password": "not-the-password"}
    statuses = [(await nodes[n % 3].client.post("/app/sign-in", data=form)).status_code
                for n in range(SIGN_IN_ATTEMPTS_PER_ACCOUNT + 2)]
    assert 429 not in statuses[:SIGN_IN_ATTEMPTS_PER_ACCOUNT], statuses
    assert statuses[SIGN_IN_ATTEMPTS_PER_ACCOUNT:] == [429, 429]


async def test_under_concurrent_calls_the_ceiling_is_exact_and_the_asks_go_together(nodes):
    owner = next(node for node in nodes if node.state.membership.owner_of("127.0.0.1") == node.url)
    asking = next(node for node in nodes if node is not owner)
    statuses: list[int] = []

    async def one_client() -> None:
        for _ in range(4):
            statuses.append((await asking.client.get(WHOAMI)).status_code)

    async with trio.open_nursery() as nursery:
        for _ in range(10):
            nursery.start_soon(one_client)
    assert sorted(statuses) == [401] * CEILING + [429] * 10
    batches = asking.state.metrics.address_admission_batch
    exchanges = batches._sum.get(), sum(bucket.get() for bucket in batches._buckets)
    assert exchanges[0] == 40 and exchanges[1] < 40, exchanges       # 40 asks, in fewer exchanges


async def test_an_admission_asked_without_the_clusters_proof_or_with_another_body_counts_nothing(nodes):
    asks = msgspec.json.encode([{"bucket": "127.0.0.1", "limit": CEILING}])
    forged = {"x-inbox-forwarded-by": nodes[1].url, "x-inbox-client-ip": "", "x-inbox-forwarded-proof": "0" * 64}
    for node in nodes:
        for headers in ({}, forged):
            answer = await node.client.post(ADMISSION_PATH, headers=headers, content=asks)
            assert answer.status_code == 404, answer.text
    # With the proof of another body: refused by the owner, 400.
    answer = await nodes[0].client.post(ADMISSION_PATH, content=asks, headers=_signed_by(nodes[1], b"[]"))
    assert answer.status_code == 400 and answer.json()["error"] == "forwarded_body_mismatch", answer.text
    statuses = [(await nodes[n % 3].client.get(WHOAMI)).status_code for n in range(CEILING + 1)]
    assert statuses == [401] * CEILING + [429]


def _signed_by(node, body: bytes) -> dict[str, str]:
    """The proof `node` would send an address admission of `body` with."""
    signed = sign(CLUSTER_SECRET.encode(), node.url.encode(), b"", b"POST", ADMISSION_PATH.encode(), body_digest(body))
    return {name.decode(): value.decode() for name, value in signed.headers}


async def test_an_admission_exchange_seen_on_the_wire_and_sent_again_counts_once(nodes):
    """Sent again, a captured exchange would use up an account's sign-in attempts on its owner: each copy is
    refused, and the account keeps the attempts the one real exchange left it."""
    email = "ann@example.com"
    bucket = ACCOUNT_BUCKET_PREFIX + email
    owner = next(node for node in nodes if node.state.membership.owner_of(bucket) == node.url)
    asking = next(node for node in nodes if node is not owner)
    asks = msgspec.json.encode([{"bucket": bucket, "limit": SIGN_IN_ATTEMPTS_PER_ACCOUNT}])
    captured = _signed_by(asking, asks)
    first = await owner.client.post(ADMISSION_PATH, content=asks, headers=captured)
    assert first.status_code == 200 and first.json()[0]["allowed"], first.text
    for _ in range(5):
        again = await owner.client.post(ADMISSION_PATH, content=asks, headers=captured)
        assert (again.status_code, again.json()["error"]) == (403, "forwarding_replayed"), again.text
    form = {"email": email, "password": "not-the-password"}
    statuses = [(await nodes[n % 3].client.post("/app/sign-in", data=form)).status_code
                for n in range(SIGN_IN_ATTEMPTS_PER_ACCOUNT)]
    assert 429 not in statuses[:-1] and statuses[-1] == 429, statuses
