"""What forwarding costs: the same request answered by the node holding its workspace, and landing on another node
that relays it there.

    .venv/bin/python scripts/bench_forwarding.py [--requests 4000] [--rounds 4] [--database-url URL]

1. Two nodes (`inbox-actors serve`, each its own process) on one database, with one cluster secret; a workspace
   and a key whose limit nothing reaches. The first node takes the workspace (the first call goes there).
2. In each round, `--requests / --rounds` calls of `GET /api/reporting/v1/whoami` to the first node (the right one)
   and as many to the second (the wrong one, which relays each to the first), one at a time on a kept-alive
   connection each, alternating so that both see the same machine. The order of the two alternates every round.
3. Prints, for each way: the latency (p50, p99) the client saw and the CPU per request of each node (psutil, by
   process), and the cost of landing on the wrong node: its added latency and the relaying node's CPU per request,
   also as a ratio to the CPU of answering the request.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time
from pathlib import Path

import httpx
import trio_asyncio

from harness.options import add_database_url, script_parser
from harness.postgres import bench_database
from harness.processes import Child, service_child
from harness.run import run_on_postgres
from harness.workspace import make_workspace

WHOAMI = "/api/reporting/v1/whoami"


class Way:
    """The calls of one way (right or wrong node): latencies and the CPU each node spent meanwhile."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.cpu = {"first": 0.0, "second": 0.0}

    def percentile(self, share: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000

    def cpu_per_request(self, node: str) -> float:
        return self.cpu[node] / len(self.latencies) * 1000


async def calls(client: httpx.AsyncClient, key: str, count: int, way: Way, nodes: dict[str, Child]) -> None:
    before = {name: node.cpu_seconds() or 0.0 for name, node in nodes.items()}
    for _ in range(count):
        started = time.perf_counter()
        answer = await client.get(WHOAMI, headers={"Authorization": f"Bearer {key}"})
        way.latencies.append(time.perf_counter() - started)
        if answer.status_code != 200:
            raise RuntimeError(f"{WHOAMI} answered {answer.status_code}: {answer.text[:200]}")
    for name, node in nodes.items():
        way.cpu[name] += (node.cpu_seconds() or 0.0) - before[name]


async def bench(args: argparse.Namespace, server_url: str, _pid: int | None, work_dir: Path) -> int:
    cluster = {"INBOX_CLUSTER_SECRET": secrets.token_urlsafe(24)}
    async with trio_asyncio.open_loop():
        async with bench_database(server_url, f"inbox_bench_{os.getpid()}") as (url, db):
            ws = await make_workspace(db, "Forwarding bench")
            async with service_child(url, work_dir, "first", extra_env=cluster).running(120.0) as first, \
                    service_child(url, work_dir, "second", extra_env=cluster).running(120.0) as second:
                nodes = {"first": first, "second": second}
                async with httpx.AsyncClient(base_url=first.ready["url"], timeout=10) as right_client, \
                        httpx.AsyncClient(base_url=second.ready["url"], timeout=10) as wrong_client:
                    await calls(right_client, ws.key, 1, Way(), nodes)            # the first node takes it
                    holder = await db.fetchval("SELECT node_id FROM workspace_leases WHERE workspace_id = $1",
                                               ws.workspace_id)
                    print(f"nodes: {first.ready['url']} (holds the workspace: {holder}), {second.ready['url']}")
                    warm = max(1, args.requests // 20)
                    await calls(right_client, ws.key, warm, Way(), nodes)
                    await calls(wrong_client, ws.key, warm, Way(), nodes)
                    right, wrong = Way(), Way()
                    each = max(1, args.requests // args.rounds)
                    for round_ in range(args.rounds):
                        order = [(right_client, right), (wrong_client, wrong)]
                        for client, way in order if round_ % 2 == 0 else reversed(order):
                            await calls(client, ws.key, each, way, nodes)
    report(right, wrong)
    return 0


def report(right: Way, wrong: Way) -> None:
    served = right.cpu_per_request("first")
    relayed_by = wrong.cpu_per_request("second")
    print(f"right node: {len(right.latencies):,} requests, p50 {right.percentile(0.5):.2f} ms, "
          f"p99 {right.percentile(0.99):.2f} ms; CPU per request {served:.3f} ms (the node answering)")
    print(f"wrong node: {len(wrong.latencies):,} requests, p50 {wrong.percentile(0.5):.2f} ms, "
          f"p99 {wrong.percentile(0.99):.2f} ms; CPU per request {relayed_by:.3f} ms relaying, "
          f"{wrong.cpu_per_request('first'):.3f} ms answering")
    print(f"landing on the wrong node adds {wrong.percentile(0.5) - right.percentile(0.5):.2f} ms at p50 and "
          f"{relayed_by:.3f} ms of the relaying node's CPU per request "
          f"({relayed_by / served:.2f} of answering it)" if served else "no CPU measured")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = script_parser(__doc__)
    parser.add_argument("--requests", type=int, default=4000, help="calls each way (4000)")
    parser.add_argument("--rounds", type=int, default=4, help="alternations of the two ways (4)")
    add_database_url(parser)
    args = parser.parse_args(argv)
    if args.requests < 1 or args.rounds < 1:
        parser.error("--requests and --rounds must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_on_postgres("forwarding", args.database_url, bench, args)


if __name__ == "__main__":
    sys.exit(main())
