"""A steady moderate load of mixed API calls for minutes, recording the slowest answer: no request may take
over 250 ms (--slow-ms). Every slower request is printed as it happens, with its path and when it started.

    .venv/bin/python scripts/soak_requests.py                  # 10 minutes at 25 requests/s
    .venv/bin/python scripts/soak_requests.py --seconds 60 --rate 40 --database-url postgresql://...

The service runs as scripts/bench_send.py runs it (scripts/harness/send_rig.py: its own process, PostgreSQL, the
platform simulator in a process of its own). Before the clock starts, --chats chats are made with one template
send each. Then requests start at --rate a second, evenly spaced (open loop: a slow answer does not hold back
the next request; at most 256 under way), each kind in turn by weight:
- GET whoami, the Reporting API's conversations list, unread summary, one chat and its messages, the
  workspace's messages, the key list (the full-access key);
- GET the contact list and one contact with the newest `contacts:read` key: one is created (POST /api/keys,
  default limit, 600/min) every --new-key-every seconds and used at once, the first GET with it timed on its
  own ("contacts, fresh key"); the oldest are revoked, so at most 10 are active;
- POST /api/send-message, the template to one of the chats.
Latency runs from just before the request is written to the end of its answer (httpx, keep-alive, at most
64 connections). Printed at the end: per kind, count, errors, p50/p99/max (and 4xx answers by status, which
should be none); the overall max; every slow request; and the service's garbage collections from its /metrics
(`inbox_gc_pause_seconds`: how many of each generation, their total time, how many took over 50, 100 and 250
ms). Exit status 0 when none was slow and none failed (HTTP 5xx or no answer within 30 s), else 1.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx
import trio
from harness.figures import percentiles
from harness.options import add_database_url, script_parser
from harness.run import run_on_postgres
from harness.send_rig import EXISTING_PHONE_BASE, TEMPLATE, running_rig

TIMEOUT_SECONDS = 30.0
MAX_UNDER_WAY = 256
ACTIVE_READ_KEYS = 10
READ = "/api/reporting/v1"


@dataclass
class Kind:
    latencies: list[float] = field(default_factory=list)
    errors: defaultdict = field(default_factory=lambda: defaultdict(int))
    refused: defaultdict = field(default_factory=lambda: defaultdict(int))   # 4xx by status


@dataclass
class Soak:
    client: httpx.AsyncClient
    key: str
    chats: int
    slow_seconds: float
    started: float = field(default_factory=time.perf_counter)
    kinds: defaultdict = field(default_factory=lambda: defaultdict(Kind))
    slow: list[tuple[float, str, str, float, str]] = field(default_factory=list)  # (latency, kind, path, at, outcome)
    slowest: list[tuple[float, str, float]] = field(default_factory=list)   # (latency, kind, at): the top ones
    read_key: str = ""
    read_keys: list[int] = field(default_factory=list)
    counter: itertools.count = field(default_factory=itertools.count)

    async def call(self, kind: str, method: str, path: str, key: str, **options) -> httpx.Response | None:
        at = time.perf_counter()
        wall = datetime.now().strftime("%H:%M:%S.%f")[:-3]
        answer, outcome = None, ""
        try:
            answer = await self.client.request(method, path, headers={"Authorization": f"Bearer {key}"}, **options)
            outcome = str(answer.status_code)
        except httpx.HTTPError as err:
            outcome = type(err).__name__
        took = time.perf_counter() - at
        record = self.kinds[kind]
        record.latencies.append(took)
        if len(self.slowest) < 10 or took > self.slowest[0][0]:
            heapq.heappush(self.slowest, (took, kind, at - self.started))
            if len(self.slowest) > 10:
                heapq.heappop(self.slowest)
        if answer is None or answer.status_code >= 500:
            record.errors[outcome] += 1
        elif answer.status_code >= 400:
            record.refused[outcome] += 1
        if took > self.slow_seconds:
            self.slow.append((took, kind, f"{method} {path}", at - self.started, outcome))
            print(f"SLOW {took:.2f} s: {method} {path} ({kind}) started {wall}, {at - self.started:.1f} s into the "
                  f"soak; answered {outcome}", flush=True)
        return answer

    def phone(self) -> str:
        return str(EXISTING_PHONE_BASE + next(self.counter) % self.chats)

    async def new_read_key(self) -> None:
        """A contacts:read key, used at once; the oldest revoked beyond ACTIVE_READ_KEYS."""
        answer = await self.call("create key", "POST", "/api/keys", self.key,
                                 json={"name": f"soak {time.time():.3f}", "scopes": ["contacts:read"]})
        if answer is None or answer.status_code != 201:
            return
        created = answer.json()
        self.read_key = created["key"]
        self.read_keys.append(created["id"])
        await self.call("contacts, fresh key", "GET", "/api/contacts/paginated", self.read_key,
                        params={"limit": 20})
        while len(self.read_keys) > ACTIVE_READ_KEYS:
            await self.call("revoke key", "POST", f"/api/keys/{self.read_keys.pop(0)}/revoke", self.key)

    def requests(self):
        """The mix, as (weight, kind, method, path function, key function, options function)."""
        full, read = (lambda: self.key), (lambda: self.read_key)
        return [
            (3, "whoami", "GET", lambda: f"{READ}/whoami", full, dict),
            (2, "contacts list", "GET", lambda: "/api/contacts/paginated", read, lambda: {"params": {"limit": 20}}),
            (1, "one contact", "GET", lambda: f"/api/contacts/{self.phone()}", read, dict),
            (2, "conversations", "GET", lambda: f"{READ}/conversations", full, lambda: {"params": {"limit": 20}}),
            (1, "unread summary", "GET", lambda: f"{READ}/conversations/unread-summary", full, dict),
            (1, "one chat", "GET", lambda: f"{READ}/conversations/{self.phone()}", full, dict),
            (1, "chat messages", "GET", lambda: f"{READ}/conversations/{self.phone()}/messages", full, dict),
            (1, "messages", "GET", lambda: f"{READ}/messages", full,
             lambda: {"params": {"status": "delivered", "limit": 20}}),
            (1, "keys", "GET", lambda: "/api/keys", full, dict),
            (2, "send", "POST", lambda: "/api/send-message", full, lambda: {"json": {
                "to": self.phone(), "type": "template",
                "template": {"name": TEMPLATE[0], "language": TEMPLATE[1], "parameters": ["Asha", "#1"]}}}),
        ]


async def soak(args: argparse.Namespace, rig_url: str, key: str) -> Soak:
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64, keepalive_expiry=2.0)
    async with httpx.AsyncClient(base_url=rig_url, limits=limits, timeout=TIMEOUT_SECONDS) as client:
        state = Soak(client, key, args.chats, args.slow_ms / 1000)
        for n in range(args.chats):   # the chats the reads and sends use
            await state.call("making chats", "POST", "/api/send-message", key, json={
                "to": str(EXISTING_PHONE_BASE + n), "type": "template",
                "template": {"name": TEMPLATE[0], "language": TEMPLATE[1], "parameters": ["Asha", "#1"]}})
        state.kinds.pop("making chats", None)
        state.slowest.clear()
        state.slow.clear()
        await state.new_read_key()
        mix = [entry for entry in state.requests() for _ in range(entry[0])]
        state.started = time.perf_counter()
        start = trio.current_time()
        limiter = trio.CapacityLimiter(MAX_UNDER_WAY)
        next_key = start + args.new_key_every
        next_report = start + 30.0

        async def one(entry) -> None:
            async with limiter:
                _, kind, method, path, key_of, options = entry
                await state.call(kind, method, path(), key_of(), **options())

        async with trio.open_nursery() as nursery:
            for n in itertools.count():
                due = start + n / args.rate
                if due >= start + args.seconds:
                    break
                await trio.sleep_until(due)
                if due >= next_key:
                    next_key += args.new_key_every
                    nursery.start_soon(state.new_read_key)
                if due >= next_report:
                    next_report += 30.0
                    done = sum(len(kind.latencies) for kind in state.kinds.values())
                    worst = max((max(kind.latencies) for kind in state.kinds.values() if kind.latencies), default=0)
                    print(f"  {due - start:.0f} s: {done:,} answered, max so far {worst * 1e3:.0f} ms, "
                          f"{len(state.slow)} over {args.slow_ms:g} ms", flush=True)
                nursery.start_soon(one, mix[n % len(mix)])
        return state


def report(state: Soak, seconds: float) -> int:
    total = sum(len(kind.latencies) for kind in state.kinds.values())
    print(f"\n{total:,} requests in {seconds:.0f} s ({total / seconds:.1f}/s)")
    print(f"  {'kind':22} {'count':>7} {'errors':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    worst, errors = 0.0, 0
    for name, kind in sorted(state.kinds.items()):
        figures = percentiles(kind.latencies)
        failed = sum(kind.errors.values())
        errors += failed
        worst = max(worst, max(kind.latencies, default=0.0))
        print(f"  {name:22} {figures['count']:7,} {failed:6,} {figures['p50'] or 0:8.1f} {figures['p99'] or 0:8.1f} "
              f"{figures['max'] or 0:8.1f}" + (f"  errors {dict(kind.errors)}" if failed else "")
              + (f"  refused {dict(kind.refused)}" if kind.refused else ""))
    print(f"max latency: {worst * 1e3:.0f} ms; requests over {state.slow_seconds * 1e3:g} ms: {len(state.slow)}; "
          f"errors: {errors}")
    for took, kind, path, at, outcome in sorted(state.slow, reverse=True)[:20]:
        print(f"  {took:.2f} s  {path} ({kind}) at {at:.1f} s, answered {outcome}")
    print("the 10 slowest, by when they started (several at once: the whole service, or the machine, paused):")
    for took, kind, at in sorted(state.slowest, key=lambda entry: entry[2]):
        print(f"  {at:7.2f} s into the soak: {took * 1e3:6.0f} ms  {kind}")
    return 1 if state.slow or errors else 0


async def run(args: argparse.Namespace, server_url: str, postgres_pid: int | None, work_dir: Path) -> int:
    async with running_rig(server_url, postgres_pid, work_dir, f"inbox_bench_soak_{os.getpid()}") as rig:
        print(f"service {rig.url} (pid {rig.service.process.pid}); {args.rate:g} requests/s for {args.seconds:g} s, "
              f"a new contacts:read key every {args.new_key_every:g} s", flush=True)
        state = await soak(args, rig.url, rig.ws.key)
        async with httpx.AsyncClient(base_url=rig.url, timeout=TIMEOUT_SECONDS) as client:
            exposition = (await client.get("/metrics", headers={"Authorization": f"Bearer {rig.ws.key}"})).text
    status = report(state, args.seconds)
    report_collections(exposition)
    return status


def report_collections(exposition: str) -> None:
    """The service's garbage collections during its life, from `inbox_gc_pause_seconds` on its /metrics."""
    counts: dict[str, float] = {}
    sums: dict[str, float] = {}
    within: dict[tuple[str, str], float] = {}
    for line in exposition.splitlines():
        if not line.startswith("inbox_gc_pause_seconds"):
            continue
        name, _, value = line.rpartition(" ")
        labels = dict(part.split("=") for part in name[name.index("{") + 1:-1].replace('"', "").split(","))
        generation = labels["generation"]
        if name.startswith("inbox_gc_pause_seconds_count"):
            counts[generation] = float(value)
        elif name.startswith("inbox_gc_pause_seconds_sum"):
            sums[generation] = float(value)
        elif name.startswith("inbox_gc_pause_seconds_bucket"):
            within[(generation, labels["le"])] = float(value)
    if not counts:
        print("garbage collections: the service's /metrics has no inbox_gc_pause_seconds")
        return
    print("garbage collections over the service's life (generation: count, total time, over 50 / 100 / 250 ms):")
    for generation in sorted(counts):
        over = [counts[generation] - within.get((generation, le), 0.0) for le in ("0.05", "0.1", "0.25")]
        print(f"  {generation}: {counts[generation]:,.0f}, {sums.get(generation, 0.0) * 1e3:,.0f} ms, "
              f"{over[0]:.0f} / {over[1]:.0f} / {over[2]:.0f}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = script_parser(__doc__)
    parser.add_argument("--seconds", type=float, default=600.0, help="how long (600)")
    parser.add_argument("--slow-ms", type=float, default=250.0, help="an answer slower than this fails the soak (250)")
    parser.add_argument("--rate", type=float, default=25.0, help="requests started a second (25)")
    parser.add_argument("--chats", type=int, default=64, help="chats the reads and sends use (64)")
    parser.add_argument("--new-key-every", type=float, default=10.0, help="seconds between new contacts:read keys")
    add_database_url(parser)
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.rate <= 0 or args.chats < 1 or args.new_key_every <= 0 or args.slow_ms <= 0:
        parser.error("--seconds, --rate, --slow-ms and --new-key-every must be above 0, --chats at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    status = run_on_postgres("soak", args.database_url, run, args, count_statements=True)
    load = os.getloadavg()
    print(f"load average after {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return status


if __name__ == "__main__":
    sys.exit(main())
