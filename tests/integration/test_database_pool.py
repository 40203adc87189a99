"""The pool under the Database: bounded waits, transactions that always give their connection back, no session
state carried between users of a connection."""

from __future__ import annotations

import asyncio
import gc

import pytest
import trio

from persistence.database import Database, DatabaseUnavailable


async def test_a_transaction_waiting_for_a_connection_gives_up_at_the_acquire_timeout(database_url):
    db = await Database.connect(database_url, min_size=1, max_size=1, acquire_timeout=0.5)
    try:
        async with db.transaction() as held:
            await held.execute("SELECT 1")
            started = trio.current_time()
            with pytest.raises(DatabaseUnavailable, match="no connection within 0.5s"):
                async with db.transaction():
                    pass
            assert 0.4 <= trio.current_time() - started < 5
        # The connection the first held, and the one the give-up left, are both usable.
        async with db.transaction() as tx:
            assert await tx.fetchval("SELECT 2") == 2
        assert await db.fetchval("SELECT 3") == 3
    finally:
        await db.close()


async def test_a_wait_for_a_connection_cancelled_meanwhile_gives_the_connection_back(database_url):
    db = await Database.connect(database_url, min_size=1, max_size=1)
    try:
        release_holder = trio.Event()
        bodies_run = []

        async def hold():
            async with db.transaction() as tx:
                await tx.execute("SELECT 1")
                await release_holder.wait()

        async def wait_then_get_cancelled(scope_box):
            with trio.CancelScope() as scope:
                scope_box.append(scope)
                async with db.transaction() as tx:
                    bodies_run.append(True)
                    await tx.execute("SELECT 1")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(hold)
            await trio.sleep(0.1)
            box: list[trio.CancelScope] = []
            nursery.start_soon(wait_then_get_cancelled, box)
            await trio.sleep(0.1)
            box[0].cancel()  # lands while the wait is shielded: it ends only once a connection is handed over
            release_holder.set()
        assert bodies_run in ([], [True])
        with trio.fail_after(5):
            async with db.transaction() as tx:
                assert await tx.fetchval("SELECT 1") == 1
    finally:
        with trio.fail_after(15):
            await db.close()  # would wait for a connection never given back


async def test_a_failed_block_rolls_back_and_the_connection_serves_the_next(db):
    await db.execute("CREATE TABLE pool_probe (v int)")
    with pytest.raises(ZeroDivisionError):
        async with db.transaction() as tx:
            await tx.execute("INSERT INTO pool_probe VALUES (1)")
            1 / 0
    assert await db.fetchval("SELECT count(*) FROM pool_probe") == 0
    async with db.transaction() as tx:
        await tx.execute("INSERT INTO pool_probe VALUES (2)")
    assert await db.fetchval("SELECT count(*) FROM pool_probe") == 1


async def test_statements_are_bounded_by_the_server_and_nothing_is_reset_on_release(db):
    assert await db.fetchval("SHOW statement_timeout") == "1min"
    assert await db.fetchval("SHOW application_name") == "inbox-actors"


async def test_statements_and_transactions_leave_no_asyncio_timers_behind(db):
    # trio-asyncio keeps a cancelled asyncio timer, with the contextvars (a request) it was made in, until it
    # comes due: one per statement or per connection given back kept whole requests alive for minutes.
    def timers() -> int:
        gc.collect()
        return sum(1 for o in gc.get_objects() if isinstance(o, asyncio.TimerHandle))

    before = timers()
    for n in range(200):
        await db.fetchval("SELECT $1::int", n)
        async with db.transaction() as tx:
            await tx.fetchval("SELECT $1::int", n)
    assert timers() - before < 20
