"""What the lease fence costs: small writes of one workspace from several connections at once, interleaved round by
round on one server, each variant's PostgreSQL CPU, client CPU (this process: asyncpg's share of a round trip, as
the service pays it) and wall time per write, over the unfenced write of its kind.

Two kinds of write. A transaction (BEGIN, an UPDATE, COMMIT): unfenced, fenced by a row lock on the lease (migration
024) and by an advisory lock (migration 037, the service's, its BEGIN carrying the fence in the same round trip).
A lone write (one UPDATE, its own implicit transaction): unfenced, as a node alone sends it; and with the fence
carried inside it (migration 039, `persistence/statement_fence.py`'s `carried`), as a node of a cluster sends it
now — before, it was sent as a fenced transaction of its own, the "advisory lock" row.

    .venv/bin/python scripts/bench_fence.py                         # 8 connections, 6 rounds of 2,000 transactions
    .venv/bin/python scripts/bench_fence.py --connections 16 --transactions 4000 --rounds 4

Each write updates one row of a table of 1,000. The server is the embedded one with durability off (as the other
benchmarks run it); every process of it is measured (`harness/meters.py`). Exit 0 unless a write failed.
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
from persistence.statement_fence import carried

WORKSPACE = 1
ROWS = 1_000
# The fence of migration 024, read from it and created under a name of its own, to be measured beside the service's.
ROW_LOCK_FENCE = re.search(r"CREATE FUNCTION inbox_lease_fence\(.*?\$\$;", next(
    m for m in available_migrations() if m.version == 24).sql(), re.S)[0].replace(
    "inbox_lease_fence", "bench_row_lock_fence")
UPDATE = "UPDATE bench_rows SET n = n + 1 WHERE id = $1"
CARRIED = carried(UPDATE, 1)
# Each variant: the BEGIN of its transaction, or None for a lone write; its UPDATE; and the write it is set against.
VARIANTS = {
    "transaction, unfenced": ("BEGIN", UPDATE, "transaction, unfenced"),
    "transaction, row lock (024)": (f"BEGIN; SELECT bench_row_lock_fence({WORKSPACE}, 1)", UPDATE,
                                    "transaction, unfenced"),
    "transaction, advisory (037)": (f"BEGIN; SELECT inbox_lease_fence({WORKSPACE}, 1)", UPDATE,
                                    "transaction, unfenced"),
    "lone write, unfenced": (None, UPDATE, "lone write, unfenced"),
    "lone write, carried (039)": (None, CARRIED, "lone write, unfenced"),
}
Result = tuple[float, float, float]
"""PostgreSQL CPU, client CPU and wall time, µs per write."""


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


async def one_round(pool: list[asyncpg.Connection], variant: str, transactions: int, rng: random.Random) -> float:
    """The round's wall seconds: `transactions` writes in all, spread over the connections."""
    per = transactions // len(pool)
    begin, update, _ = VARIANTS[variant]

    async def work(conn: asyncpg.Connection) -> None:
        for _ in range(per):
            if begin is None:
                fence = (WORKSPACE, 1) if update is CARRIED else ()
                await conn.execute(update, rng.randint(1, ROWS), *fence)
                continue
            await conn.execute(begin)
            await conn.execute(update, rng.randint(1, ROWS))
            await conn.execute("COMMIT")

    started = time.perf_counter()
    await asyncio.gather(*(work(conn) for conn in pool))
    return time.perf_counter() - started


async def bench(url: str, pid: int, args: argparse.Namespace) -> dict[str, list[Result]]:
    await setup(url)
    rng = random.Random(7)
    results: dict[str, list[Result]] = {name: [] for name in VARIANTS}
    names = list(VARIANTS)
    # One set of connections for every round (a connection's start is the server's costliest step), warmed first.
    pool = [await asyncpg.connect(url) for _ in range(args.connections)]
    try:
        for name in names:
            await one_round(pool, name, args.connections * 50, rng)
        done = args.transactions // args.connections * args.connections
        for round_number in range(args.rounds):
            for name in (names if round_number % 2 == 0 else list(reversed(names))):
                cpu_before, client_before = tree_cpu_seconds(pid), time.process_time()
                wall = await one_round(pool, name, args.transactions, rng)
                cpu, client = tree_cpu_seconds(pid) - cpu_before, time.process_time() - client_before
                results[name].append((cpu / done * 1e6, client / done * 1e6, wall / done * 1e6))
    finally:
        for conn in pool:
            await conn.close()
    return results


def report(results: dict[str, list[Result]], args: argparse.Namespace) -> None:
    print(f"{args.connections} connections, {args.rounds} rounds of {args.transactions:,} writes a variant, "
          "interleaved; medians over the rounds; µs per write, and over the unfenced write of its kind")
    medians = {name: [statistics.median(r[i] for r in rounds) for i in range(3)] for name, rounds in results.items()}
    print(f"{'variant':<30}{'PostgreSQL CPU':>16}{'client CPU':>16}{'both':>16}{'wall':>16}")
    for name, (cpu, client, wall) in medians.items():
        base = medians[VARIANTS[name][2]]
        print(f"{name:<30}{cpu:>8.1f} {cpu / base[0]:>5.2f}x{client:>9.1f} {client / base[1]:>5.2f}x"
              f"{cpu + client:>9.1f} {(cpu + client) / (base[0] + base[1]):>5.2f}x{wall:>9.1f} {wall / base[2]:>5.2f}x")


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
