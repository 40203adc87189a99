"""The PostgreSQL a script runs on, and the database it makes there: the embedded server (durability off) in the
script's temporary directory, or the server of --database-url (its role needs CREATEDB); on either, a database of
the script's own (`inbox_bench_*`), migrated, and dropped at the end, so that a run leaves nothing behind (the
tests that run the scripts check it)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import trio
from trio_asyncio import aio_as_trio

from persistence.database import Database
from persistence.embedded import EmbeddedPostgres
from persistence.migrations import migrate


class _CountingPostgres(EmbeddedPostgres):
    """The embedded server with pg_stat_statements loaded (BEGIN, COMMIT and the pool's reset counted too)."""

    def _server_options(self, port: int) -> str:
        return (super()._server_options(port) + " -c shared_preload_libraries=pg_stat_statements"
                " -c pg_stat_statements.track_utility=on -c pg_stat_statements.max=10000")


@contextlib.contextmanager
def postgres_server(database_url_option: str | None, work_dir: Path, *,
                    count_statements: bool = False) -> Iterator[tuple[str, int | None]]:
    """(server URL, PostgreSQL's pid when embedded): the embedded server in `work_dir`/data, durability off (with
    `count_statements`, pg_stat_statements preloaded), or the given one as it is."""
    if database_url_option:
        where = urlsplit(database_url_option)
        print(f"PostgreSQL: {where.hostname}:{where.port or 5432} (--database-url)", flush=True)
        yield database_url_option, None
        return
    embedded = (_CountingPostgres if count_statements else EmbeddedPostgres)(work_dir / "data", durable=False)
    try:
        server_url = embedded.start().url("postgres")
        pid = int((work_dir / "data" / "pg" / "postmaster.pid").read_text().split()[0])
        print(f"PostgreSQL: embedded (durability off{', pg_stat_statements' if count_statements else ''}) in "
              f"{work_dir / 'data'}", flush=True)
        yield server_url, pid
    finally:
        embedded.stop()


def database_url(server_url: str, name: str) -> str:
    return urlunsplit(urlsplit(server_url)._replace(path=f"/{name}"))


async def create_database(server_url: str, name: str) -> None:
    """A fresh, empty database `name` (one a killed run left behind is dropped first). In a trio-asyncio loop."""
    admin = await aio_as_trio(asyncpg.connect)(server_url)
    try:
        await aio_as_trio(admin.execute)(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await aio_as_trio(admin.execute)(f'CREATE DATABASE "{name}"')
    finally:
        await aio_as_trio(admin.close)()


async def drop_database(server_url: str, name: str) -> None:
    admin = await aio_as_trio(asyncpg.connect)(server_url)
    try:
        await aio_as_trio(admin.execute)(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await aio_as_trio(admin.close)()


async def outage(server_url: str, embedded: bool, work_dir: Path, database: str, down_for: float) -> str:
    """PostgreSQL out for about `down_for` seconds, returning once it answers again; what was done, in words. The
    embedded server (in `work_dir`/data) is stopped (fast: every session ended, as a restart does) and started again
    on its port; a server of --database-url, which a script may not restart, has `database` refuse connections and
    its sessions ended for that long instead (what tests/integration/test_database_blip.py does)."""
    if embedded:
        await trio.to_thread.run_sync(EmbeddedPostgres(work_dir / "data", durable=False).restart, down_for)
        return "the embedded PostgreSQL stopped (fast shutdown) and started again on its port"
    admin = await aio_as_trio(asyncpg.connect)(server_url)
    try:
        await aio_as_trio(admin.execute)(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS false')
        await aio_as_trio(admin.execute)(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", database)
        await trio.sleep(down_for)
    finally:
        with trio.CancelScope(shield=True):
            await aio_as_trio(admin.execute)(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS true')
            await aio_as_trio(admin.close)()
    return f"database {database} refused connections and its sessions were ended (--database-url: not restarted)"


@contextlib.asynccontextmanager
async def bench_database(server_url: str, name: str) -> AsyncIterator[tuple[str, Database]]:
    """A fresh migrated database on the server, dropped on the way out; (its URL, a pool on it)."""
    await create_database(server_url, name)
    url = database_url(server_url, name)
    try:
        db = await Database.connect(url, min_size=1, max_size=4)
        try:
            await migrate(db)
            yield url, db
        finally:
            await db.close()
    finally:
        with trio.CancelScope(shield=True):
            await drop_database(server_url, name)
