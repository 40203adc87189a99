"""Numbered SQL migrations (`migrations/NNN_name.sql`), applied in order, each in its own transaction together
with its row in `schema_migrations`. An advisory lock makes concurrent starts of several processes safe:
one applies, the others wait and then find nothing left to do."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from persistence.database import Database

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
_FILE_NAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")
# Any fixed number; it only has to be the same for every process migrating this database.
_ADVISORY_LOCK_ID = 7_421_001


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Path

    def sql(self) -> str:
        return self.path.read_text()


def available_migrations(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    found = []
    for path in directory.glob("*.sql"):
        match = _FILE_NAME.match(path.name)
        if match is None:
            raise ValueError(f"migration file name must look like 001_name.sql: {path.name}")
        found.append(Migration(int(match[1]), match[2], path))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise ValueError(f"two migrations share a number: {versions}")
    return found


async def migrate(db: Database, directory: Path = MIGRATIONS_DIR) -> list[int]:
    """Apply every pending migration; return the versions applied now."""
    async with db.transaction() as tx:
        await tx.execute("SELECT pg_advisory_xact_lock($1)", _ADVISORY_LOCK_ID)
        await tx.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
    applied_now = []
    for migration in available_migrations(directory):
        async with db.transaction() as tx:
            await tx.execute("SELECT pg_advisory_xact_lock($1)", _ADVISORY_LOCK_ID)
            done = await tx.fetchval("SELECT 1 FROM schema_migrations WHERE version = $1", migration.version)
            if done:
                continue
            await tx.execute(migration.sql())
            await tx.execute(
                "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", migration.version, migration.name
            )
            applied_now.append(migration.version)
    return applied_now


async def ensure_database_exists(admin: Database, name: str) -> bool:
    """Create database `name` if missing (connected to the server's maintenance database); True if created."""
    if await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name):
        return False
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    except asyncpg.DuplicateDatabaseError:
        return False  # another process starting at the same moment made it
    return True
