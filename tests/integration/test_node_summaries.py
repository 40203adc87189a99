"""What each node publishes for the operators (cluster/node_summary.py, migration 033) and how GET /ops/cluster
reads a node's state from PostgreSQL (monitoring/cluster_view.py), against a real PostgreSQL: liveness locks taken
on connections of their own stand for the nodes' processes, rows written as a node at a given moment would have."""

from __future__ import annotations

from datetime import timedelta

import trio

from inbox_actors.cluster.node_summary import NodeSummaryPublisher
from inbox_actors.monitoring.cluster_view import cluster_view
from inbox_actors.monitoring.node_figures import KindActors, NodeFigures, NodeRequests, encode
from persistence.queries import node_summaries
from persistence.session_lock import SessionLock
from tests import builders
from tests.waiting import eventually

ME = "http://10.0.0.1:8080"


def figures(*, draining: bool = False, live: int = 3) -> NodeFigures:
    return NodeFigures(pid=4242, uptime_seconds=60.0, draining=draining, workspaces_held=0,
                       requests=NodeRequests(relayed=5, taken=7, unreachable=1),
                       actors={"conversation": KindActors(live, 1)}, clock_skew_seconds=0.002,
                       clock_skew_age_seconds=10.0)


async def publish_as(db, node: str, *, seconds_ago: float = 0.0, stopped: bool = False, **changes) -> None:
    await node_summaries.publish(db, node, "one", 4242, 60.0, encode(figures(**changes)))
    await db.execute("UPDATE node_summaries SET published_at = now() - make_interval(secs => $2),"
                     " stopped_at = CASE WHEN $3 THEN now() - make_interval(secs => $2) END WHERE node_id = $1",
                     node, seconds_ago, stopped)


async def view(db, **kwargs):
    shown = await cluster_view(db, this_node=ME, clustered=True, own=figures(), **kwargs)
    return {node.node: node for node in shown.nodes}, shown


async def test_each_state_is_read_from_the_lock_the_last_word_and_the_stop(db):
    locks = {name: SessionLock(db.url, name, application_name=f"test {name}") for name in
             ("http://alive", "http://draining", "http://silent", "http://stopping", "http://me")}
    for lock in locks.values():
        assert await lock.take(on_lost=lambda: None)
    try:
        await publish_as(db, "http://silent", seconds_ago=5)               # paused: its lock held, no word for 5 s
        await publish_as(db, "http://stopping", stopped=True)              # said it stops, still handing over
        await publish_as(db, "http://stopped", seconds_ago=60, stopped=True)
        await publish_as(db, "http://stopped-long-ago", seconds_ago=7200, stopped=True)
        await publish_as(db, "http://lost-yesterday", seconds_ago=25 * 3600)
        await publish_as(db, "http://lost", seconds_ago=1)                 # no lock: its process died
        await publish_as(db, "http://alive")
        await publish_as(db, "http://draining", draining=True)
        nodes, shown = await view(db)
        assert {name: node.state for name, node in nodes.items() if name.startswith("http://") and name != ME} == {
            "http://alive": "alive", "http://draining": "draining", "http://silent": "silent",
            "http://stopping": "stopping", "http://lost": "lost", "http://stopped": "stopped"}
        assert shown.states["lost"] >= 1 and set(shown.states) == {"alive", "draining", "silent", "lost", "stopping",
                                                                   "stopped"}
        lost = nodes["http://lost"]
        assert lost.liveness_lock is False and 0.9 <= lost.last_seen_seconds_ago < 5
        # A node lost keeps its last figures, with when it said them.
        assert lost.actors.live == 3 and lost.actors.failed == 1 and lost.requests.taken == 7
        assert lost.figures_seconds_ago == lost.last_seen_seconds_ago
        assert lost.clock_skew_seconds == 0.002 and 10.9 <= lost.clock_skew_measured_seconds_ago < 15
        assert nodes["http://stopping"].stopped_at is not None and nodes["http://alive"].stopped_at is None
        # This node: its own figures, now, whatever it published (nothing here).
        me = nodes[ME]
        assert me.this_node and me.state == "alive" and me.figures_seconds_ago == 0.0 and me.pid == 4242
    finally:
        for lock in locks.values():
            lock.release()


async def test_a_nodes_leases_are_listed_with_their_epochs_up_to_the_bound_and_counted_whole(db):
    workspaces = [await builders.workspace(db) for _ in range(3)]
    for epoch, workspace_id in enumerate(workspaces, start=1):
        await db.execute("INSERT INTO workspace_leases (workspace_id, node_id, epoch, expires_at)"
                         " VALUES ($1, 'http://holder', $2, now() + interval '8 seconds')", workspace_id, epoch)
    expired = await builders.workspace(db)
    await db.execute("INSERT INTO workspace_leases (workspace_id, node_id, epoch, expires_at)"
                     " VALUES ($1, 'http://holder', 9, now() - interval '1 second')", expired)
    nodes, _ = await view(db, leases_shown=2)
    holder = nodes["http://holder"]                       # known by its leases alone: it published nothing
    assert holder.state == "lost" and holder.actors is None and holder.figures_at is None
    assert holder.workspaces.held == 3
    assert [(lease.workspace_id, lease.epoch) for lease in holder.workspaces.leases] == [
        (workspaces[0], 1), (workspaces[1], 2)]
    assert all(7 < lease.expires_in_seconds <= 8 for lease in holder.workspaces.leases)


async def test_a_node_alone_sees_itself_only(db):
    await publish_as(db, "http://someone-else")
    shown = await cluster_view(db, this_node=ME, clustered=False, own=figures())
    assert [node.node for node in shown.nodes] == [ME]
    assert shown.nodes[0].liveness_lock is None and shown.nodes[0].state == "alive"


async def test_the_publisher_says_its_figures_every_round_and_that_it_stopped(db):
    named = trio.Event()
    publisher = NodeSummaryPublisher(db, lambda: "http://publisher", named.wait, lambda: figures(live=2), every=0.05)
    async with trio.open_nursery() as nursery:
        await nursery.start(publisher.run)
        named.set()
        await eventually(lambda: publisher.published >= 3 or None)
        row = await db.fetchrow("SELECT * FROM node_summaries WHERE node_id = 'http://publisher'")
        assert row["incarnation"] == publisher.incarnation and row["stopped_at"] is None
        assert '"conversation": {"live": 2' in row["figures"]
        first_start = row["started_at"]
        nursery.cancel_scope.cancel()
    row = await db.fetchrow("SELECT * FROM node_summaries WHERE node_id = 'http://publisher'")
    assert row["stopped_at"] is not None and row["started_at"] == first_start
    # Started again under the same name: a new incarnation, running again, started afresh.
    await trio.sleep(0.01)
    await node_summaries.publish(db, "http://publisher", "next", 4243, 0.0, encode(figures()))
    row = await db.fetchrow("SELECT * FROM node_summaries WHERE node_id = 'http://publisher'")
    assert row["stopped_at"] is None and row["pid"] == 4243 and row["started_at"] > first_start


async def test_rows_nobody_published_for_a_day_are_forgotten(db):
    await publish_as(db, "http://old", seconds_ago=2 * 86400)
    await publish_as(db, "http://recent")
    assert await node_summaries.prune(db, timedelta(days=1)) >= 1
    left = {row["node_id"] for row in await db.fetch("SELECT node_id FROM node_summaries")}
    assert "http://recent" in left and "http://old" not in left
