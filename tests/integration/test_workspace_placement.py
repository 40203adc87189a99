"""Workspace placement against a real PostgreSQL, with two actor systems standing for two nodes: a workspace's actors
run on the node that holds its lease, the other node is told which node that is, a lost lease stops the workspace's
actors, a hand-over lets the other node take the workspace at once, and a node's own actors run anywhere."""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass

import pytest
import trio

from inbox_actors.cluster.leases import LeaseKeeper
from inbox_actors.cluster.placement import WorkspacePlacement
from inbox_actors.runtime import Actor, ActorCrashed, ActorKind, ActorSystem, ServedElsewhere, workspace_in_key
from persistence.statement_fence import LeaseLost
from tests import builders
from tests.waiting import eventually

TTL = 0.9


@dataclass(frozen=True)
class AskOnceOpen:
    """To a Probe: once `gate` is set, ask the actor (kind, key) its node's name and answer that (as a chat's actor
    asks its number's send pacer for a slot), or the ServedElsewhere that asking met."""
    gate: trio.Event
    kind: str
    key: str


class Probe(Actor):
    """Answers its node's name; counts its starts and stops on the node."""

    def __init__(self, key: str, node: Node) -> None:
        super().__init__(key)
        self.node = node

    async def on_start(self) -> None:
        self.node.started.append(self.key)

    async def receive(self, message: object) -> object:
        if isinstance(message, AskOnceOpen):
            await message.gate.wait()
            try:
                return await self.actors.ref(message.kind, message.key).ask("who")
            except ServedElsewhere as refused:
                return refused
        if message == "write":
            # A write of the workspace's (its name), in a transaction, as an actor's writes are.
            async with self.node.db.transaction() as tx:
                await tx.execute("UPDATE workspaces SET name = name || '.' WHERE id = $1", workspace_in_key(self.key))
        return self.node.name

    async def on_stop(self) -> None:
        self.node.stopped.append(self.key)


class Node:
    def __init__(self, db, name: str) -> None:
        self.name, self.db = name, db
        self.started: list[str] = []
        self.stopped: list[str] = []
        self.keeper = LeaseKeeper(db, name, on_lost=lambda workspace: None, ttl=TTL, margin=TTL / 3)
        self.placement = WorkspacePlacement(self.keeper)
        self.system = ActorSystem([
            ActorKind(name="chat", factory=lambda key: Probe(key, self), workspace_of=workspace_in_key),
            ActorKind(name="local", factory=lambda key: Probe(key, self)),
        ], placement=self.placement)
        self.keeper.on_lost = self.system.evict_workspace

    async def ask(self, kind: str, key: str) -> object:
        return await self.system.ref(kind, key).ask("who")


@asynccontextmanager
async def running(node: Node, *, renewing: bool = True):
    async with trio.open_nursery() as nursery:
        await nursery.start(node.system.run)
        if renewing:
            await nursery.start(node.keeper.run)
        yield node
        await node.system.shutdown(1.0)
        nursery.cancel_scope.cancel()


async def test_a_workspace_runs_on_the_node_that_took_it_and_the_other_is_told_which(db):
    workspace_id, other = await builders.workspace(db), await builders.workspace(db)
    async with running(Node(db, "node-a")) as a, running(Node(db, "node-b")) as b:
        assert await a.ask("chat", f"{workspace_id}:1555") == "node-a"
        with pytest.raises(ServedElsewhere) as refused:
            await b.ask("chat", f"{workspace_id}:1666")
        assert (refused.value.workspace_id, refused.value.owner) == (workspace_id, "node-a")
        assert b.started == []                                   # nothing of the workspace ran on b
        assert await b.ask("chat", f"{other}:1555") == "node-b"  # a workspace nobody held: b's now
        assert await b.ask("local", "anything") == "node-b"      # a node's own actor runs where it is asked for
        assert a.placement.holds(workspace_id) and not a.placement.holds(other)


async def test_senders_that_need_one_workspace_at_once_take_its_lease_once(db):
    workspace_id = await builders.workspace(db)
    async with running(Node(db, "node-a")) as a:
        answers: list[object] = []

        async def ask(phone: int) -> None:
            answers.append(await a.ask("chat", f"{workspace_id}:{phone}"))

        async with trio.open_nursery() as senders:
            for phone in range(20):
                senders.start_soon(ask, phone)
        assert answers == ["node-a"] * 20
    assert await db.fetchval("SELECT epoch FROM workspace_leases WHERE workspace_id = $1", workspace_id) == 1


async def test_a_node_that_loses_a_workspace_stops_its_actors_and_another_node_starts_them_afresh(db):
    """Node a stops renewing (its database is out of reach, say): its hold lapses at its own deadline (nothing it
    writes passes the fence), it stops the workspace's actors once the hold has stayed lapsed a lease's length, and
    node b, taking the workspace once PostgreSQL lets it, starts them afresh."""
    workspace_id = await builders.workspace(db)
    a = Node(db, "node-a")
    async with running(a, renewing=False), running(Node(db, "node-b")) as b:
        async with trio.open_nursery() as watch:
            watch.start_soon(a.keeper._watch_deadlines)          # the deadlines are watched; no renewal is made
            assert await a.ask("chat", f"{workspace_id}:1555") == "node-a"
            assert await a.ask("local", "timer") == "node-a"
            await eventually(lambda: a.stopped == [f"{workspace_id}:1555"])
            assert a.system.statistics("chat", f"{workspace_id}:1555") is None
            assert a.system.statistics("local", "timer") is not None   # the node's own actors stay

            async def answered_by_b() -> object:
                try:
                    return await b.ask("chat", f"{workspace_id}:1555")
                except ServedElsewhere:
                    return None                                  # not expired in PostgreSQL yet

            assert await eventually(answered_by_b, interval=0.02) == "node-b"
            with pytest.raises(ServedElsewhere):
                await a.ask("chat", f"{workspace_id}:1555")
            watch.cancel_scope.cancel()


async def test_a_node_hands_its_workspaces_over_and_another_takes_them_at_once(db):
    workspace_id = await builders.workspace(db)
    async with running(Node(db, "node-a")) as a, running(Node(db, "node-b")) as b:
        assert await a.ask("chat", f"{workspace_id}:1555") == "node-a"
        await a.system.shutdown(1.0)
        assert await a.keeper.release_all() == 1
        # No expiry to wait for: b's first ask takes the workspace.
        assert await b.ask("chat", f"{workspace_id}:1555") == "node-b"


async def test_a_send_that_may_not_wait_is_refused_for_a_workspace_not_held_here(db):
    workspace_id = await builders.workspace(db)
    async with running(Node(db, "node-a")) as a:
        with pytest.raises(ServedElsewhere) as refused:
            a.system.ref("chat", f"{workspace_id}:1555").tell_nowait("who")
        assert refused.value.owner is None
        await a.ask("chat", f"{workspace_id}:1555")
        a.system.ref("chat", f"{workspace_id}:1556").tell_nowait("who")   # held now: no waiting needed
        await eventually(lambda: f"{workspace_id}:1556" in a.started)


async def test_a_restarted_node_takes_its_own_workspaces_back_without_waiting_for_their_expiry(db):
    workspace_id = await builders.workspace(db)
    async with running(Node(db, "node-a")) as first:
        assert await first.ask("chat", f"{workspace_id}:1555") == "node-a"
    # The first process is gone without releasing (a crash); the node, restarted under its name, takes them back.
    async with running(Node(db, "node-a")) as again:
        with trio.fail_after(TTL / 3):
            assert await again.ask("chat", f"{workspace_id}:1555") == "node-a"
    assert await db.fetchval("SELECT epoch FROM workspace_leases WHERE workspace_id = $1", workspace_id) == 2


async def test_a_node_that_wakes_after_its_lease_ran_out_sends_no_statement_for_the_workspace(db):
    """A paused node: no renewal and no watch ran while its hold ran out. Before anything has told it so, its actor of
    the workspace is asked to write: the statement is refused unsent, and the workspace's row is as it was."""
    workspace_id = await builders.workspace(db)
    async with running(Node(db, "node-a"), renewing=False) as a:
        assert await a.ask("chat", f"{workspace_id}:1555") == "node-a"
        assert await a.system.ref("chat", f"{workspace_id}:1555").ask("write") == "node-a"
        name = await db.fetchval("SELECT name FROM workspaces WHERE id = $1", workspace_id)
        await eventually(lambda: not a.placement.holds(workspace_id))
        assert a.system.statistics("chat", f"{workspace_id}:1555") is not None     # nobody stopped it
        with pytest.raises(ActorCrashed) as refused:
            await a.system.ref("chat", f"{workspace_id}:1555").ask("write")
        assert "no longer holds workspace" in str(refused.value)
        assert await db.fetchval("SELECT name FROM workspaces WHERE id = $1", workspace_id) == name
        assert await a.ask("local", "timer") == "node-a"       # a node's own actor is not held back


async def test_a_transaction_whose_lease_ran_out_meanwhile_is_rolled_back(db):
    workspace_id = await builders.workspace(db)
    keeper = LeaseKeeper(db, "node-a", on_lost=lambda workspace: None, ttl=TTL, margin=TTL / 3)
    placement = WorkspacePlacement(keeper)
    assert await placement.claim(workspace_id) is None
    name = await db.fetchval("SELECT name FROM workspaces WHERE id = $1", workspace_id)
    with placement.guarding(workspace_id), pytest.raises(LeaseLost):
        async with db.transaction() as tx:
            await tx.execute("UPDATE workspaces SET name = 'changed' WHERE id = $1", workspace_id)
            await eventually(lambda: not placement.holds(workspace_id))   # the node stalls past its hold
    assert await db.fetchval("SELECT name FROM workspaces WHERE id = $1", workspace_id) == name


async def test_a_write_that_reaches_postgresql_after_a_takeover_is_refused_there(db):
    """The node still counts on its hold (no renewal has run to tell it otherwise) while another node has taken the
    workspace: the window between the node's own check and its statement reaching the server, as a pause there would
    make it. PostgreSQL's fence refuses every kind of write; reads go on; the pool keeps its connections."""
    workspace_id = await builders.workspace(db)
    placement = WorkspacePlacement(LeaseKeeper(db, "node-a", on_lost=lambda workspace: None, ttl=5.0, margin=1.0))
    assert await placement.claim(workspace_id) is None
    await db.execute("UPDATE workspace_leases SET expires_at = now() WHERE workspace_id = $1", workspace_id)
    other = LeaseKeeper(db, "node-b", on_lost=lambda workspace: None)
    assert await other.acquire(workspace_id) == 2
    name = await db.fetchval("SELECT name FROM workspaces WHERE id = $1", workspace_id)
    rename = "UPDATE workspaces SET name = 'changed' WHERE id = $1 RETURNING id"
    with placement.guarding(workspace_id):
        assert placement.holds(workspace_id)
        with pytest.raises(LeaseLost):
            await db.execute(rename, workspace_id)                                  # a write alone
        with pytest.raises(LeaseLost):
            async with db.transaction() as tx:                                      # a transaction's
                await tx.execute(rename, workspace_id)
        with pytest.raises(LeaseLost):
            async with db.transaction() as tx:                                      # one that commits with its write
                await tx.fetchrow_then_commit(rename, workspace_id)
        assert await db.fetchval("SELECT name FROM workspaces WHERE id = $1", workspace_id) == name
    assert db.pool_statistics().in_use == 0
    assert await db.fetchval("SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction'"
                             " AND datname = current_database()") == 0


async def test_a_fenced_write_of_the_holder_is_written(db):
    workspace_id = await builders.workspace(db)
    placement = WorkspacePlacement(LeaseKeeper(db, "node-a", on_lost=lambda workspace: None, ttl=5.0, margin=1.0))
    assert await placement.claim(workspace_id) is None
    with placement.guarding(workspace_id):
        await db.execute("UPDATE workspaces SET name = 'one' WHERE id = $1", workspace_id)
        async with db.transaction() as tx:
            assert await tx.fetchrow_then_commit("UPDATE workspaces SET name = name || ' two' WHERE id = $1"
                                                 " RETURNING name", workspace_id) == ("one two",)
        async with db.transaction() as tx:
            await tx.execute("UPDATE workspaces SET name = name || ' three' WHERE id = $1", workspace_id)
    assert await db.fetchval("SELECT name FROM workspaces WHERE id = $1", workspace_id) == "one two three"
