"""`inbox-actors migrate`: apply pending database migrations."""

from __future__ import annotations

import argparse
from typing import Any

from inbox_http.cli.database import DatabaseCommand
from persistence.database import Database
from persistence.migrations import available_migrations


def add_command(commands: Any) -> None:
    commands.add_parser("migrate", help="apply pending database migrations")


async def migrate(db: Database, args: argparse.Namespace) -> dict:
    # open_database has applied whatever was pending.
    version = await db.fetchval("SELECT max(version) FROM schema_migrations")
    return {"schema_version": version, "migrations": len(available_migrations())}


COMMANDS: dict[str | None, DatabaseCommand] = {None: migrate}
