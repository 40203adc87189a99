"""A session-level advisory lock held on a connection of its own: PostgreSQL frees it the moment that connection's
session ends, which is what a node's death looks like from the database (inbox_actors/cluster/liveness.py).

The connection is made here, outside the pool (connections.py), so that no statement of the service ever runs on
it and nothing lends it: the pool's connections carry no session state, this one carries exactly one lock. Its
owner keeps it alive (`check`) and makes a new one when it is lost (a database restart, a session ended by an
operator); whatever connecting or checking meets is raised as DatabaseUnavailable, never as asyncpg's own errors,
so a caller above this package needs no asyncpg and never ends for a database outage.
"""

from __future__ import annotations

from collections.abc import Callable

import asyncpg
import trio
from trio_asyncio import aio_as_trio

from persistence.connections import CONNECT_OPTIONS
from persistence.database import DatabaseUnavailable

# The first key of every lock taken here (pg_advisory_lock(int, int)): the second is hashtext(name). Other two-key
# advisory locks of the service (queries/mcp.py's) use hashtext of their own name as the first key, the lease fence
# 461_369_855 (queries/workspace_leases.py).
LOCK_CLASS = 461_369_854

# What connecting or a statement on the connection may raise when the database is out or the session was ended.
_FAILURES = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError)

CHECK_SECONDS = 2.0


class SessionLock:
    """The lock (LOCK_CLASS, hashtext(`name`)) on a connection of its own to `url`. `on_lost()` is told once when the
    connection ends (from asyncio's side: it must only touch memory)."""

    def __init__(self, url: str, name: str, *, application_name: str) -> None:
        self.url, self.name = url, name
        self._options = {**CONNECT_OPTIONS, "server_settings": {**CONNECT_OPTIONS["server_settings"],
                                                                "application_name": application_name[:63]}}
        self._connection: asyncpg.Connection | None = None

    @property
    def held(self) -> bool:
        return self._connection is not None and not self._connection.is_closed()

    async def take(self, on_lost: Callable[[], None]) -> bool:
        """Connect and take the lock without waiting for it: whether it was taken (False: another session holds it,
        the node's previous process whose end PostgreSQL has not seen yet). Raises DatabaseUnavailable."""
        self.release()
        connection = await _connect(self.url, self._options)
        taken = False
        try:
            with trio.fail_after(CHECK_SECONDS):
                taken = await aio_as_trio(connection.fetchval)("SELECT pg_try_advisory_lock($1, hashtext($2))",
                                                               LOCK_CLASS, self.name)
        except (trio.TooSlowError, *_FAILURES) as err:
            raise DatabaseUnavailable(f"taking the session lock: {type(err).__name__}: {err}") from err
        finally:
            if not taken:   # refused, failed or cancelled: the connection is not left behind
                connection.terminate()
        if not taken:
            return False
        connection.add_termination_listener(lambda _connection: on_lost())
        self._connection = connection
        return True

    async def check(self) -> None:
        """One round trip on the connection, bounded: raises DatabaseUnavailable when the session is gone."""
        connection = self._connection
        if connection is None or connection.is_closed():
            raise DatabaseUnavailable("the session lock's connection is closed")
        try:
            with trio.fail_after(CHECK_SECONDS):
                await aio_as_trio(connection.fetchval)("SELECT 1")
        except (trio.TooSlowError, *_FAILURES) as err:
            raise DatabaseUnavailable(f"the session lock's connection: {type(err).__name__}: {err}") from err

    def release(self) -> None:
        """End the session (and so the lock) now: nothing to flush, and a dead connection is never waited on."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.terminate()


async def _connect(url: str, options: dict) -> asyncpg.Connection:
    try:
        with trio.fail_after(CHECK_SECONDS):
            return await aio_as_trio(asyncpg.connect)(url, **options)
    except (trio.TooSlowError, *_FAILURES) as err:
        raise DatabaseUnavailable(f"connecting for the session lock: {type(err).__name__}: {err}") from err
