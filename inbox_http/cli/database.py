"""Running one command against the database: open it (migrating), run, turn expected failures into exits."""

from __future__ import annotations

import argparse
from typing import Any, Awaitable, Callable, NamedTuple

import trio

from inbox_actors.domain.errors import OperatorError
from inbox_http.cli.console import EXIT_BAD_ARGUMENTS, EXIT_FAILURE, fail
from inbox_http.settings import Settings
from persistence.database import Database, DatabaseUnavailable, open_database_loop
from persistence.embedded import EmbeddedPostgresError
from persistence.startup import open_database

# A command's work: the open database and the parsed arguments in, the JSON-ready result out.
DatabaseCommand = Callable[[Database, argparse.Namespace], Awaitable[Any]]


class _Failure(NamedTuple):
    message: str
    status: int


def run_with_database(settings: Settings, command: DatabaseCommand, args: argparse.Namespace) -> Any:
    async def run() -> Any:
        # Expected failures are turned into values inside the loop: past it they arrive wrapped in groups.
        async with open_database_loop():
            try:
                async with open_database(url=settings.database_url, data_dir=settings.data_dir,
                                         pool_size=2) as db:
                    return await command(db, args)
            except OperatorError as err:  # any area's refusal: its message, exit status 2
                return _Failure(str(err), EXIT_BAD_ARGUMENTS)
            except (DatabaseUnavailable, EmbeddedPostgresError) as err:
                return _Failure(str(err), EXIT_FAILURE)

    outcome = trio.run(run)
    if isinstance(outcome, _Failure):
        fail(outcome.message, outcome.status)
    return outcome
