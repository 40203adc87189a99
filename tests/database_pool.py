"""Fresh databases for tests, reused: a test's database is emptied after it and handed to the next test, instead
of cloning the migrated template each time and dropping it after.

A clone writes the whole template (about 9 MB, most of it PostgreSQL's own catalog) through the write-ahead log
and a drop unlinks it again: 60 to 100 ms of CPU each, over a thousand times a run. Emptying a database that a
test left as the template made it costs a few milliseconds: end every other session on it, delete every row and
restart every sequence, with foreign keys and triggers off for that one transaction. A database is reused only
when its schema still matches the template's (a test that made or dropped a table, column, function, trigger or
extension leaves its database to be dropped) and only on a server where the test role is a superuser (the switch
that turns triggers off needs it); otherwise each test gets a clone, as before.
"""

from __future__ import annotations

import asyncpg
import trio
from trio_asyncio import aio_as_trio

# Everything a test could change in a database's schema, as one digest.
_SCHEMA_DIGEST = """
SELECT md5(coalesce(string_agg(item, ',' ORDER BY item), '')) FROM (
    SELECT 'r:' || n.nspname || '.' || c.relname || ':' || c.relkind::text
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND n.nspname NOT LIKE 'pg_temp%'
      AND n.nspname NOT LIKE 'pg_toast_temp%'
    UNION ALL
    SELECT 'a:' || c.relname || '.' || a.attname || ':' || a.atttypid::text
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL
    SELECT 'f:' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'
    UNION ALL
    SELECT 't:' || tgname FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL
    SELECT 'e:' || extname FROM pg_extension
) AS schema_items(item)
"""
_OTHER_SESSIONS = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
_KEPT_TABLES = ("schema_migrations",)
_SESSIONS_END_WITHIN = 5.0


class DatabasePool:
    """The databases of one test process: made from `template`, emptied and reused while they match it."""

    def __init__(self, server) -> None:
        self._server = server
        self._free: list[str] = []
        self._made: set[str] = set()
        self._numbers = 0
        self._reset_sql: str | None = None
        self._digest: str | None = None
        self._reusable: bool | None = None

    @property
    def made(self) -> frozenset[str]:
        return frozenset(self._made)

    async def take(self) -> str:
        if self._free:
            return self._free.pop()
        self._numbers += 1
        name = f"inbox_test_{self._server.process_tag}_{self._numbers}"
        await self._admin(f'CREATE DATABASE "{name}" TEMPLATE "{self._server.template}"')
        self._made.add(name)
        return name

    async def give_back(self, name: str) -> None:
        """Empty the database for the next test, or drop it when it cannot be made like new."""
        with trio.CancelScope(shield=True):
            try:
                reused = await self._empty(name)
            except (OSError, asyncpg.PostgresError):
                reused = False
            if reused:
                self._free.append(name)
            else:
                await self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                self._made.discard(name)

    async def _empty(self, name: str) -> bool:
        connection = await aio_as_trio(asyncpg.connect)(self._server.url(name))
        try:
            if self._reusable is None:
                await self._learn(connection)
            if not self._reusable:
                return False
            if not await self._sessions_ended(connection):
                return False
            if await aio_as_trio(connection.fetchval)(_SCHEMA_DIGEST) != self._digest:
                return False
            await aio_as_trio(connection.execute)(self._reset_sql)
            return True
        finally:
            await aio_as_trio(connection.close)()

    async def _learn(self, connection) -> None:
        """What emptying means here, read from a database that still matches the template (the first one)."""
        self._reusable = bool(await aio_as_trio(connection.fetchval)(
            "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"))
        template = await aio_as_trio(asyncpg.connect)(self._server.url(self._server.template))
        try:
            self._digest = await aio_as_trio(template.fetchval)(_SCHEMA_DIGEST)
            tables = await aio_as_trio(template.fetch)(
                "SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = 'public' "
                "AND tablename <> ALL($1::text[]) ORDER BY tablename", list(_KEPT_TABLES))
            sequences = await aio_as_trio(template.fetch)(
                "SELECT quote_ident(sequencename) AS name FROM pg_sequences WHERE schemaname = 'public' "
                "ORDER BY sequencename")
        finally:
            await aio_as_trio(template.close)()
        statements = ["BEGIN", "SET LOCAL session_replication_role = replica"]
        statements += [f"DELETE FROM {row['name']}" for row in tables]
        statements += [f"ALTER SEQUENCE {row['name']} RESTART" for row in sequences]
        statements.append("COMMIT")
        self._reset_sql = ";\n".join(statements)

    async def _sessions_ended(self, connection) -> bool:
        """End every other session on the database (a service or a process a test left running) and wait until
        they are gone, so nothing writes into it after it was emptied."""
        with trio.move_on_after(_SESSIONS_END_WITHIN):
            while True:
                pids = [row["pid"] for row in await aio_as_trio(connection.fetch)(_OTHER_SESSIONS)]
                if not pids:
                    return True
                await aio_as_trio(connection.execute)(
                    "SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", pids)
                await trio.sleep(0.01)  # a terminated session takes a moment to leave pg_stat_activity
        return False

    async def _admin(self, statement: str) -> None:
        connection = await aio_as_trio(asyncpg.connect)(self._server.admin_url)
        try:
            await aio_as_trio(connection.execute)(statement)
        finally:
            await aio_as_trio(connection.close)()
