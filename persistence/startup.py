"""Opening the service's database: the configured one, or the private embedded server; migrated either way."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator

import trio

from persistence.database import Database
from persistence.embedded import DATABASE_NAME, EmbeddedPostgres
from persistence.migrations import ensure_database_exists, migrate

log = logging.getLogger("persistence.startup")


@asynccontextmanager
async def open_database(
    *, url: str | None, data_dir: Path, pool_size: int = 10, run_migrations: bool = True,
    application_name: str | None = None,
) -> AsyncIterator[Database]:
    """Yield a migrated Database, its connections named `application_name` (persistence/connections.py's by
    default).

    With `url` None, the embedded server under `data_dir` is used: started if not running, and stopped on
    exit unless another process (the service, another command) still uses it.
    """
    embedded = None
    if url is None:
        embedded = EmbeddedPostgres(data_dir)
        server = await trio.to_thread.run_sync(embedded.start)
    try:
        if embedded is not None:
            admin = await Database.connect(server.url("postgres"), min_size=1, max_size=1)
            try:
                if await ensure_database_exists(admin, DATABASE_NAME):
                    log.info("created database %s", DATABASE_NAME)
            finally:
                await admin.close()
            url = server.url()
        db = await Database.connect(url, min_size=1, max_size=pool_size, application_name=application_name)
        try:
            if run_migrations:
                applied = await migrate(db)
                if applied:
                    log.info("applied migrations %s", applied)
            yield db
        finally:
            await db.close()
    finally:
        if embedded is not None:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(embedded.release)
