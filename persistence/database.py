"""PostgreSQL access for Trio code: asyncpg running on the trio-asyncio loop.

asyncio stays inside this package. Callers above it are plain Trio: every method here is a Trio coroutine
that crosses into asyncio with `aio_as_trio`. It needs a running `trio_asyncio.open_loop()`, which the
service (and the test fixtures) open once around everything.
"""

from __future__ import annotations

import logging
import time
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Callable, Mapping, Sequence

import asyncpg
import trio
import trio_asyncio
from trio_asyncio import aio_as_trio

from persistence.connections import ConnectionPool, PoolStatistics
from persistence.statement_fence import LEASE_LOST_SQLSTATE, LeaseLost, StatementFence, carried, current_fence, writes

log = logging.getLogger("persistence.database")

Record = asyncpg.Record

@asynccontextmanager
async def open_database_loop() -> AsyncIterator[trio_asyncio.TrioEventLoop]:
    """The asyncio loop asyncpg runs on, inside trio: open it once around everything that uses a Database
    (`async with open_database_loop(): ...`). A failure of a database connection that nothing awaited is logged
    there, not raised: see `_unawaited_failure`."""
    async with trio_asyncio.open_loop() as loop:
        loop.set_exception_handler(_unawaited_failure)
        yield loop


# What asyncpg may leave in a future nobody awaits while the server goes away: the connection's failure, never a
# fault of the process.
_DATABASE_FAILURES = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError)


def _unawaited_failure(loop: trio_asyncio.TrioEventLoop, context: dict[str, Any]) -> None:
    """asyncio's report of an error no one awaited. asyncpg leaves one when the server closes a connection it was
    opening or cancelling (a restart: "unexpected connection_lost() call"), and trio-asyncio's own handler raises
    it in the loop's nursery, which ends the process: the node died of a database restart. A database failure is
    logged, whoever awaits the connection has heard of it already; anything else is raised as trio-asyncio does."""
    if isinstance(context.get("exception"), _DATABASE_FAILURES):
        log.warning("%s: %r (a database connection's failure, which nothing awaited; the service goes on)",
                    context.get("message", "asyncio reported an error"), context["exception"])
        return
    loop.default_exception_handler(context)


_ACQUIRE_TIMEOUT_SECONDS = 30.0
_CLOSE_GRACE_SECONDS = 10.0


__all__ = ["Database", "DatabaseUnavailable", "PlannedFault", "PoolStatistics", "Record", "UnitOfWork",
           "open_database_loop"]


class DatabaseUnavailable(RuntimeError):
    """PostgreSQL could not be reached."""


# Failures of the connection rather than of the statement: the same statement may well succeed later, on another
# connection (the one that failed is not lent again). InternalClientError is asyncpg's protocol caught in a state it
# cannot leave ("cannot switch to state 15; another operation (2) is in progress"), as a server's restart leaves it.
_CONNECTION_FAILURES = (
    OSError, asyncpg.InterfaceError, asyncpg.PostgresConnectionError, asyncpg.CannotConnectNowError,
    asyncpg.AdminShutdownError, asyncpg.InternalClientError,
)


async def _end(connection: asyncpg.Connection, commit: bool) -> None:
    """COMMIT, or ROLLBACK. A ROLLBACK that fails is only logged: the connection, still in its transaction or
    closed, is then not lent again (connections.py)."""
    if commit:
        try:
            await aio_as_trio(connection.execute)("COMMIT")
        except _CONNECTION_FAILURES as err:
            raise DatabaseUnavailable(f"COMMIT failed: {type(err).__name__}: {err}") from err
        return
    try:
        await aio_as_trio(connection.execute)("ROLLBACK")
    except (asyncpg.PostgresError, *_CONNECTION_FAILURES) as err:
        log.warning("rollback failed (the connection is not reused): %s", err)


QueryObserver = Callable[[float], None]
"""Told the seconds each statement took (`Database.observe_queries`); must not block."""


class PlannedFault:
    """A failure a test planned (`Database.fail_next`): the next `times` statements whose SQL `matches` accepts
    raise `error` instead of reaching PostgreSQL. `raised` counts those that did, so a test can tell that its
    fault was in fact met (a renamed statement would otherwise make it silently miss)."""

    __slots__ = ("matches", "error", "left", "raised")

    def __init__(self, matches: Callable[[str], bool], error: BaseException | None, times: int) -> None:
        self.matches = matches
        self.error = error
        self.left = times
        self.raised = 0

    def exception(self, sql: str) -> BaseException:
        if self.error is not None:
            return self.error
        return DatabaseUnavailable(f"fault planned by a test: {' '.join(sql.split())[:100]}")


def _planned_failure(faults: list[PlannedFault], sql: str) -> BaseException | None:
    """The exception the first planned fault matching `sql` raises (spending one of its times), if any."""
    for fault in faults:
        if fault.matches(sql):
            fault.left -= 1
            fault.raised += 1
            if fault.left <= 0:
                faults.remove(fault)
            return fault.exception(sql)
    return None


class _Queries:
    """Statement methods shared by the pool and a unit of work (one connection inside a transaction).

    A lost or refused connection is raised as DatabaseUnavailable, so callers above this package can tell
    "try again later" from a bad statement without knowing asyncpg.
    """

    _observer: QueryObserver | None = None
    # Faults planned by tests (`Database.fail_next`), shared by the pool and its transactions; empty in service.
    _faults: list[PlannedFault] | tuple[()] = ()

    async def fetch(self, sql: str, *args: Any) -> list[Record]:
        return await self._call(asyncpg.Connection.fetch, sql, args)

    async def fetchrow(self, sql: str, *args: Any) -> Record | None:
        return await self._call(asyncpg.Connection.fetchrow, sql, args)

    async def fetchval(self, sql: str, *args: Any) -> Any:
        return await self._call(asyncpg.Connection.fetchval, sql, args)

    async def execute(self, sql: str, *args: Any) -> str:
        return await self._call(asyncpg.Connection.execute, sql, args)

    async def _call(self, method: Callable[..., Any], sql: str, args: tuple[Any, ...]) -> Any:
        fence = current_fence()
        if fence is not None and writes(sql):
            fence.check()
        if self._faults:
            planned = _planned_failure(self._faults, sql)
            if planned is not None:
                raise planned
        observer = self._observer
        started = time.perf_counter()
        try:
            return await self._run(method, sql, args, fence if fence is not None and fence.in_database else None)
        except _CONNECTION_FAILURES as err:
            self._connection_failed()
            raise DatabaseUnavailable(f"{type(err).__name__}: {err}") from err
        except asyncpg.PostgresError as err:
            if err.sqlstate == LEASE_LOST_SQLSTATE:
                raise LeaseLost(str(err)) from None
            raise
        finally:
            if observer is not None:
                observer(time.perf_counter() - started)

    async def _run(self, method: Callable[..., Any], sql: str, args: tuple[Any, ...],
                   fence: StatementFence | None) -> Any:
        """`fence`: the task's fence, to be checked in PostgreSQL too (None: not fenced there)."""
        raise NotImplementedError

    def _connection_failed(self) -> None:
        """A statement failed of its connection (a unit of work's connection is then not lent again)."""


class UnitOfWork(_Queries):
    """One transaction on one connection. It commits only if the block finishes without an exception.

    A crossing into asyncio costs about as much as a statement's own work in asyncpg, so the unit saves them:
    BEGIN goes with the block's first statement, in one crossing; a block that runs no statement sends neither
    BEGIN nor COMMIT; and a block's last write may carry the COMMIT with it (`fetchrow_then_commit`)."""

    def __init__(self, connection: asyncpg.Connection, observer: QueryObserver | None = None,
                 faults: list[PlannedFault] | tuple[()] = ()) -> None:
        self._connection = connection
        self._observer = observer
        self._faults = faults
        self.begun = False
        self.committed = False
        self.broken = False
        """A statement failed of the connection: it goes back to be closed, not lent again."""

    def _connection_failed(self) -> None:
        self.broken = True

    async def fetchrow_then_commit(self, sql: str, *args: Any,
                                   commits: Callable[[Record], bool] | None = None) -> Record | None:
        """The block's last statement, and COMMIT in the same crossing when it answers a row (that `commits`
        accepts, when given). When it is the block's only statement it runs alone (no BEGIN, no COMMIT: one
        statement is atomic by itself), so it must change nothing unless it answers such a row (data-modifying
        CTEs guarded by the row's own, or an error that undoes the statement); then the block goes on as if
        nothing had run. After other statements, when nothing is committed the block goes on in its transaction
        (to read why), and rolls back unless something commits it later. Nothing runs after a commit."""
        return await self._call(_Final(commits), sql, args)

    async def _run(self, method: Callable[..., Any], sql: str, args: tuple[Any, ...],
                   fence: StatementFence | None) -> Any:
        if self.committed:
            raise RuntimeError("a statement after the unit of work committed")
        if type(method) is _Final:
            if not self.begun:
                # Alone it committed itself, or (a row it does not accept) changed nothing: no BEGIN, no COMMIT
                # (under a fence, the fence carried inside it, or else a transaction of its own, rolled back
                # unless accepted).
                if fence is None:
                    row = await aio_as_trio(self._connection.fetchrow)(sql, *args)
                elif (one := carried(sql, len(args))) is not None:
                    row = await aio_as_trio(self._connection.fetchrow)(one, *args, fence.workspace_id, fence.epoch)
                else:
                    row = await aio_as_trio(_fenced_alone)(self._connection, fence.begin,
                                                           asyncpg.Connection.fetchrow, sql, args, method.accepts)
                self.begun = self.committed = method.accepts(row)
                return row
            row, self.committed = await aio_as_trio(_fetchrow_then_commit)(self._connection, sql, args,
                                                                           method.accepts)
            return row
        if self.begun:
            return await aio_as_trio(method)(self._connection, sql, *args)
        self.begun = True
        begin = fence.begin if fence is not None else "BEGIN"
        return await aio_as_trio(_begin_with)(self._connection, begin, method, sql, args)


class _Final:
    """Stands for the method of `fetchrow_then_commit`'s statement, which `UnitOfWork._run` tells apart."""

    __slots__ = ("commits",)

    def __init__(self, commits: Callable[[Record], bool] | None) -> None:
        self.commits = commits

    def accepts(self, row: Record | None) -> bool:
        """Whether the statement's answer commits it: a row, and one `commits` accepts when given."""
        return row is not None and (self.commits is None or self.commits(row))


async def _begin_with(connection: asyncpg.Connection, begin: str, method: Callable[..., Any], sql: str,
                      args: tuple[Any, ...]) -> Any:
    """(asyncio side) BEGIN (with its fence, if any), then a transaction's first statement."""
    await connection.execute(begin)
    return await method(connection, sql, *args)


async def _fenced_alone(connection: asyncpg.Connection, begin: str, method: Callable[..., Any], sql: str,
                        args: tuple[Any, ...], accepts: Callable[[Any], bool] = lambda _answer: True) -> Any:
    """(asyncio side) One write under a fence: BEGIN with the fence, the statement, and COMMIT if `accepts` its
    answer, else ROLLBACK. Whatever fails on the way rolls back; a connection left inside the transaction (the
    ROLLBACK failed too, or the call was cut off) is not lent again (connections.py)."""
    answer = None
    committed = False
    try:
        await connection.execute(begin)
        answer = await method(connection, sql, *args)
        if accepts(answer):
            await connection.execute("COMMIT")
            committed = True
    finally:
        if not committed and not connection.is_closed():
            await connection.execute("ROLLBACK")
    return answer


async def _fetchrow_each(connection: asyncpg.Connection,
                         statements: Sequence[tuple[str, Sequence[Any]]]) -> list[Record | None]:
    """(asyncio side) `Database.fetchrow_each`."""
    return [await connection.fetchrow(sql, *args) for sql, args in statements]


async def _fetchrow_then_commit(connection: asyncpg.Connection, sql: str, args: tuple[Any, ...],
                                accepts: Callable[[Record | None], bool]) -> tuple[Record | None, bool]:
    """(asyncio side) A begun transaction's last statement, then COMMIT if `accepts` its answer; the row, and
    whether it committed."""
    row = await connection.fetchrow(sql, *args)
    committed = accepts(row)
    if committed:
        await connection.execute("COMMIT")
    return row, committed


class Database(_Queries):
    def __init__(self, pool: ConnectionPool, url: str, acquire_timeout: float = _ACQUIRE_TIMEOUT_SECONDS) -> None:
        self._pool = pool
        self.url = url
        self._acquire_timeout = acquire_timeout
        self._listeners: dict[str, asyncpg.Connection] = {}
        self._faults: list[PlannedFault] = []

    def observe_queries(self, observer: QueryObserver | None) -> None:
        """Tell `observer` how long each statement takes, on the pool and in transactions (the service's metrics);
        None stops it."""
        self._observer = observer

    def fail_next(self, matches: Callable[[str], bool], error: BaseException | None = None, *,
                  times: int = 1) -> PlannedFault:
        """For tests (fault injection without patching query functions): the next `times` statements whose SQL
        `matches` accepts, on the pool or in any of its transactions, raise `error` instead of running;
        DatabaseUnavailable by default, as a lost connection would. A transaction whose statement fails so rolls
        back as on any exception. Returns the plan, whose `raised` counts the statements it failed.

        The service never calls it: with nothing planned each statement costs one truthiness test more."""
        if times < 1:
            raise ValueError("times must be at least 1")
        fault = PlannedFault(matches, error, times)
        self._faults.append(fault)
        return fault

    def pool_statistics(self) -> PoolStatistics:
        return self._pool.statistics()

    @classmethod
    async def connect(cls, url: str, *, min_size: int = 1, max_size: int = 10,
                      acquire_timeout: float = _ACQUIRE_TIMEOUT_SECONDS,
                      application_name: str | None = None) -> "Database":
        pool = ConnectionPool(url, min_size=min_size, max_size=max_size, application_name=application_name)
        try:
            await pool.open()
        except (OSError, asyncpg.PostgresError) as err:
            await pool.close(grace=0)
            raise DatabaseUnavailable(f"cannot connect to PostgreSQL: {err}") from err
        return cls(pool, url, acquire_timeout)

    async def close(self) -> None:
        with trio.CancelScope(shield=True):
            try:
                while self._listeners:
                    _, listener = self._listeners.popitem()
                    listener.terminate()  # nothing to flush on a LISTEN connection; never wait on a dead one
            finally:
                # A graceful close waits for every connection to come back; one lost to a bug would make that
                # wait forever, so it is bounded and the rest is cut.
                await self._pool.close(grace=_CLOSE_GRACE_SECONDS)

    async def fetchrow_each(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[Record | None]:
        """Several reads, each (sql, args), on one connection in one crossing into asyncio: the first row each
        answers (None: no row). Each sees what was committed when it ran, as separate statements do."""
        if self._faults:
            for sql, _args in statements:
                planned = _planned_failure(self._faults, sql)
                if planned is not None:
                    raise planned
        started = time.perf_counter()
        connection = await self._lend()
        broken = False
        try:
            return await aio_as_trio(_fetchrow_each)(connection, statements)
        except _CONNECTION_FAILURES as err:
            broken = True
            raise DatabaseUnavailable(f"{type(err).__name__}: {err}") from err
        finally:
            self._pool.give_back(connection, broken=broken)
            if self._observer is not None:
                self._observer(time.perf_counter() - started)

    async def _lend(self) -> asyncpg.Connection:
        """A connection of the pool, waited for at most the acquire timeout (a Trio deadline: it costs nothing
        once met, where an asyncio timeout would leave a timer behind)."""
        with trio.move_on_after(self._acquire_timeout):
            try:
                return await self._pool.lend()
            except _CONNECTION_FAILURES as err:
                raise DatabaseUnavailable(f"no connection: {type(err).__name__}: {err}") from err
        raise DatabaseUnavailable(f"no connection within {self._acquire_timeout:g}s")

    async def _run(self, method: Callable[..., Any], sql: str, args: tuple[Any, ...],
                   fence: StatementFence | None) -> Any:
        connection = await self._lend()
        broken = False
        try:
            if fence is not None and writes(sql):
                if (one := carried(sql, len(args))) is not None:
                    return await aio_as_trio(method)(connection, one, *args, fence.workspace_id, fence.epoch)
                return await aio_as_trio(_fenced_alone)(connection, fence.begin, method, sql, args)
            return await aio_as_trio(method)(connection, sql, *args)
        except _CONNECTION_FAILURES:
            broken = True       # wrapped as DatabaseUnavailable by _call
            raise
        finally:
            self._pool.give_back(connection, broken=broken)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[UnitOfWork]:
        # Taking the connection is shielded (the wait bounded), and so is COMMIT or ROLLBACK: an interrupted block
        # still rolls back, and its connection always comes back.
        with trio.CancelScope(shield=True):
            connection = await self._lend()
        unit = UnitOfWork(connection, self._observer, self._faults)
        commit = False
        try:
            yield unit
            fence = current_fence()
            if fence is not None and unit.begun and not unit.committed:
                fence.check()                # refused: the block's statements roll back, and the caller hears why
            commit = True
        finally:
            with trio.CancelScope(shield=True):
                try:
                    if unit.begun and not unit.committed:
                        await _end(connection, commit)
                except DatabaseUnavailable:
                    unit.broken = True          # its COMMIT failed of the connection
                    raise
                finally:
                    self._pool.give_back(connection, broken=unit.broken)

    async def listen(self, handlers: Mapping[str, Callable[[str], None]], on_lost: Callable[[], None], *,
                     name: str) -> None:
        """Call `handlers[channel](payload)` for every NOTIFY on each channel, on a connection of its own
        (`name` tells listeners apart: a new one of the same name replaces the old); `on_lost()` once that
        connection is gone, after which notifications may be missed.

        The callbacks run on the asyncio side and must not block: they should only touch in-memory state.
        """
        previous = self._listeners.pop(name, None)
        if previous is not None:
            previous.terminate()
        try:
            connection = await aio_as_trio(asyncpg.connect)(
                self.url, server_settings={"application_name": f"inbox-actors listen {name}"})
            connection.add_termination_listener(lambda _conn: on_lost())
            for channel, on_notify in handlers.items():
                await aio_as_trio(connection.add_listener)(
                    channel, lambda _conn, _pid, _channel, payload, call=on_notify: call(payload))
        except (asyncpg.PostgresError, *_CONNECTION_FAILURES) as err:
            # A server that refuses the connection (starting up, too many clients just after a restart) is as
            # unavailable to a listener as one that does not answer: its caller tries again.
            raise DatabaseUnavailable(f"{type(err).__name__}: {err}") from err
        self._listeners[name] = connection

    async def ping(self) -> None:
        try:
            with trio.fail_after(5):
                await self.fetchval("SELECT 1")
        except (asyncpg.PostgresError, trio.TooSlowError) as err:
            raise DatabaseUnavailable(str(err) or type(err).__name__) from err
