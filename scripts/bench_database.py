"""What a statement costs the service's process through `persistence.Database` (asyncpg on the trio-asyncio
loop), against asyncpg on plain asyncio in the same run, against the same server.

    .venv/bin/python scripts/bench_database.py [--rounds 3000] [--database-url URL]

Three shapes, each timed as CPU of this process per operation (steadier than wall time on a shared machine)
and wall time:
- a pooled statement (`db.fetchrow`, a primary-key read);
- a transaction of two statements (read, then update one row), as an actor's write is;
- the same on plain asyncio with one asyncpg connection, made as the service makes its own: the floor; what the
  trio-asyncio bridge (and Database's wrapping) adds is the rest; and through asyncpg's own pool on asyncio,
  for reference (the service lends its connections on Trio's side instead: persistence/connections.py).

The embedded PostgreSQL is started in a temporary directory unless --database-url names a server (its role
needs CREATEDB).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import tempfile
import time
from pathlib import Path

import asyncpg
import trio
from harness.postgres import postgres_server

from persistence.connections import CONNECT_OPTIONS
from persistence.database import Database, open_database_loop

SETUP = ("CREATE TABLE IF NOT EXISTS bench_rows (id int PRIMARY KEY, v bigint NOT NULL)",
         "INSERT INTO bench_rows VALUES (1, 0) ON CONFLICT DO NOTHING")
READ = "SELECT * FROM bench_rows WHERE id = 1"
WRITE = "UPDATE bench_rows SET v = v + 1 WHERE id = 1"


class Timer:
    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        self.figures: dict[str, tuple[float, float]] = {}

    @contextlib.contextmanager
    def timing(self, name: str):
        cpu, wall = time.process_time(), time.perf_counter()
        yield
        self.figures[name] = ((time.process_time() - cpu) * 1e6 / self.rounds,
                              (time.perf_counter() - wall) * 1e6 / self.rounds)


async def through_database(url: str, rounds: int, timer: Timer) -> None:
    async with open_database_loop():
        db = await Database.connect(url, min_size=4, max_size=4)
        try:
            for statement in SETUP:
                await db.execute(statement)
            for _ in range(2):  # the first pass warms the pool and the prepared statements
                with timer.timing("Database: pooled statement"):
                    for _ in range(rounds):
                        await db.fetchrow(READ)
                with timer.timing("Database: transaction of 2 statements"):
                    for _ in range(rounds):
                        async with db.transaction() as tx:
                            await tx.fetchrow(READ)
                            await tx.execute(WRITE)
        finally:
            await db.close()


async def _no_reset(connection: asyncpg.Connection) -> None:
    """asyncpg's pool resets nothing on release, as the service's pool does (connections.py)."""


async def on_asyncio(url: str, rounds: int, timer: Timer) -> None:
    pool = await asyncpg.create_pool(url, min_size=4, max_size=4, reset=_no_reset,
                                     max_inactive_connection_lifetime=0, **CONNECT_OPTIONS)
    connection = await asyncpg.connect(url, **CONNECT_OPTIONS)
    try:
        for _ in range(2):
            with timer.timing("asyncio floor: pooled statement"):
                for _ in range(rounds):
                    await connection.fetchrow(READ)
            with timer.timing("asyncio floor: transaction of 2 statements"):
                for _ in range(rounds):
                    await connection.execute("BEGIN")
                    await connection.fetchrow(READ)
                    await connection.execute(WRITE)
                    await connection.execute("COMMIT")
            with timer.timing("asyncpg's pool: pooled statement"):
                for _ in range(rounds):
                    await pool.fetchrow(READ)
            with timer.timing("asyncpg's pool: transaction of 2 statements"):
                for _ in range(rounds):
                    async with pool.acquire() as pooled, pooled.transaction():
                        await pooled.fetchrow(READ)
                        await pooled.execute(WRITE)
    finally:
        await connection.close()
        await pool.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3000, help="operations per shape (3000)")
    parser.add_argument("--database-url", help="a PostgreSQL server instead of the embedded one")
    args = parser.parse_args(argv)
    work_dir = Path(tempfile.mkdtemp(prefix="inbox-bench-db-"))
    try:
        with postgres_server(args.database_url, work_dir, count_statements=True) as (server_url, _pid):
            timer = Timer(args.rounds)
            trio.run(through_database, server_url, args.rounds, timer)
            asyncio.run(on_asyncio(server_url, args.rounds, timer))
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    print(f"\n{'':44} {'CPU us':>8} {'wall us':>8}   CPU over the asyncio floor")
    for shape in ("pooled statement", "transaction of 2 statements"):
        floor = timer.figures[f"asyncio floor: {shape}"][0]
        for side in ("Database", "asyncio floor", "asyncpg's pool"):
            cpu, wall = timer.figures[f"{side}: {shape}"]
            print(f"{side + ': ' + shape:44} {cpu:8.0f} {wall:8.0f}   {cpu / floor:5.2f}x")


if __name__ == "__main__":
    main()
