"""The service's PostgreSQL connections, lent on Trio's side: plain asyncpg connections, at most `max_size`.

Why not asyncpg's own pool: lending a connection there is asyncio work (a holder, a proxy, futures, a reset
hook) that costs about as much as the statement it serves once it has crossed the trio-asyncio bridge
(`scripts/bench_database.py`, 2026-11-26: a pooled statement 227 µs of CPU on asyncpg's pool, 154 µs on this
one). Here a lend is a Trio semaphore and a list pop; only the statement itself crosses into asyncio.

What a connection carries between users: nothing the service relies on. The service sets no session state
(no SET, no session advisory locks: migrations take transaction-scoped ones, no cursors, no LISTEN: listeners
have connections of their own), so nothing is reset when a connection comes back. A connection that comes
back closed, still inside a transaction (a ROLLBACK that failed), or from a statement that failed of the
connection, is terminated and a new one is made on a later lend (an idle one the server closed meanwhile is
dropped there too); a statement cancelled mid-flight leaves asyncpg to finish the cancel before the connection's
next statement, as it does on its own pool.
"""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

import asyncpg
import trio
from trio_asyncio import aio_as_trio

log = logging.getLogger("persistence.connections")

CONNECT_OPTIONS: dict[str, Any] = {
    # No asyncio timer per statement or per cached statement: trio-asyncio keeps a cancelled timer (and the
    # contextvars of the request that made it) until it comes due, so asyncpg's command_timeout and statement
    # expiry kept hundreds of thousands alive under load, and full garbage collections grew into pauses of most of
    # a second. The server bounds statements instead; prepared statements simply stay.
    "max_cached_statement_lifetime": 0,
    # A session left inside a transaction this long is ended by the server, which rolls it back: a node stopped
    # (SIGSTOP, a frozen VM) while it holds a write's lease fence open would otherwise hold back the takeover of that
    # workspace for as long as it stays stopped (persistence/statement_fence.py). 4 s is less than a lease can have
    # left when its node stops (6.7 s: inbox_actors/cluster/leases.py), so a takeover never waits on it. No
    # transaction of the service waits on anything but its own statements.
    "server_settings": {"application_name": "inbox-actors", "timezone": "UTC", "statement_timeout": "60s",
                        "idle_in_transaction_session_timeout": "4s"},
}
"""How each connection is made (scripts/bench_database.py makes its asyncio floor's the same way)."""


class PoolStatistics(NamedTuple):
    in_use: int
    """Connections lent to a statement or a transaction."""
    idle: int
    max_size: int


class ConnectionPool:
    """At most `max_size` connections to `url`, lent one user at a time, first come first served."""

    def __init__(self, url: str, *, min_size: int, max_size: int, application_name: str | None = None) -> None:
        if not 0 <= min_size <= max_size or max_size < 1:
            raise ValueError(f"pool sizes must satisfy 0 <= min_size <= max_size >= 1 (got {min_size}, {max_size})")
        self._url = url
        # What pg_stat_activity (and the server's log) shows for these connections: which node they are.
        self._options = CONNECT_OPTIONS if application_name is None else {
            **CONNECT_OPTIONS,
            "server_settings": {**CONNECT_OPTIONS["server_settings"], "application_name": application_name}}
        self._min_size = min_size
        self._max_size = max_size
        # One token per connection that may be lent; waiting for one is waiting for a connection (FIFO).
        self._slots = trio.Semaphore(max_size)
        self._idle: list[asyncpg.Connection] = []   # the most recently given back last: lent first, kept warm
        self._lent: set[asyncpg.Connection] = set()
        self._closed = False

    async def open(self) -> None:
        """Make `min_size` connections now, so a connection failure shows at start-up."""
        while len(self._idle) < self._min_size:
            self._idle.append(await _connect(self._url, self._options))

    async def lend(self) -> asyncpg.Connection:
        """A connection for one user, who gives it back with `give_back`; waits while all are lent (the caller
        bounds the wait). Raises what connecting raises when a new connection has to be made and cannot be."""
        if self._closed:
            raise asyncpg.InterfaceError("the connection pool is closed")
        await self._slots.acquire()
        connection = None
        try:
            # An idle connection the server closed meanwhile (it restarted) would only fail its next statement:
            # dropped here, so the first statements after a database's return do not meet the ones it left.
            while self._idle and self._idle[-1].is_closed():
                self._idle.pop()
            connection = self._idle.pop() if self._idle else await _connect(self._url, self._options)
        finally:
            if connection is None:      # connecting failed or was cancelled: the slot is free again
                self._slots.release()
        self._lent.add(connection)
        return connection

    def give_back(self, connection: asyncpg.Connection, *, broken: bool = False) -> None:
        """The connection's user is done with it. One closed, left inside a transaction, or `broken` (a statement
        failed of the connection: asyncpg's state on it may be anything) is not lent again."""
        self._lent.discard(connection)
        if connection.is_closed():
            pass
        elif broken or connection.is_in_transaction() or self._closed:
            connection.terminate()
        else:
            self._idle.append(connection)
        self._slots.release()

    def statistics(self) -> PoolStatistics:
        return PoolStatistics(in_use=len(self._lent), idle=len(self._idle), max_size=self._max_size)

    async def close(self, grace: float) -> None:
        """Close the idle connections, wait up to `grace` seconds for the lent ones to come back (closing them
        as they do), then terminate those still out."""
        self._closed = True
        with trio.CancelScope(shield=True):
            with trio.move_on_after(grace) as waited:
                while self._idle:
                    await aio_as_trio(self._idle.pop().close)()
                for _ in range(self._max_size):
                    await self._slots.acquire()   # every token back: nothing is lent any more
            if waited.cancelled_caught:
                log.warning("PostgreSQL connections still in use after %gs; terminating them", grace)
                for connection in (*self._lent, *self._idle):
                    connection.terminate()
                self._lent.clear()
                self._idle.clear()


class CannotConnect(ConnectionError):
    """PostgreSQL answered a new connection with an error (no such database, a role refused, too many clients): a
    failure of the connection, like one that was never answered, which callers treat as the database being out of
    reach rather than as their statement's fault."""


async def _connect(url: str, options: dict[str, Any]) -> asyncpg.Connection:
    try:
        return await aio_as_trio(asyncpg.connect)(url, **options)
    except asyncpg.PostgresError as err:
        raise CannotConnect(f"{type(err).__name__}: {err}") from err
