"""A node's death seen by its liveness lock, against a real PostgreSQL, with keepers standing for nodes: a node whose
lock's session ends (as a killed process's does) has its workspaces taken by another within 2 s, not at its
leases' expiry (8 s); a paused node, whose session stays, keeps its lease until it expires; a node whose session
alone ends gives its leases up at once and holds its lock again."""

from __future__ import annotations

from contextlib import asynccontextmanager

import trio

from inbox_actors.cluster.crash_watch import CrashWatch
from inbox_actors.cluster.leases import LeaseKeeper
from inbox_actors.cluster.liveness import NodeLiveness
from persistence.queries import workspace_leases
from persistence.session_lock import SessionLock
from tests import builders
from tests.waiting import eventually


class Node:
    """A keeper with its liveness lock, as a node of a cluster has them (inbox_http/server.py)."""

    def __init__(self, db, name: str, *, ttl: float) -> None:
        self.name = name
        self.lost: list[int] = []
        self.taken: list[int] = []
        self.liveness = NodeLiveness(lambda node: SessionLock(db.url, node, application_name=f"test {node}"),
                                     lambda: name)
        self.keeper = LeaseKeeper(db, name, on_lost=self.lost.append, ttl=ttl, margin=ttl / 4, announce=True,
                                  liveness=self.liveness, on_taken=self.taken.append)
        self.watch = CrashWatch(self.keeper)


@asynccontextmanager
async def running(node: Node, *, watching: bool = False, renewing: bool = True):
    """The node's tasks; leaving the block ends them as a killed process ends (its session with it), telling
    nobody."""
    async with trio.open_nursery() as nursery:
        await nursery.start(node.liveness.run, node.keeper.wait_named)
        if renewing:
            await nursery.start(node.keeper.run)
        if watching:
            await nursery.start(node.watch.run)
        yield node
        nursery.cancel_scope.cancel()


async def test_a_dead_nodes_workspaces_are_taken_by_another_within_two_seconds_of_its_death(db):
    first, second = await builders.workspace(db), await builders.workspace(db)
    b = Node(db, "node-b", ttl=8.0)
    async with running(b, watching=True):
        a = Node(db, "node-a", ttl=8.0)
        async with running(a):
            assert await a.keeper.acquire(first) == 1 and await a.keeper.acquire(second) == 1
            assert await b.keeper.acquire(first) is None                  # alive: its lease governs
            await eventually(lambda: "node-a" in b.watch._seen_held or None, interval=0.05)
        died = trio.current_time()

        async def both_b() -> bool | None:
            owners = [await workspace_leases.owner(db, workspace) for workspace in (first, second)]
            return True if owners == [("node-b", 2), ("node-b", 2)] else None

        await eventually(both_b, timeout=5.0, interval=0.02)
        assert trio.current_time() - died < 2.0                           # the leases had 8 s left
        assert sorted(b.taken) == sorted([first, second])                  # each takeover told (broadcasts resume)
        assert b.keeper.dead_nodes == ("node-a",)


async def test_a_paused_node_keeps_its_sessions_and_its_lease_until_it_expires(db):
    """Node a stops renewing (paused) but its liveness lock's session stays: node b may not take its workspace
    before the lease expires, watch as it may, and takes it once it has."""
    workspace_id = await builders.workspace(db)
    b = Node(db, "node-b", ttl=1.5)
    async with running(b, watching=True):
        a = Node(db, "node-a", ttl=1.5)
        async with running(a, renewing=False):
            await workspace_leases.seen(db, "node-a")          # as its first renewal would have said
            # The lease expires 1.5 s after PostgreSQL ran the take: after `sent`, before `taken_at`.
            sent = trio.current_time()
            assert await a.keeper.acquire(workspace_id) == 1
            taken_at = trio.current_time()
            while trio.current_time() - taken_at < 1.2:        # short of the lease's 1.5 s
                assert await b.keeper.acquire(workspace_id) is None
                await trio.sleep(0.1)
            assert b.keeper.dead_nodes == ()
            assert await eventually(lambda: b.keeper.acquire(workspace_id), timeout=3.0, interval=0.05) == 2
            assert trio.current_time() - sent >= 1.5


async def test_a_node_whose_liveness_session_ends_gives_up_its_leases_at_once_and_holds_its_lock_again(db):
    workspace_id = await builders.workspace(db)
    a = Node(db, "node-a", ttl=8.0)
    async with running(a):
        assert await a.keeper.acquire(workspace_id) == 1
        # An operator ends the session (the pool's connection, for the look, is another).
        ended = await db.fetchval("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity"
                                  " WHERE application_name = 'test node-a'")
        assert ended == 1
        await eventually(lambda: a.lost or None, timeout=1.0, interval=0.01)
        assert a.lost == [workspace_id] and a.keeper.epoch(workspace_id) is None
        await eventually(lambda: a.liveness.holding or None, timeout=3.0, interval=0.02)
        assert await a.keeper.acquire(workspace_id) == 2       # its own lease: taken again at once
