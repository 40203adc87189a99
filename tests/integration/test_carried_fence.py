"""The fence a lone write carries inside itself (persistence/statement_fence.py, `carried`), against a real
PostgreSQL: one round trip, written while the lease is this epoch's; refused, writing nothing, once another node
took the workspace over (the node's memory check passed: a node paused between that check and its statement);
refused after waiting for a takeover under way; never committed after a takeover that began after it."""

from __future__ import annotations

import asyncpg
import pytest
import trio
from trio_asyncio import aio_as_trio

from inbox_actors.cluster.leases import LeaseKeeper
from persistence.statement_fence import LeaseLost, StatementFence, carried, fencing_statements
from tests import builders
from tests.integration.test_workspace_leases import refused_after_waiting_for_a_takeover
from tests.waiting import eventually

TTL = 0.6


def _believing(workspace_id: int, epoch: int) -> StatementFence:
    """A fence whose node still believes it holds the workspace at `epoch`: only PostgreSQL can refuse."""
    return StatementFence(workspace_id, epoch, lambda _workspace: epoch, in_database=True)


async def _name(db, workspace_id: int) -> str:
    return await db.fetchval("SELECT name FROM workspaces WHERE id = $1", workspace_id)


async def _rename(db, workspace_id: int, epoch: int, suffix: str) -> str | None:
    with fencing_statements(_believing(workspace_id, epoch)):
        return await db.fetchval("UPDATE workspaces SET name = name || $2 WHERE id = $1 RETURNING name",
                                 workspace_id, suffix)


def test_a_lone_write_of_every_form_that_can_carry_the_fence_carries_it_after_its_own_parameters():
    assert carried("UPDATE t SET a = $1 WHERE id = $2", 2) == (
        "WITH inbox_fence AS (INSERT INTO inbox_fence_sink SELECT WHERE NOT inbox_lease_fence($3::bigint,"
        " $4::bigint)) UPDATE t SET a = $1 WHERE id = $2")
    assert carried("WITH a AS (DELETE FROM t RETURNING id) SELECT count(*) FROM a", 0).startswith(
        "WITH inbox_fence AS (INSERT INTO inbox_fence_sink SELECT WHERE NOT inbox_lease_fence($1::bigint, "
        "$2::bigint)), a AS (DELETE")
    assert carried("\n  insert into t values ($1)", 1).startswith("WITH inbox_fence AS")
    for not_carried in ("SELECT f($1)", "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)", "NOTIFY x",
                        "INSERTED"):
        assert carried(not_carried, 0) is None, not_carried


async def test_a_lone_write_is_written_under_its_epoch_and_refused_once_the_workspace_was_taken(db):
    workspace_id = await builders.workspace(db)
    a, b = (LeaseKeeper(db, node, on_lost=[].append, ttl=TTL, margin=TTL / 3) for node in ("a", "b"))
    assert await a.acquire(workspace_id) == 1
    before = await _name(db, workspace_id)
    assert await _rename(db, workspace_id, 1, ".a") == before + ".a"
    assert await db.fetchval("SELECT count(*) FROM inbox_fence_sink") == 0

    assert await eventually(lambda: b.acquire(workspace_id), interval=0.01) == 2
    with pytest.raises(LeaseLost):
        await _rename(db, workspace_id, 1, ".late")             # a's node paused past the takeover
    assert await _name(db, workspace_id) == before + ".a"
    assert await _rename(db, workspace_id, 2, ".b") == before + ".a.b"


async def test_a_lone_write_that_waited_for_a_takeover_is_refused(db, database_url, nursery):
    workspace_id = await builders.workspace(db)
    a = LeaseKeeper(db, "a", on_lost=[].append, ttl=TTL, margin=TTL / 3)
    assert await a.acquire(workspace_id) == 1
    before = await _name(db, workspace_id)
    await refused_after_waiting_for_a_takeover(database_url, nursery, workspace_id,
                                               lambda: _rename(db, workspace_id, 1, ".a"))
    assert await _name(db, workspace_id) == before


async def test_a_slow_lone_write_never_commits_after_a_takeover_that_began_after_it(db, database_url):
    """Whichever part of the statement PostgreSQL runs first, the write commits before the takeover or not at all."""
    workspace_id = await builders.workspace(db)
    a = LeaseKeeper(db, "a", on_lost=[].append, ttl=TTL, margin=TTL / 3)
    assert await a.acquire(workspace_id) == 1
    order: list[str] = []

    async def slow_write() -> None:
        with fencing_statements(_believing(workspace_id, 1)):
            try:
                await db.execute("UPDATE workspaces SET name = name || '.slow' FROM (SELECT pg_sleep(0.6)) s"
                                 " WHERE id = $1", workspace_id)
                order.append("written")
            except LeaseLost:
                order.append("refused")

    async def take_over() -> None:
        await trio.sleep(0.2)                                     # the write is under way
        taking = await aio_as_trio(asyncpg.connect)(database_url)
        try:
            await aio_as_trio(taking.execute)(
                f"BEGIN; SELECT inbox_lease_takeover_lock({workspace_id});"
                f" UPDATE workspace_leases SET node_id = 'b', epoch = 2 WHERE workspace_id = {workspace_id}; COMMIT")
            order.append("taken")
        finally:
            await aio_as_trio(taking.close)()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(slow_write)
        nursery.start_soon(take_over)
    assert order in (["written", "taken"], ["taken", "refused"]), order
    written = (await _name(db, workspace_id)).endswith(".slow")
    assert written == (order[0] == "written")
