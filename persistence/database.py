"""PostgreSQL access for Trio code: asyncpg running on the trio-asyncio loop.

asyncio stays inside this package. Callers above it are plain Trio: every method here is a Trio coroutine
that crosses into asyncio with `aio_as_trio`. It needs a running `trio_asyncio.open_loop()`, which the
service (and the test fixtures) open once around everything.
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Callable, Mapping

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
_CLOSE_GRACE_SECONDS = 10.0


class DatabaseUnavailable(RuntimeError):
    """PostgreSQL could not be reached."""


# Failures of the connection rather than of the statement: the same statement may well succeed later.
_CONNECTION_FAILURES = (
    OSError, asyncpg.InterfaceError, asyncpg.PostgresConnectionError, asyncpg.CannotConnectNowError,
    asyncpg.AdminShutdownError,
)


class _Queries:
    """Statement methods shared by the pool and a unit of work (one connection inside a transaction).

    A lost or refused connection is raised as DatabaseUnavailable, so callers above this package can tell
    "try again later" from a bad statement without knowing asyncpg.
    """

    _target: Any

    async def fetch(self, sql: str, *args: Any) -> list[Record]:
        return await self._call(self._target.fetch, sql, *args)

    async def fetchrow(self, sql: str, *args: Any) -> Record | None:
        return await self._call(self._target.fetchrow, sql, *args)

    async def fetchval(self, sql: str, *args: Any) -> Any:
        return await self._call(self._target.fetchval, sql, *args)

    async def execute(self, sql: str, *args: Any) -> str:
        return await self._call(self._target.execute, sql, *args)

    @staticmethod
    async def _call(method: Callable[..., Any], *args: Any) -> Any:
        try:
            return await aio_as_trio(method)(*args)
        except _CONNECTION_FAILURES as err:
            raise DatabaseUnavailable(f"{type(err).__name__}: {err}") from err


class UnitOfWork(_Queries):
    """One transaction on one connection. It commits only if the block finishes without an exception."""

    def __init__(self, connection: asyncpg.Connection) -> None:
        self._target = connection


class Database(_Queries):
    def __init__(self, pool: asyncpg.Pool, url: str) -> None:
        self._target = pool
        self._pool = pool
        self.url = url
        self._listeners: dict[str, asyncpg.Connection] = {}

    @classmethod
    async def connect(cls, url: str, *, min_size: int = 1, max_size: int = 10) -> "Database":
        try:
            pool = await aio_as_trio(asyncpg.create_pool)(
                url, min_size=min_size, max_size=max_size, command_timeout=60,
                server_settings={"application_name": "inbox-actors", "timezone": "UTC"},
            )
        except (OSError, asyncpg.PostgresError) as err:
            raise DatabaseUnavailable(f"cannot connect to PostgreSQL: {err}") from err
        return cls(pool, url)

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
        # Shielded (and bounded): a cancellation landing as the pool hands the connection over would otherwise
        # drop it unreleased, and the pool's close would wait for it forever.
        try:
            with trio.CancelScope(shield=True):
                connection = await aio_as_trio(self._pool.acquire)(timeout=_ACQUIRE_TIMEOUT_SECONDS)
        except (TimeoutError, *_CONNECTION_FAILURES) as err:
            raise DatabaseUnavailable(f"no connection: {type(err).__name__}: {err}") from err
        tx = connection.transaction()
        started = committed = False
        try:
            await aio_as_trio(tx.start)()
            started = True
            yield UnitOfWork(connection)
            with trio.CancelScope(shield=True):
                await aio_as_trio(tx.commit)()
            committed = True
        finally:
            # Shielded: an interrupted block (cancellation included) still rolls back and returns its connection.
            with trio.CancelScope(shield=True):
                if started and not committed:
                    try:
                        await aio_as_trio(tx.rollback)()
                    except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as err:
                        log.warning("rollback failed (the connection is reset on release): %s", err)
                await aio_as_trio(self._pool.release)(connection)

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
