"""What the lease fence costs PostgreSQL: small write transactions of one workspace from several connections at once,
unfenced, fenced by a row lock on the lease (the fence of migration 024) and fenced by an advisory lock (migration
037, the service's now), interleaved round by round on one server; PostgreSQL's CPU and the wall time per transaction
of each, and each fence over the unfenced.

    .venv/bin/python scripts/bench_fence.py                         # 8 connections, 6 rounds of 2,000 transactions
    .venv/bin/python scripts/bench_fence.py --connections 16 --transactions 4000 --rounds 4

Each transaction is what a conversation's write is to PostgreSQL: BEGIN (with the fence, in the same round trip, as
`persistence/statement_fence.py` sends it), an UPDATE of one row of a table of 1,000, COMMIT. The server is the
embedded one with durability off (as the other benchmarks run it); every process of it is measured
(`harness/meters.py`). Exit 0 unless a transaction failed.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import asyncpg
from harness.meters import tree_cpu_seconds
from harness.postgres import postgres_server

from persistence.migrations import available_migrations

WORKSPACE = 1
ROWS = 1_000
# The fence of migration 024, read from it and created under a name of its own, to be measured beside the service's.
ROW_LOCK_FENCE = re.search(r"CREATE FUNCTION inbox_lease_fence\(.*?\$\$;", next(
    m for m in available_migrations() if m.version == 24).sql(), re.S)[0].replace(
    "inbox_lease_fence", "bench_row_lock_fence")
VARIANTS = {
    "unfenced": "BEGIN",
    "row lock (migration 024)": f"BEGIN; SELECT bench_row_lock_fence({WORKSPACE}, 1)",
    "advisory lock (migration 037)": f"BEGIN; SELECT inbox_lease_fence({WORKSPACE}, 1)",
}


async def setup(url: str) -> None:
    """The service's schema (every migration, in order), the old fence beside it, the rows and the lease."""
    conn = await asyncpg.connect(url)
    try:
        for migration in available_migrations():
            await conn.execute(migration.sql())
        await conn.execute(ROW_LOCK_FENCE)
        await conn.execute("CREATE TABLE bench_rows (id int PRIMARY KEY, n bigint NOT NULL DEFAULT 0)")
        await conn.execute(f"INSERT INTO bench_rows (id) SELECT generate_series(1, {ROWS})")
        workspace = await conn.fetchval("INSERT INTO workspaces (name, plan, phone_number_id) VALUES ('bench fence',"
                                        " 'scale', 'bench-fence')"
                                        " RETURNING id")
        assert workspace == WORKSPACE, workspace
        await conn.execute("INSERT INTO workspace_leases (workspace_id, node_id, epoch, expires_at)"
                           " VALUES ($1, 'bench', 1, now() + interval '1 day')", WORKSPACE)
    finally:
        await conn.close()


async def one_round(pool: list[asyncpg.Connection], begin: str, transactions: int, rng: random.Random) -> float:
    """The round's wall seconds: `transactions` in all, spread over the connections."""
    per = transactions // len(pool)

    async def work(conn: asyncpg.Connection) -> None:
        for _ in range(per):
            await conn.execute(begin)
            await conn.execute("UPDATE bench_rows SET n = n + 1 WHERE id = $1", rng.randint(1, ROWS))
            await conn.execute("COMMIT")

    started = time.perf_counter()
    await asyncio.gather(*(work(conn) for conn in pool))
    return time.perf_counter() - started


async def bench(url: str, pid: int, args: argparse.Namespace) -> dict[str, list[tuple[float, float]]]:
    await setup(url)
    rng = random.Random(7)
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in VARIANTS}
    names = list(VARIANTS)
    # One set of connections for every round (a connection's start is the server's costliest step), warmed first.
    pool = [await asyncpg.connect(url) for _ in range(args.connections)]
    try:
        for name in names:
            await one_round(pool, VARIANTS[name], args.connections * 50, rng)
        done = args.transactions // args.connections * args.connections
        for round_number in range(args.rounds):
            for name in (names if round_number % 2 == 0 else list(reversed(names))):
                cpu_before = tree_cpu_seconds(pid)
                wall = await one_round(pool, VARIANTS[name], args.transactions, rng)
                cpu = tree_cpu_seconds(pid) - cpu_before
                results[name].append((cpu / done * 1e6, wall / done * 1e6))
    finally:
        for conn in pool:
            await conn.close()
    return results


def report(results: dict[str, list[tuple[float, float]]], args: argparse.Namespace) -> None:
    print(f"{args.connections} connections, {args.rounds} rounds of {args.transactions:,} transactions a variant, "
          "interleaved; medians over the rounds")
    base = statistics.median(cpu for cpu, _ in results["unfenced"])
    print(f"{'variant':<32}{'PostgreSQL CPU µs/txn':>24}{'over unfenced':>15}{'wall µs/txn':>13}")
    for name, rounds in results.items():
        cpu = statistics.median(c for c, _ in rounds)
        wall = statistics.median(w for _, w in rounds)
        print(f"{name:<32}{cpu:>24.1f}{cpu / base:>14.2f}x{wall:>13.1f}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=8, help="connections writing at once (8)")
    parser.add_argument("--transactions", type=int, default=2_000, help="transactions a round, per variant (2,000)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds, each variant once a round (6)")
    args = parser.parse_args(argv)
    if args.connections < 1 or args.transactions < args.connections or args.rounds < 1:
        parser.error("--connections and --rounds must be at least 1, --transactions at least --connections")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="inbox-bench-fence-") as work:
        with postgres_server(None, Path(work)) as (server_url, pid):
            results = asyncio.run(bench(server_url, pid, args))
    report(results, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
