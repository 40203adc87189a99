"""The pool under the Database: bounded waits, transactions that always give their connection back, no session
state carried between users of a connection."""

from __future__ import annotations

import asyncio
import gc

import pytest
import trio
import trio.testing

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


async def test_a_connection_refused_by_postgresql_later_on_is_the_database_out_of_reach(database_url):
    """A statement that needs a new connection, which PostgreSQL refuses (here: its database is gone), fails as an
    outage (DatabaseUnavailable), as one the server never answered does, not as the statement's own error: the lease
    keeper and the health probe treat it so."""
    db = await Database.connect(database_url.rsplit("/", 1)[0] + "/no_such_database", min_size=0)
    try:
        with pytest.raises(DatabaseUnavailable, match="InvalidCatalogNameError"):
            await db.fetchval("SELECT 1")
    finally:
        await db.close()


async def test_a_wait_for_a_connection_cancelled_meanwhile_gives_the_connection_back(database_url):
    db = await Database.connect(database_url, min_size=1, max_size=1)
    try:
        holding, release_holder = trio.Event(), trio.Event()
        bodies_run = []

        async def hold():
            async with db.transaction() as tx:
                await tx.execute("SELECT 1")
                holding.set()
                await release_holder.wait()

        async def wait_then_get_cancelled(scope_box):
            with trio.CancelScope() as scope:
                scope_box.append(scope)
                async with db.transaction() as tx:
                    bodies_run.append(True)
                    await tx.execute("SELECT 1")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(hold)
            await holding.wait()  # the pool's only connection is lent out
            box: list[trio.CancelScope] = []
            nursery.start_soon(wait_then_get_cancelled, box)
            # Every task is blocked: the other is in the (shielded) wait for that connection, the one place it can
            # block before its body.
            await trio.testing.wait_all_tasks_blocked()
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


async def test_a_planned_fault_fails_only_the_statements_it_picks_as_often_as_planned(db):
    """Database.fail_next, the tests' fault injection: matching statements raise instead of running, in a
    transaction (which then rolls back) as on the pool, until the plan is spent; the others run."""
    await db.execute("CREATE TABLE fault_probe (v int)")
    inserts = db.fail_next(lambda sql: sql.startswith("INSERT INTO fault_probe"), times=2)
    assert await db.fetchval("SELECT 1") == 1
    with pytest.raises(DatabaseUnavailable, match="fault planned by a test: INSERT INTO fault_probe"):
        async with db.transaction() as tx:
            await tx.execute("UPDATE fault_probe SET v = 0")
            await tx.execute("INSERT INTO fault_probe VALUES (1)")
    with pytest.raises(DatabaseUnavailable):
        await db.execute("INSERT INTO fault_probe VALUES (2)")
    assert inserts.raised == 2
    await db.execute("INSERT INTO fault_probe VALUES (3)")
    assert await db.fetch("SELECT v FROM fault_probe") == [(3,)]

    crash = db.fail_next(lambda sql: "fault_probe" in sql, RuntimeError("killed"))
    with pytest.raises(RuntimeError, match="killed"):
        await db.fetchval("SELECT count(*) FROM fault_probe")
    assert crash.raised == 1 and await db.fetchval("SELECT count(*) FROM fault_probe") == 1
    with pytest.raises(ValueError):
        db.fail_next(lambda sql: True, times=0)


async def test_a_blocks_last_write_commits_it_in_the_same_crossing_and_only_when_it_answers_a_row(db):
    """`fetchrow_then_commit`: alone it is the whole transaction; after other statements it commits them with it;
    answering no row it commits nothing and the block rolls back as it fails."""
    await db.execute("CREATE TABLE final_probe (id int PRIMARY KEY, v int)")
    await db.execute("INSERT INTO final_probe VALUES (1, 0)")
    async with db.transaction() as tx:
        assert (await tx.fetchrow_then_commit("UPDATE final_probe SET v = 1 WHERE id = 1 RETURNING v"))["v"] == 1
        assert tx.committed
    async with db.transaction() as tx:
        await tx.execute("INSERT INTO final_probe VALUES (2, 0)")
        await tx.fetchrow_then_commit("UPDATE final_probe SET v = 2 WHERE id = 1 RETURNING v")
    assert await db.fetch("SELECT id, v FROM final_probe ORDER BY id") == [(1, 2), (2, 0)]

    with pytest.raises(LookupError):
        async with db.transaction() as tx:
            await tx.execute("INSERT INTO final_probe VALUES (3, 0)")
            if await tx.fetchrow_then_commit("UPDATE final_probe SET v = 3 WHERE id = 99 RETURNING v") is None:
                raise LookupError("no such row")
    assert await db.fetchval("SELECT count(*) FROM final_probe") == 2
    assert db.pool_statistics().in_use == 0


async def test_a_blocks_only_write_whose_answer_is_refused_leaves_the_block_as_if_nothing_ran(db):
    """Alone, a last write whose row `commits` refuses has changed nothing (its caller's contract): no BEGIN was
    sent, nothing is committed, and the block goes on, its next statement beginning a transaction."""
    await db.execute("CREATE TABLE refused_probe (id int PRIMARY KEY, v int)")
    await db.execute("INSERT INTO refused_probe VALUES (1, 0)")
    async with db.transaction() as tx:
        row = await tx.fetchrow_then_commit("SELECT v FROM refused_probe WHERE id = 1",
                                            commits=lambda answered: answered["v"] > 0)
        assert row["v"] == 0 and not tx.committed and not tx.begun
        await tx.execute("UPDATE refused_probe SET v = 5 WHERE id = 1")
        assert tx.begun
    assert await db.fetchval("SELECT v FROM refused_probe WHERE id = 1") == 5
    assert db.pool_statistics().in_use == 0


async def test_several_reads_on_one_connection_answer_each_its_first_row(db):
    """`fetchrow_each`, how a chat's activation reads its workspace and its row in one crossing."""
    rows = await db.fetchrow_each([("SELECT $1::int AS a", (1,)), ("SELECT 2 AS b WHERE false", ())])
    assert rows[0]["a"] == 1 and rows[1] is None
    planned = db.fail_next(lambda sql: "WHERE false" in sql)
    with pytest.raises(DatabaseUnavailable):
        await db.fetchrow_each([("SELECT 1", ()), ("SELECT 2 WHERE false", ())])
    assert planned.raised == 1 and db.pool_statistics().in_use == 0
