"""GET /health/actors and GET /metrics with many live actors: p50/p99 over real HTTP at 100,000 live actors, against the
same calls at 1,000 in the same run (the ratio says whether their cost grows with the number of actors).

    .venv/bin/python scripts/bench_health.py                    # 1,000 then 100,000 live actors, 50 calls each
    .venv/bin/python scripts/bench_health.py --small            # 200 then 5,000 actors, 10 calls: a smoke run
    .venv/bin/python scripts/bench_health.py --actors 200000 --calls 100 --database-url postgresql://...

The service is built as `inbox-actors serve` builds it (build_app, serve_app: Hypercorn on a loopback port,
the built-in simulator, the standing actors) on a fresh migrated database (the embedded PostgreSQL, durability
off, in a temporary directory, or a database made on --database-url's server and dropped at the end), with one
more actor kind, `probe` (never passivates, handles a tick), registered through `extra_kinds`. The probes are
activated in-process, one ask each, every tenth given a few more messages so the busiest list has an order;
then GET /health/actors (the default busiest=10) and GET /metrics (a Prometheus scrape) are each called --calls times,
one after another (after 5 untimed), on one kept-alive connection, timed from request to the body read (JSON parsed).
ActorSystem.summary() is timed in-process too.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import httpx
import trio
import trio_asyncio
from harness.options import add_database_url, fill_from_preset, script_parser
from harness.postgres import bench_database
from harness.run import run_on_postgres

from inbox_actors.runtime import Actor, ActorKind, ActorSystem
from inbox_http.server import build_app, serve_app
from inbox_http.settings import Settings

FULL = {"baseline": 1_000, "actors": 100_000, "calls": 50}
SMALL = {"baseline": 200, "actors": 5_000, "calls": 10}


class Probe(Actor):
    async def receive(self, message: object) -> int:
        return 1


def probe_kind() -> ActorKind:
    return ActorKind(name="probe", factory=Probe, idle_timeout=math.inf, mailbox_capacity=8)


async def activate(system: ActorSystem, first: int, last: int) -> None:
    for n in range(first, last):
        ref = system.ref("probe", f"p{n}")
        for _ in range(1 + (n % 5 if n % 10 == 0 else 0)):
            await ref.ask("tick")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


async def time_get(client: httpx.AsyncClient, path: str, calls: int) -> tuple[list[float], httpx.Response]:
    """Seconds each of `calls` GETs of `path` took, request to the body read (JSON parsed when it is JSON)."""
    for _ in range(5):  # warm-up: connection, caches
        await client.get(path)
    seconds = []
    for _ in range(calls):
        started = time.perf_counter()
        answer = await client.get(path)
        if answer.headers["content-type"].startswith("application/json"):
            answer.json()
        seconds.append(time.perf_counter() - started)
        answer.raise_for_status()
    return seconds, answer


async def time_calls(client: httpx.AsyncClient, system: ActorSystem, calls: int, expected: int) -> dict:
    seconds, answer = await time_get(client, "/health/actors", calls)
    body = answer.json()
    scrapes, scrape = await time_get(client, "/metrics", calls)
    if f'inbox_actors_live{{kind="probe"}} {float(expected)}' not in scrape.text:
        raise SystemExit(f"/metrics does not show {expected:,} probes live")
    live = body["kinds"]["probe"]["live"]
    if live != expected:
        raise SystemExit(f"/health/actors shows {live:,} probes live, not {expected:,}")
    in_process = []
    for _ in range(calls):
        started = time.perf_counter()
        system.summary()
        in_process.append(time.perf_counter() - started)
    return {"live": sum(kind["live"] for kind in body["kinds"].values()), "p50": statistics.median(seconds),
            "p99": percentile(seconds, 0.99), "summary_p50": statistics.median(in_process),
            "bytes": len(answer.content), "scrape_p50": statistics.median(scrapes),
            "scrape_p99": percentile(scrapes, 0.99), "scrape_bytes": len(scrape.content)}


def line(label: str, figures: dict) -> str:
    return (f"{label}: {figures['live']:,} actors live: GET /health/actors p50 {figures['p50'] * 1000:.2f} ms, "
            f"p99 {figures['p99'] * 1000:.2f} ms ({figures['bytes']:,} bytes); summary() in-process p50 "
            f"{figures['summary_p50'] * 1000:.3f} ms; GET /metrics p50 {figures['scrape_p50'] * 1000:.2f} ms, p99 "
            f"{figures['scrape_p99'] * 1000:.2f} ms ({figures['scrape_bytes']:,} bytes)")


async def run(args: argparse.Namespace, server_url: str, work_dir: Path) -> tuple[dict, dict]:
    async with trio_asyncio.open_loop():
        async with bench_database(server_url, f"inbox_bench_health_{time.time_ns() % 10**9}") as (_, db):
            settings = Settings(port=0, data_dir=work_dir, actor_idle_seconds=86_400.0, log_level="WARNING")
            app = await build_app(db, settings, extra_kinds=[probe_kind()])
            system: ActorSystem = app.extensions["inbox"].actors
            stop = trio.Event()
            async with trio.open_nursery() as nursery:
                url = await nursery.start(partial(serve_app, app, shutdown_trigger=stop.wait))
                async with httpx.AsyncClient(base_url=url, timeout=60.0) as client:
                    started = time.perf_counter()
                    await activate(system, 0, args.baseline)
                    small = await time_calls(client, system, args.calls, args.baseline)
                    print(line("baseline", small), flush=True)
                    await activate(system, args.baseline, args.actors)
                    print(f"activated {args.actors:,} probes in {time.perf_counter() - started:.1f} s", flush=True)
                    large = await time_calls(client, system, args.calls, args.actors)
                    print(line("at scale", large), flush=True)
                stop.set()
    return small, large


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = script_parser(__doc__)
    parser.add_argument("--small", action="store_true", help=f"{SMALL['baseline']:,} then {SMALL['actors']:,} "
                                                             f"probes, {SMALL['calls']} calls")
    parser.add_argument("--actors", type=int, help=f"probes live at scale (default {FULL['actors']:,})")
    parser.add_argument("--baseline", type=int, help=f"probes live for the baseline (default {FULL['baseline']:,})")
    parser.add_argument("--calls", type=int, help=f"calls timed at each size (default {FULL['calls']})")
    add_database_url(parser)
    args = parser.parse_args(argv)
    fill_from_preset(args, SMALL if args.small else FULL)
    if min(args.actors, args.baseline, args.calls) < 1 or args.baseline > args.actors:
        parser.error("--actors, --baseline and --calls must be at least 1, and --baseline at most --actors")
    return args


async def bench(args: argparse.Namespace, server_url: str, _postgres_pid: int | None, work_dir: Path) -> int:
    small, large = await run(args, server_url, work_dir)
    ratio = large["p50"] / small["p50"]
    print(f"ratio p50 at {args.actors:,} / at {args.baseline:,} probes: {ratio:.2f}x; "
          f"p99 at scale {large['p99'] * 1000:.2f} ms (target: under 50 ms)")
    print(f"ratio p50 at {args.actors:,} / at {args.baseline:,} probes: GET /metrics "
          f"{large['scrape_p50'] / small['scrape_p50']:.2f}x, p99 at scale {large['scrape_p99'] * 1000:.2f} ms")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_on_postgres("bench-health", args.database_url, bench, args, noun="bench")


if __name__ == "__main__":
    sys.exit(main())
