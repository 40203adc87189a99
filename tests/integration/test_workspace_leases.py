"""Workspace leases against a real PostgreSQL, with two keepers standing for two nodes: one owner at a time, a
lease kept alive by renewal, a stalled node that gives the lease up before another may take it and whose writes
the fence then refuses, a takeover that waits for a fenced write under way, and a hand-over at once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import asyncpg
import pytest
import trio
from trio_asyncio import aio_as_trio

from inbox_actors.cluster.leases import LeaseKeeper
from persistence.database import DatabaseUnavailable
from persistence.queries import workspace_leases
from persistence.statement_fence import LeaseLost
from tests import builders
from tests.waiting import eventually

TTL = 0.6


def keeper(db, node: str, lost: list | None = None, *, ttl: float = TTL, fence_out_after: float = 5.0) -> LeaseKeeper:
    return LeaseKeeper(db, node, on_lost=(lost if lost is not None else []).append, ttl=ttl, margin=ttl / 3,
                       fence_out_after=fence_out_after)


async def fenced_write(db, workspace_id: int, epoch: int) -> None:
    async with db.transaction() as tx:
        await workspace_leases.fence(tx, workspace_id, epoch)
        await tx.execute("UPDATE workspaces SET name = name || '.' WHERE id = $1", workspace_id)


async def test_one_node_holds_a_workspace_while_it_renews(db, nursery):
    workspace_id = await builders.workspace(db)
    # Long enough a lease that a busy machine's pauses between renewals do not lose it.
    a, b = keeper(db, "a", ttl=1.5), keeper(db, "b", ttl=1.5)
    await nursery.start(a.run)
    assert await a.acquire(workspace_id) == 1
    assert await a.acquire(workspace_id) == 1                    # held already: the same epoch
    for _ in range(4):                                           # two lease periods
        assert await b.acquire(workspace_id) is None
        await trio.sleep(0.75)
    assert a.epoch(workspace_id) == 1 and a.held() == {workspace_id: 1}
    assert await workspace_leases.owner(db, workspace_id) == ("a", 1)
    await fenced_write(db, workspace_id, 1)


async def test_a_stalled_node_gives_the_lease_up_before_another_takes_it_and_then_writes_nothing(db):
    """Node a takes the lease and never renews (its process stalled): by the time b may take the workspace, a no
    longer counts on it, and a write under a's epoch is refused."""
    workspace_id = await builders.workspace(db)
    a, b = keeper(db, "a"), keeper(db, "b")
    assert await a.acquire(workspace_id) == 1

    async def taken_by_b():
        return await b.acquire(workspace_id)

    assert await eventually(taken_by_b, interval=0.01) == 2
    assert a.epoch(workspace_id) is None
    with pytest.raises(LeaseLost):
        await fenced_write(db, workspace_id, 1)
    await fenced_write(db, workspace_id, 2)


async def test_a_takeover_waits_for_a_fenced_write_under_way(db, nursery):
    workspace_id = await builders.workspace(db)
    a, b = keeper(db, "a"), keeper(db, "b")
    assert await a.acquire(workspace_id) == 1
    order: list[str] = []

    async def take_over():
        await eventually(lambda: b.acquire(workspace_id), interval=0.01)
        order.append("taken")

    async with db.transaction() as tx:
        await workspace_leases.fence(tx, workspace_id, 1)
        nursery.start_soon(take_over)
        await trio.sleep(TTL + 0.2)                               # past the expiry, the fence's lock held
        assert order == []
        order.append("written")
    await eventually(lambda: order == ["written", "taken"])


async def test_a_write_that_waited_for_a_takeover_is_refused(db, database_url, nursery):
    """The fence's lock: a change of epoch holds it exclusive until it commits; a fenced write that asked for it
    meanwhile reads the new epoch once it gets it, and writes nothing."""
    workspace_id = await builders.workspace(db)
    a = keeper(db, "a")
    assert await a.acquire(workspace_id) == 1
    await refused_after_waiting_for_a_takeover(database_url, nursery, workspace_id,
                                               lambda: fenced_write(db, workspace_id, 1))


async def refused_after_waiting_for_a_takeover(database_url: str, nursery, workspace_id: int,
                                               write: Callable[[], Awaitable[object]]) -> None:
    """`write`, fenced under epoch 1, sent while another session takes the workspace over (epoch 2, not committed
    yet): it waits for the takeover, then is refused (LeaseLost)."""
    taking = await aio_as_trio(asyncpg.connect)(database_url)
    try:
        await aio_as_trio(taking.execute)(
            f"BEGIN; SELECT inbox_lease_takeover_lock({workspace_id});"
            f" UPDATE workspace_leases SET node_id = 'b', epoch = 2 WHERE workspace_id = {workspace_id}")
        outcome: list[str] = []

        async def attempt() -> None:
            try:
                await write()
                outcome.append("written")
            except LeaseLost:
                outcome.append("refused")

        nursery.start_soon(attempt)
        await trio.sleep(0.3)
        assert outcome == []                                      # waiting for the takeover
        await aio_as_trio(taking.execute)("COMMIT")
        await eventually(lambda: outcome == ["refused"])
    finally:
        await aio_as_trio(taking.close)()


async def test_asking_for_a_workspace_another_node_holds_does_not_wait_for_its_writes(db):
    """Only a take that will happen waits for the fence: a node asking for a workspace held unexpired by another is
    told no at once, though that node's write is under way."""
    workspace_id = await builders.workspace(db)
    a, b = keeper(db, "a"), keeper(db, "b")
    assert await a.acquire(workspace_id) == 1
    async with db.transaction() as tx:
        await workspace_leases.fence(tx, workspace_id, 1)
        with trio.fail_after(TTL / 3):
            assert await b.acquire(workspace_id) is None


async def test_a_takeover_ends_a_fenced_write_left_open_past_the_lease_by_a_node_that_stopped(db, database_url):
    """A node stopped in the middle of a fenced write holds the fence's lock for as long as it stays stopped; once
    the lease has expired, the taking node ends that session, which rolls its write back."""
    workspace_id = await builders.workspace(db)
    a, b = keeper(db, "a"), keeper(db, "b", fence_out_after=0.3)
    assert await a.acquire(workspace_id) == 1
    # The stopped node's connection: after its write it never says another word.
    stopped = await aio_as_trio(asyncpg.connect)(database_url)
    try:
        await aio_as_trio(stopped.execute)(f"BEGIN; SELECT inbox_lease_fence({workspace_id}, 1)")
        await aio_as_trio(stopped.execute)("UPDATE workspaces SET name = 'half written' WHERE id = $1", workspace_id)
        name = await db.fetchval("SELECT name FROM workspaces WHERE id = $1", workspace_id)
        with trio.fail_after(TTL + 5):
            assert await eventually(lambda: b.acquire(workspace_id), interval=0.05) == 2
        assert await db.fetchval("SELECT name FROM workspaces WHERE id = $1", workspace_id) == name
        with pytest.raises((asyncpg.InterfaceError, asyncpg.PostgresError, ConnectionError)):
            await aio_as_trio(stopped.execute)("COMMIT")
    finally:
        stopped.terminate()


async def test_a_lease_taken_from_under_a_node_is_told_lost_at_the_next_renewal(db, nursery):
    workspace_id = await builders.workspace(db)
    lost: list[int] = []
    a, b = keeper(db, "a", lost), keeper(db, "b")
    await nursery.start(a.run)
    assert await a.acquire(workspace_id) == 1
    # An operator (or a bug) ends the lease in PostgreSQL: the renewal finds it gone.
    await db.execute("UPDATE workspace_leases SET expires_at = now() WHERE workspace_id = $1", workspace_id)
    assert await b.acquire(workspace_id) == 2
    await eventually(lambda: lost == [workspace_id])
    assert a.epoch(workspace_id) is None and a.held() == {}


async def test_a_released_workspace_is_taken_at_once_under_a_new_epoch(db):
    workspace_id = await builders.workspace(db)
    lost: list[int] = []
    a, b = keeper(db, "a", lost), keeper(db, "b")
    assert await a.acquire(workspace_id) == 1
    await a.release(workspace_id)
    assert await b.acquire(workspace_id) == 2 and a.epoch(workspace_id) is None and lost == []
    assert await a.acquire(workspace_id) is None


async def test_a_node_that_cannot_renew_gives_the_lease_up_a_lease_after_its_deadline(db, nursery):
    """PostgreSQL unreachable for the renewals: the hold lapses at its deadline (nothing is written under it), is
    told lost once it has stayed lapsed for a lease's length, and another node takes it once it has expired."""
    workspace_id = await builders.workspace(db)
    lost: list[int] = []
    a, b = keeper(db, "a", lost), keeper(db, "b")
    outage = db.fail_next(lambda sql: sql.startswith("UPDATE workspace_leases l SET expires_at"), times=100)
    await nursery.start(a.run)
    assert await a.acquire(workspace_id) == 1
    await eventually(lambda: a.epoch(workspace_id) is None)
    assert lost == []                                             # lapsed: asked for again, not given up yet
    await eventually(lambda: lost == [workspace_id])
    assert outage.raised >= 1
    assert await eventually(lambda: b.acquire(workspace_id), interval=0.01) == 2


async def test_a_lapsed_lease_nobody_took_is_taken_back_under_its_epoch_once_postgresql_answers(db, nursery):
    """A database blip (or a stall) longer than a hold but shorter than the hold and a lease: the renewals that
    follow find the lease still this node's under its epoch, and the workspace's actors are never told to stop."""
    workspace_id = await builders.workspace(db)
    lost: list[int] = []
    a = keeper(db, "a", lost, ttl=1.5)
    await nursery.start(a.run)
    assert await a.acquire(workspace_id) == 1
    out = True
    outage = db.fail_next(lambda sql: out and renews(sql), times=1_000)
    await eventually(lambda: a.epoch(workspace_id) is None)      # lapsed: writes refused meanwhile
    out = False                                                   # PostgreSQL answers again
    await eventually(lambda: a.epoch(workspace_id) == 1)
    assert lost == [] and a.held() == {workspace_id: 1} and outage.raised >= 1
    assert await workspace_leases.owner(db, workspace_id) == ("a", 1)
    await fenced_write(db, workspace_id, 1)


async def test_a_node_that_stalled_past_its_lease_takes_it_back_under_its_epoch_if_nobody_took_it(db):
    workspace_id = await builders.workspace(db)
    lost: list[int] = []
    a = keeper(db, "a", lost)                                     # no renewals, no watch: a stalled node
    assert await a.acquire(workspace_id) == 1
    await eventually(lambda: a.epoch(workspace_id) is None)      # its hold ran out while it stalled
    await trio.sleep(TTL)                                         # and the lease in PostgreSQL too
    assert await a.acquire(workspace_id) == 1 and lost == []


async def test_a_node_that_stalled_while_another_took_its_lease_hears_it_lost_before_taking_it_again(db):
    workspace_id = await builders.workspace(db)
    lost: list[int] = []
    a, b = keeper(db, "a", lost), keeper(db, "b")                 # a: no renewals, no watch: a stalled node
    assert await a.acquire(workspace_id) == 1

    async def taken_by_b():
        return await b.acquire(workspace_id)

    assert await eventually(taken_by_b, interval=0.01) == 2
    await b.release(workspace_id)
    assert lost == []                                             # nothing has looked yet
    assert await a.acquire(workspace_id) == 3
    assert lost == [workspace_id] and a.epoch(workspace_id) == 3


def renews(sql: str) -> bool:
    return sql.startswith("UPDATE workspace_leases l SET expires_at")


async def test_a_renewal_that_meets_any_database_error_is_tried_again_and_the_node_keeps_its_lease(db, nursery):
    """What asyncpg answers on a connection a restart left mid-operation, raised as it is (not as the pool's
    DatabaseUnavailable): it ended the renewals, and the node with them (issue 40, item 6)."""
    workspace_id = await builders.workspace(db)
    lost: list[int] = []
    a = keeper(db, "a", lost, ttl=3.0)                            # renewed every 0.5 s, held 2 s from each
    busy = db.fail_next(renews, asyncpg.InterfaceError("cannot perform operation: another operation is in progress"),
                        times=2)
    then_out = db.fail_next(renews)                               # and then the database out, as the pool says it
    await nursery.start(a.run)
    assert await a.acquire(workspace_id) == 1
    await eventually(lambda: busy.raised == 2 and then_out.raised == 1)
    await trio.sleep(2.5)                                         # longer than a hold: renewed since, or lost
    assert a.held() == {workspace_id: 1} and lost == [], "tried again soon after the failures, and renewed"
    assert await workspace_leases.owner(db, workspace_id) == ("a", 1)


async def test_a_take_that_meets_the_database_out_raises_its_unavailability_as_itself(db):
    """Not wrapped in the take's nursery's exception group, which no caller's `except DatabaseUnavailable` caught:
    the routing answered a bare 500, and a task of the actor system placing a webhook endpoint ended the node."""
    workspace_id = await builders.workspace(db)
    a = keeper(db, "a")
    out = db.fail_next(lambda sql: sql.startswith("INSERT INTO workspace_leases"))
    with pytest.raises(DatabaseUnavailable):
        await a.acquire(workspace_id)
    assert out.raised == 1
    assert await a.acquire(workspace_id) == 1                     # and the next take, the database back, takes it
