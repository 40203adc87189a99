"""PostgreSQL access for Trio code: asyncpg running on the trio-asyncio loop.

asyncio stays inside this package. Callers above it are plain Trio: every method here is a Trio coroutine
that crosses into asyncio with `aio_as_trio`. It needs a running `trio_asyncio.open_loop()`, which the
service (and the test fixtures) open once around everything.
"""

from __future__ import annotations

import logging
import time
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Callable, Mapping, NamedTuple

import asyncpg
import trio
import trio_asyncio
from trio_asyncio import aio_as_trio

log = logging.getLogger("persistence.database")

Record = asyncpg.Record


def open_database_loop():
    """The asyncio loop asyncpg runs on, inside trio: open it once around everything that uses a Database
    (`async with open_database_loop(): ...`)."""
    return trio_asyncio.open_loop()


_ACQUIRE_TIMEOUT_SECONDS = 30.0


async def _keep_session(connection: asyncpg.Connection) -> None:
    """The pool's reset on release, instead of asyncpg's default (advisory unlock, CLOSE ALL, UNLISTEN, RESET
    ALL: a round trip after every pooled statement). Nothing here leaves session state behind: no SET, no
    session advisory locks (migrations take transaction-scoped ones), no cursors, and LISTEN runs on
    connections of its own. An open transaction is still rolled back by asyncpg before this is called."""
_CLOSE_GRACE_SECONDS = 10.0


async def _begin(pool: asyncpg.Pool) -> tuple[asyncpg.Connection, Any]:
    """(asyncio side) A pooled connection with its transaction begun."""
    connection = await pool.acquire()
    begun = False
    try:
        tx = connection.transaction()
        await tx.start()
        begun = True
    finally:
        if not begun:
            await pool.release(connection)
    return connection, tx


async def _end(pool: asyncpg.Pool, connection: asyncpg.Connection, tx: Any, commit: bool) -> None:
    """(asyncio side) COMMIT, or ROLLBACK, then the connection back to the pool whatever happened."""
    try:
        if commit:
            await tx.commit()
        else:
            try:
                await tx.rollback()
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as err:
                log.warning("rollback failed (the connection is reset on release): %s", err)
    finally:
        await pool.release(connection)


POOL_OPTIONS: dict[str, Any] = {
    "reset": _keep_session,
    # No asyncio timer per statement, per connection given back or per cached statement: trio-asyncio keeps a
    # cancelled timer (and the contextvars of the request that made it) until it comes due, so asyncpg's
    # command_timeout (60 s) and idle checks (300 s) kept hundreds of thousands alive under load, and full
    # garbage collections grew into pauses of most of a second. The server bounds statements instead; idle
    # connections and prepared statements simply stay.
    "max_inactive_connection_lifetime": 0,
    "max_cached_statement_lifetime": 0,
    "server_settings": {"application_name": "inbox-actors", "timezone": "UTC", "statement_timeout": "60s"},
}
"""How the service's pool is made (scripts/bench_database.py makes its asyncio floor the same way)."""


class DatabaseUnavailable(RuntimeError):
    """PostgreSQL could not be reached."""


# Failures of the connection rather than of the statement: the same statement may well succeed later.
_CONNECTION_FAILURES = (
    OSError, asyncpg.InterfaceError, asyncpg.PostgresConnectionError, asyncpg.CannotConnectNowError,
    asyncpg.AdminShutdownError,
)


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


class PoolStatistics(NamedTuple):
    in_use: int
    """Connections lent to a statement or a transaction."""
    idle: int
    max_size: int


class _Queries:
    """Statement methods shared by the pool and a unit of work (one connection inside a transaction).

    A lost or refused connection is raised as DatabaseUnavailable, so callers above this package can tell
    "try again later" from a bad statement without knowing asyncpg.
    """

    _target: Any
    _observer: QueryObserver | None = None
    # Faults planned by tests (`Database.fail_next`), shared by the pool and its transactions; empty in service.
    _faults: list[PlannedFault] | tuple[()] = ()

    async def fetch(self, sql: str, *args: Any) -> list[Record]:
        return await self._call(self._target.fetch, sql, *args)

    async def fetchrow(self, sql: str, *args: Any) -> Record | None:
        return await self._call(self._target.fetchrow, sql, *args)

    async def fetchval(self, sql: str, *args: Any) -> Any:
        return await self._call(self._target.fetchval, sql, *args)

    async def execute(self, sql: str, *args: Any) -> str:
        return await self._call(self._target.execute, sql, *args)

    async def _call(self, method: Callable[..., Any], *args: Any) -> Any:
        if self._faults:
            planned = _planned_failure(self._faults, args[0])
            if planned is not None:
                raise planned
        observer = self._observer
        started = time.perf_counter()
        try:
            return await aio_as_trio(method)(*args)
        except _CONNECTION_FAILURES as err:
            raise DatabaseUnavailable(f"{type(err).__name__}: {err}") from err
        finally:
            if observer is not None:
                observer(time.perf_counter() - started)


class UnitOfWork(_Queries):
    """One transaction on one connection. It commits only if the block finishes without an exception."""

    def __init__(self, connection: asyncpg.Connection, observer: QueryObserver | None = None,
                 faults: list[PlannedFault] | tuple[()] = ()) -> None:
        self._target = connection
        self._observer = observer
        self._faults = faults


class Database(_Queries):
    def __init__(self, pool: asyncpg.Pool, url: str, acquire_timeout: float = _ACQUIRE_TIMEOUT_SECONDS) -> None:
        self._target = pool
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
        idle = self._pool.get_idle_size()
        return PoolStatistics(in_use=self._pool.get_size() - idle, idle=idle, max_size=self._pool.get_max_size())

    @classmethod
    async def connect(cls, url: str, *, min_size: int = 1, max_size: int = 10,
                      acquire_timeout: float = _ACQUIRE_TIMEOUT_SECONDS) -> "Database":
        try:
            pool = await aio_as_trio(asyncpg.create_pool)(url, min_size=min_size, max_size=max_size, **POOL_OPTIONS)
        except (OSError, asyncpg.PostgresError) as err:
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
                with trio.move_on_after(_CLOSE_GRACE_SECONDS) as graceful:
                    await aio_as_trio(self._pool.close)()
                if graceful.cancelled_caught:
                    log.warning("PostgreSQL pool did not close within %gs; terminating its connections",
                                _CLOSE_GRACE_SECONDS)
                    self._pool.terminate()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[UnitOfWork]:
        # Each crossing into asyncio costs about as much as a statement, so taking a connection and BEGIN are
        # one crossing, and COMMIT (or ROLLBACK) and giving it back another. Both are shielded (and bounded):
        # a cancellation landing as the pool hands the connection over would otherwise drop it unreleased,
        # and the pool's close would wait for it forever; an interrupted block still rolls back.
        # The wait for a connection is bounded on Trio's side (a trio deadline costs nothing once met; an asyncio
        # timeout would leave a timer behind for 30 s).
        try:
            with trio.CancelScope(shield=True, deadline=trio.current_time() + self._acquire_timeout) as waiting:
                connection, tx = await aio_as_trio(_begin)(self._pool)
        except _CONNECTION_FAILURES as err:
            raise DatabaseUnavailable(f"no connection: {type(err).__name__}: {err}") from err
        if waiting.cancelled_caught:
            raise DatabaseUnavailable(f"no connection within {self._acquire_timeout:g}s")
        commit = False
        try:
            yield UnitOfWork(connection, self._observer, self._faults)
            commit = True
        finally:
            with trio.CancelScope(shield=True):
                await aio_as_trio(_end)(self._pool, connection, tx, commit)

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
        except _CONNECTION_FAILURES as err:
            raise DatabaseUnavailable(f"{type(err).__name__}: {err}") from err
        self._listeners[name] = connection

    async def ping(self) -> None:
        try:
            with trio.fail_after(5):
                await self.fetchval("SELECT 1")
        except (asyncpg.PostgresError, trio.TooSlowError) as err:
            raise DatabaseUnavailable(str(err) or type(err).__name__) from err
