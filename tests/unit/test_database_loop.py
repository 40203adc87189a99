"""The asyncio loop the database runs on (persistence/database.py `open_database_loop`): a database connection's
failure that nothing awaited is logged, never raised into the loop's nursery, which ended the whole node when a
PostgreSQL restart cut a connection asyncpg was opening (issue 40, item 6). Any other such error still surfaces."""

from __future__ import annotations

import asyncio
import gc
import logging

import asyncpg
import pytest
import trio

from persistence.database import open_database_loop


def unawaited(loop: asyncio.AbstractEventLoop, error: BaseException) -> None:
    """A future that failed and that nobody awaits, dropped: asyncio reports it to the loop's exception handler, as
    it did for asyncpg's TLS-upgrade future when the server went away ("Future exception was never retrieved")."""
    future = loop.create_future()
    future.set_exception(error)
    del future
    gc.collect()


@pytest.mark.parametrize("error", [ConnectionError("unexpected connection_lost() call"),
                                   asyncpg.InterfaceError("cannot perform operation: another operation is in progress"),
                                   asyncpg.exceptions.AdminShutdownError("terminating connection")],
                         ids=["connection lost", "another operation in progress", "admin shutdown"])
async def test_a_database_failure_nothing_awaited_is_logged_and_the_loop_goes_on(caplog, error):
    with caplog.at_level(logging.WARNING, logger="persistence.database"):
        async with open_database_loop() as loop:
            unawaited(loop, error)
            await trio.sleep(0.05)           # the loop and its nursery still run
    assert "nothing awaited; the service goes on" in caplog.text


async def test_any_other_error_nothing_awaited_still_surfaces():
    with pytest.RaisesGroup(pytest.RaisesExc(ValueError, match="a bug"), flatten_subgroups=True):
        async with open_database_loop() as loop:
            unawaited(loop, ValueError("a bug"))
            await trio.sleep(1)
