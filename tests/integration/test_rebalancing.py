"""Spreading workspaces over the nodes (inbox_actors/cluster/rebalancing.py) against a real PostgreSQL, with two actor
systems standing for two nodes: a node that joins gets its share handed to it, a hand-over waits for the requests
under way and the workspace's actors, and a node already at its share keeps what it holds."""

from __future__ import annotations

import asyncpg
import trio

from inbox_actors.cluster import rebalancing
from inbox_actors.cluster.rebalancing import Rebalancer
from inbox_actors.runtime import ServedElsewhere
from persistence.queries import workspace_leases
from tests import builders
from tests.integration.test_workspace_placement import AskOnceOpen, Node, running
from tests.waiting import eventually


def rebalancer(node: Node, under_way: dict[int, int] | None = None) -> Rebalancer:
    counts = under_way if under_way is not None else {}
    return Rebalancer(node.placement, node.system, lambda workspace: counts.get(workspace, 0))


async def test_a_node_that_joins_is_handed_its_share_and_serves_it(db):
    workspaces = [await builders.workspace(db) for _ in range(6)]
    async with running(Node(db, "node-a")) as a, running(Node(db, "node-b")) as b:
        for workspace in workspaces:
            assert await a.ask("chat", f"{workspace}:1555") == "node-a"
        await workspace_leases.seen(db, "node-b")                  # b joins: seen, holding nothing

        assert await rebalancer(a).rebalance() == 3
        moved = [workspace for workspace in workspaces if not a.placement.holds(workspace)]
        assert len(moved) == 3 and len(a.keeper.held()) == 3
        for workspace in moved:
            assert await b.ask("chat", f"{workspace}:1555") == "node-b"   # b takes it at once, under a new epoch
            assert await workspace_leases.owner(db, workspace) == ("node-b", 3)
            assert await a.placement.claim(workspace) == "node-b"
        assert a.stopped == [f"{workspace}:1555" for workspace in moved]   # stopped on a before b started them
        await workspace_leases.seen(db, "node-a")
        assert await rebalancer(a).rebalance() == 0                   # three each: nothing more to move
        assert await rebalancer(b).rebalance() == 0


async def test_a_hand_over_waits_for_the_requests_under_way_and_new_ones_wait_for_it(db, nursery):
    workspace, other = await builders.workspace(db), await builders.workspace(db)
    async with running(Node(db, "node-a")) as a, running(Node(db, "node-b")):
        assert await a.ask("chat", f"{workspace}:1555") == "node-a"      # taken first: the first handed over
        assert await a.ask("chat", f"{other}:1555") == "node-a"
        await workspace_leases.seen(db, "node-b")
        under_way = {workspace: 1}
        handed: list[int] = []

        async def rebalance() -> None:
            handed.append(await rebalancer(a, under_way).rebalance())

        nursery.start_soon(rebalance)
        await eventually(lambda: not a.placement.admits(workspace))
        assert a.placement.holds(workspace)                        # the request under way may still start actors
        assert await a.ask("chat", f"{workspace}:1666") == "node-a"
        claimed: list[str | None] = []

        async def new_request() -> None:
            claimed.append(await a.placement.claim(workspace))

        nursery.start_soon(new_request)
        await trio.sleep(0.1)                                      # the hand-over still waits for the request
        assert claimed == [] and handed == []
        under_way.clear()                                          # the request is answered
        await eventually(lambda: claimed == ["node-b"] and handed == [1])
        assert sorted(a.stopped) == [f"{workspace}:1555", f"{workspace}:1666"]


async def _hand_over_under_a_busy_chat(a: Node, workspace: int, nursery) -> tuple[trio.Event, list[object],
                                                                                  list[int]]:
    """Node a, holding `workspace` first of two, with node b seen: a chat of the workspace begins an ask of the
    workspace's `pacer` (not live) that waits for a gate, and a round of rebalancing starts. The gate; the chat's
    answer, once given; the round's count of hand-overs, once over."""
    await workspace_leases.seen(a.db, "node-b")
    gate = trio.Event()
    answers: list[object] = []
    handed: list[int] = []

    async def bot_answer() -> None:
        answers.append(await a.system.ref("chat", f"{workspace}:1555").ask(
            AskOnceOpen(gate, "chat", f"{workspace}:pacer")))

    async def rebalance() -> None:
        handed.append(await rebalancer(a).rebalance())

    nursery.start_soon(bot_answer)
    await eventually(lambda: a.system.busy_in_workspace(workspace) == [f"chat/{workspace}:1555"])
    nursery.start_soon(rebalance)
    await eventually(lambda: not a.placement.admits(workspace))
    return gate, answers, handed


async def test_a_hand_over_lets_an_actor_finish_what_it_asks_of_another_actor_of_the_workspace(db, nursery):
    """A chat's actor still at work when the requests are done (the bot's answer, after the customer's message was
    acknowledged) asks an actor of the workspace that is not live (the number's send pacer): it is started here and
    answers, and only then do the workspace's actors stop and the lease pass."""
    workspace, other = await builders.workspace(db), await builders.workspace(db)
    async with running(Node(db, "node-a")) as a, running(Node(db, "node-b")):
        await a.ask("chat", f"{workspace}:1555")                     # taken first: the one handed over
        await a.ask("chat", f"{other}:1555")
        gate, answers, handed = await _hand_over_under_a_busy_chat(a, workspace, nursery)
        await trio.sleep(0.1)
        assert handed == [] and a.placement.holds(workspace)       # waiting for the busy actor
        gate.set()
        await eventually(lambda: handed == [1])
        assert answers == ["node-a"]                                  # the pacer was started here, and answered
        assert sorted(a.stopped) == [f"{workspace}:1555", f"{workspace}:pacer"]


async def test_an_actor_still_at_work_past_the_bound_is_told_at_once_where_the_workspace_goes(db, nursery,
                                                                                               monkeypatch):
    """Past SETTLE_SECONDS the hand-over goes on; an actor that asks another of the workspace meanwhile is answered
    at once that the workspace is on the chosen node (it does not wait for the hand-over that waits for it)."""
    monkeypatch.setattr(rebalancing, "SETTLE_SECONDS", 0.3)
    workspace, other = await builders.workspace(db), await builders.workspace(db)
    async with running(Node(db, "node-a")) as a, running(Node(db, "node-b")):
        await a.ask("chat", f"{workspace}:1555")                     # taken first: the one handed over
        await a.ask("chat", f"{other}:1555")
        gate, answers, handed = await _hand_over_under_a_busy_chat(a, workspace, nursery)
        await eventually(lambda: not a.placement.holds(workspace))    # past the bound: stopping
        gate.set()
        await eventually(lambda: handed == [1] and len(answers) == 1)
        assert isinstance(answers[0], ServedElsewhere) and answers[0].owner == "node-b"
        assert "pacer" not in " ".join(a.started)


async def test_a_node_within_one_of_the_others_keeps_what_it_holds(db):
    workspaces = [await builders.workspace(db) for _ in range(5)]
    async with running(Node(db, "node-a")) as a, running(Node(db, "node-b")) as b:
        for workspace in workspaces[:3]:
            await a.ask("chat", f"{workspace}:1")
        for workspace in workspaces[3:]:
            await b.ask("chat", f"{workspace}:1")
        await workspace_leases.seen(db, "node-a")
        await workspace_leases.seen(db, "node-b")
        assert await rebalancer(a).rebalance() == 0
        assert len(a.keeper.held()) == 3 and len(b.keeper.held()) == 2


async def test_a_round_that_fails_is_skipped_and_the_next_one_runs(db):
    async with running(Node(db, "node-a")) as a, trio.open_nursery() as rounds:
        await workspace_leases.seen(db, "node-a")
        cancelled = db.fail_next(lambda sql: "FROM cluster_nodes" in sql,
                                 asyncpg.QueryCanceledError("canceling statement due to user request"), times=2)
        rounds.start_soon(Rebalancer(a.placement, a.system, lambda workspace: 0, period=0.02).run)
        await eventually(lambda: cancelled.raised == 2)
        later = db.fail_next(lambda sql: "FROM cluster_nodes" in sql)       # met only by a round after those
        await eventually(lambda: later.raised == 1)
        rounds.cancel_scope.cancel()
