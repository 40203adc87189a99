"""What forwarding costs: the same request answered by the node holding its workspace, and landing on another node
that relays it there; and what counting a client address on the node that owns it costs.

    .venv/bin/python scripts/bench_forwarding.py [--requests 4000] [--rounds 4] [--database-url URL]

1. Two nodes (`inbox-actors serve`, each its own process) on one database, with one cluster secret; a workspace
   and a key whose limit nothing reaches. The first node takes the workspace (the first call goes there).
2. In each round, `--requests / --rounds` calls of `GET /api/reporting/v1/whoami` to the first node (the right one)
   and as many to the second (the wrong one, which relays each to the first), one at a time on a kept-alive
   connection each, alternating so that both see the same machine. The order of the two alternates every round.
3. Prints, for each way: the latency (p50, p99) the client saw and the CPU per request of each node (psutil, by
   process), and the cost of landing on the wrong node: its added latency and the relaying node's CPU per request,
   also as a ratio to the CPU of answering the request.
4. Then the per-IP ceiling's part, all on the first node: calls with a key exempt from it (no admission), and with
   the ordinary key from a loopback address the first node owns (admitted in its own bucket) and from one the
   second owns (asked of the second over the network). Which node owns an address is read off the first node's
   /metrics (`inbox_address_admissions`). `--clients N`: N clients call at once (the asks to the owner then go
   together). Prints each kind's p50 and CPU per request of both nodes, and what an admission costs here and asked
   of the owner, also as a ratio to answering the request.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time
from pathlib import Path

import httpx
import trio
import trio_asyncio
from harness.options import add_database_url, script_parser
from harness.postgres import bench_database
from harness.processes import Child, service_child
from harness.run import run_on_postgres
from harness.spawned_service import parse_metrics
from harness.workspace import make_workspace

from inbox_actors.access import accounts

WHOAMI = "/api/reporting/v1/whoami"
ADMITTED = 'inbox_address_admissions_total{{way="{}"}}'


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


async def calls(client: httpx.AsyncClient, key: str, count: int, way: Way, nodes: dict[str, Child],
                clients: int = 1) -> None:
    """`count` calls by `clients` clients at once, each one call at a time."""
    before = {name: node.cpu_seconds() or 0.0 for name, node in nodes.items()}

    async def one_client(share: int) -> None:
        for _ in range(share):
            started = time.perf_counter()
            answer = await client.get(WHOAMI, headers={"Authorization": f"Bearer {key}"})
            way.latencies.append(time.perf_counter() - started)
            if answer.status_code != 200:
                raise RuntimeError(f"{WHOAMI} answered {answer.status_code}: {answer.text[:200]}")

    async with trio.open_nursery() as nursery:
        for n in range(clients):
            nursery.start_soon(one_client, count // clients + (n < count % clients))
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
                    exempt = await _exempt_key(db, ws.workspace_id)
                    await admission_costs(first.ready["url"], ws.key, exempt, nodes, args)
    return 0


async def _exempt_key(db, workspace_id: int) -> str:
    """A second key of the workspace, exempt from the per-IP ceiling (as a long-standing integration is)."""
    member = await db.fetchval("SELECT id FROM members WHERE workspace_id = $1 LIMIT 1", workspace_id)
    issued = await accounts.create_key(db, workspace_id=workspace_id, member_id=member, name="bench exempt",
                                       scopes=["all"], rate_limit_per_minute=100_000)
    await db.execute("UPDATE api_keys SET limits_exempt = true WHERE id = $1", issued.id)
    return issued.key


async def _admitted(client: httpx.AsyncClient) -> dict[str, float]:
    metrics = parse_metrics((await client.get("/metrics")).text)
    return {way: metrics.get(ADMITTED.format(way), 0.0) for way in ("here", "owner", "unanswered")}


async def admission_costs(url: str, key: str, exempt: str, nodes: dict[str, Child], args) -> None:
    """Part 4 of the docstring: exempt calls, calls admitted here, calls admitted by the other node."""
    probe = httpx.AsyncClient(base_url=url, timeout=10)
    owned: dict[str, httpx.AsyncClient] = {}
    try:
        for last in range(2, 60):             # loopback source addresses until one of each owner is found
            client = httpx.AsyncClient(base_url=url, timeout=10,
                                       transport=httpx.AsyncHTTPTransport(local_address=f"127.0.0.{last}"))
            before = await _admitted(probe)
            await calls(client, key, 1, Way(), nodes)
            after = await _admitted(probe)
            way = next((way for way in after if after[way] > before[way]), None)
            if way in ("here", "owner") and way not in owned:
                owned[way] = client
            else:
                await client.aclose()
            if len(owned) == 2:
                break
        if len(owned) < 2:
            print(f"no loopback address of each owner found ({sorted(owned)}); the ceiling's part is skipped")
            return
        kinds = {"exempt": (owned["here"], exempt), "here": (owned["here"], key), "owner": (owned["owner"], key)}
        ways = {name: Way() for name in kinds}
        each = max(1, args.requests // args.rounds)
        for round_ in range(args.rounds):
            order = list(kinds) if round_ % 2 == 0 else list(reversed(kinds))
            for name in order:
                client, used = kinds[name]
                await calls(client, used, each, ways[name], nodes, args.clients)
        report_admissions(ways, args.clients)
    finally:
        await probe.aclose()
        for client in owned.values():
            await client.aclose()


def report_admissions(ways: dict[str, Way], clients: int) -> None:
    base = ways["exempt"].cpu_per_request("first")
    print(f"the per-IP ceiling's part, {clients} client{'s' if clients > 1 else ''} at once:")
    for name, said in (("exempt", "exempt from the ceiling"), ("here", "admitted in the first node's bucket"),
                       ("owner", "admitted by the second node")):
        way = ways[name]
        print(f"ceiling, {said}: {len(way.latencies):,} calls, p50 {way.percentile(0.5):.2f} ms, "
              f"p99 {way.percentile(0.99):.2f} ms; CPU per request {way.cpu_per_request('first'):.3f} ms "
              f"(first), {way.cpu_per_request('second'):.3f} ms (second)")
    here = ways["here"].cpu_per_request("first") - base
    asked = ways["owner"].cpu_per_request("first") - base
    owner = ways["owner"].cpu_per_request("second") - ways["exempt"].cpu_per_request("second")
    if base:
        print(f"an admission costs {here:.3f} ms of CPU in the node's own bucket ({here / base:.2f} of answering "
              f"the call); asked of the owner, {asked:.3f} ms of the asking node's ({asked / base:.2f}) and "
              f"{owner:.3f} ms of the owner's ({owner / base:.2f}), and "
              f"{ways['owner'].percentile(0.5) - ways['here'].percentile(0.5):.2f} ms more at p50")


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
    parser.add_argument("--clients", type=int, default=1,
                        help="clients calling at once in the per-IP ceiling's part (1: one call at a time)")
    add_database_url(parser)
    args = parser.parse_args(argv)
    if args.requests < 1 or args.rounds < 1 or args.clients < 1:
        parser.error("--requests, --rounds and --clients must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_on_postgres("forwarding", args.database_url, bench, args)


if __name__ == "__main__":
    sys.exit(main())
