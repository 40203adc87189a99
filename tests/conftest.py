"""Shared fixtures: one real PostgreSQL for the session, a fresh database per test: cloned from a migrated template,
or one an earlier test used, emptied (`tests/database_pool.py`).

The server is the embedded one (the same code the service runs, in a throwaway directory, with durability
settings off for speed), or the server of `DATABASE_URL` when that is set (its role needs CREATEDB).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import trio
import trio_asyncio
from argon2 import PasswordHasher

from inbox_actors.access import passwords
from persistence.database import Database, open_database_loop
from persistence.embedded import EmbeddedPostgres
from persistence.migrations import migrate
from tests.browser import SKIP_SETTING, skipping_on_purpose
from tests.database_pool import DatabasePool


class PostgresServer:
    def __init__(self, admin_url: str, *, shared: bool) -> None:
        self.admin_url = admin_url
        # DATABASE_URL's server may serve other pytest processes at once (pytest-xdist workers, another run);
        # an embedded one is this process's own. Names made here carry the process id either way.
        self.shared = shared
        self.process_tag = str(os.getpid())
        self.template = f"inbox_test_template_{self.process_tag}"
        self.databases = DatabasePool(self)

    def url(self, database: str) -> str:
        parts = urlsplit(self.admin_url)
        return urlunsplit(parts._replace(path=f"/{database}"))


async def admin_execute(server: PostgresServer, *statements: str) -> None:
    admin = await Database.connect(server.admin_url, min_size=1, max_size=1)
    try:
        for statement in statements:
            await admin.execute(statement)
    finally:
        await admin.close()


@pytest.fixture(scope="session")
def postgres_server():
    external = os.environ.get("DATABASE_URL")
    embedded = None
    data_dir = None
    if external:
        server = PostgresServer(external, shared=True)
    else:
        data_dir = Path(tempfile.mkdtemp(prefix="inbox-test-pg-"))
        embedded = EmbeddedPostgres(data_dir, durable=False)
        server = PostgresServer(embedded.start().url("postgres"), shared=False)

    async def make_template() -> None:
        async with trio_asyncio.open_loop():
            await admin_execute(server, f'DROP DATABASE IF EXISTS "{server.template}"',
                                 f'CREATE DATABASE "{server.template}"')
            db = await Database.connect(server.url(server.template), min_size=1, max_size=1)
            try:
                await migrate(db)
            finally:
                await db.close()

    trio.run(make_template)
    try:
        yield server
    finally:
        if embedded is not None:
            embedded.stop()
            shutil.rmtree(data_dir, ignore_errors=True)
        else:
            async def drop_databases() -> None:
                async with trio_asyncio.open_loop():
                    await admin_execute(server, *(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
                                                  for name in (*server.databases.made, server.template)))

            trio.run(drop_databases)


@pytest.fixture
async def asyncio_loop():
    """The trio-asyncio loop every database call runs on, as the service opens it (a connection's failure nothing
    awaited is logged there, not raised)."""
    async with open_database_loop() as loop:
        yield loop


@pytest.fixture
async def database_url(asyncio_loop, postgres_server: PostgresServer):
    name = await postgres_server.databases.take()
    yield postgres_server.url(name)
    await postgres_server.databases.give_back(name)


@pytest.fixture
async def db(database_url: str):
    database = await Database.connect(database_url, min_size=1, max_size=10)
    yield database
    await database.close()


# argon2id at the least cost it takes (one pass over 1 MiB, one lane): the same code and checks, at a price a test
# can pay by the dozen. The service's own parameters (RFC 9106's, 0.2 s and 64 MiB a check) are the ones
# tests/unit/test_passwords.py checks, marked `real_password_cost`; the services the tests start as processes keep
# them too.
_CHEAP_HASHER = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)


@pytest.fixture(autouse=True)
def cheap_password_hashing(request, monkeypatch):
    if request.node.get_closest_marker("real_password_cost"):
        yield
        return
    passwords.dummy_hash.cache_clear()
    monkeypatch.setattr(passwords, "_HASHER", _CHEAP_HASHER)
    yield
    passwords.dummy_hash.cache_clear()


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--nodes", type=int, default=1, metavar="N",
        help="run the e2e tests' service as N nodes on one database, each request of its client sent to the next "
             "node (tests/e2e/running_nodes.py); tests marked single_node are skipped (docs/development.md)")


def pytest_terminal_summary(terminalreporter) -> None:
    """A run that left out the browser tests says so at its end, where nobody can miss it."""
    if skipping_on_purpose():
        terminalreporter.write_line(
            f"browser tests skipped on purpose: {SKIP_SETTING} is set", yellow=True, bold=True)
