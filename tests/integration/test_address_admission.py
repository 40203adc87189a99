"""A client address's bucket on the node that owns it, when that node does not answer: the request is counted here,
and the owner is left out of this node's choice for a while (inbox_http/cluster/address_admission.py). Real
PostgreSQL for the live nodes, a real closed port for the owner that is gone."""

from __future__ import annotations

import socket

import asyncpg

from inbox_actors.cluster.membership import ClusterMembership
from inbox_actors.monitoring.metrics import ServiceMetrics
from inbox_http.cluster.address_admission import ClusterAddresses

ME = "http://127.0.0.1:9"


def _closed_port() -> int:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        return held.getsockname()[1]


async def test_an_owner_that_does_not_answer_is_left_out_and_the_address_counted_here(db, bucket_actors):
    gone = f"http://127.0.0.1:{_closed_port()}"
    await db.execute("INSERT INTO cluster_nodes (node_id, seen_at) VALUES ($1, now()), ($2, now())", gone, ME)
    nodes = ClusterMembership(db, lambda: ME, within=8.0)
    await nodes.refresh()
    assert nodes.nodes() == tuple(sorted((gone, ME)))
    bucket = next(f"192.0.2.{n}" for n in range(256) if nodes.owner_of(f"192.0.2.{n}") == gone)
    metrics = ServiceMetrics()
    addresses = ClusterAddresses(bucket_actors, nodes, secret=b"test-cluster-secret", metrics=metrics)
    try:
        first = await addresses.admit(bucket, 2)
        assert (first.allowed, first.remaining) == (True, 1)
        assert nodes.owner_of(bucket) == ME                     # the node that did not answer is away now
        second, third = await addresses.admit(bucket, 2), await addresses.admit(bucket, 2)
        assert (second.allowed, third.allowed) == (True, False)  # all three counted in this node's bucket
    finally:
        await addresses.aclose()
    counted = {way: int(metrics.address_admissions.labels(way)._value.get()) for way in ("here", "owner", "unanswered")}
    assert counted == {"here": 2, "owner": 0, "unanswered": 1}


async def test_the_owner_of_an_address_is_the_same_in_every_view_and_moves_only_when_its_owner_leaves(db):
    three = ("http://10.0.0.1:8000", "http://10.0.0.2:8000", "http://10.0.0.3:8000")
    await db.execute("INSERT INTO cluster_nodes (node_id, seen_at) SELECT unnest($1::text[]), now()", list(three))
    views = [ClusterMembership(db, lambda own=own: own, within=8.0) for own in three]
    for view in views:
        await view.refresh()
    buckets = [f"198.51.100.{n}" for n in range(200)]
    owners = {bucket: views[0].owner_of(bucket) for bucket in buckets}
    assert all(view.owner_of(bucket) == owners[bucket] for view in views for bucket in buckets)
    assert {owners[bucket] for bucket in buckets} == set(three)          # spread over all of them
    await db.execute("DELETE FROM cluster_nodes WHERE node_id = $1", three[2])     # the third leaves
    await views[0].refresh()
    moved = [bucket for bucket in buckets if views[0].owner_of(bucket) != owners[bucket]]
    assert moved and all(owners[bucket] == three[2] for bucket in moved)


async def test_a_view_that_cannot_be_read_leaves_the_last_one_standing_and_stops_nothing(db):
    nodes = ClusterMembership(db, lambda: ME, within=8.0)
    others = ["http://127.0.0.2:8000", "http://127.0.0.3:8000"]
    # An outage, then a statement PostgreSQL cancelled: neither is raised, and the view read before stands.
    for other, error in zip(others, (None, asyncpg.QueryCanceledError("canceling statement due to user request"))):
        await db.execute("INSERT INTO cluster_nodes (node_id, seen_at) VALUES ($1, now())", other)
        fault = db.fail_next(lambda sql: "FROM cluster_nodes" in sql, error)
        await nodes.refresh()
        assert fault.raised == 1 and nodes.nodes() == (ME,)
    await nodes.refresh()
    assert nodes.nodes() == tuple(sorted((ME, *others)))
