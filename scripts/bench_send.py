"""Sends, whoami and the platform's webhooks through the service, each as a ratio to a bare Hypercorn-trio app
measured in the same run on the same machine with the same client concurrency.

    .venv/bin/python scripts/bench_send.py                       # 30 s a phase, 16 clients
    .venv/bin/python scripts/bench_send.py --seconds 10 --profile /tmp/prof   # py-spy during each service phase
    .venv/bin/python scripts/bench_send.py --database-url postgresql://postgres@127.0.0.1:5432/postgres

Processes, each of its own: the bare app (scripts/http_load.py --hello), then PostgreSQL, the service and the
platform simulator as scripts/harness/send_rig.py starts them, and the load clients (scripts/harness/load_client.py's
LoadClients, --client-processes of them, --clients keep-alive connections in all, each sending its next
request as soon as the answer is in). Phases, --seconds each:
1. the bare app: GET / (the denominator of every ratio), and a POST of a signed one-message envelope (shown);
   then one Quart-Trio route answering the same, GET (shown: the framework's own cost);
2. POST /api/send-message, the template `order_update`, to --chats existing chats (made by one pass of sends
   first), then to a new chat per request; after each, until the simulator has posted every status it owes;
3. GET /api/reporting/v1/whoami with the full-access key;
4. POST /webhooks/whatsapp, one customer message an envelope (--customers in turn, 1,024, each chat made by one
   pass first), then envelopes of 50 messages (of 50 customers), in messages/s.
Each phase prints requests/s, the ratio, errors, p50/p99/max latency, the service's CPU seconds per 1,000
requests (and PostgreSQL's when embedded, and the simulator's), and its client processes' CPU: a client process
near a full core would mean the figure is the client's.
5. Per request, from --count sequential requests of each kind: PostgreSQL statements and round trips
   (pg_stat_statements: while the request was answered, and after it until the simulator had posted its
   statuses and 0.2 s more for batched writes), and messages handled per actor kind (/health/actors).

The targets (issue of 2026-11-24, against this stack's floor) are by CPU: sends >= 0.12x, a new chat's CPU at most
1/0.8 of an existing chat's, whoami >= 0.5x, one-message webhooks >= 0.2x, envelopes of 50 >= 0.4x a message.
Exit status 0 when no request failed (targets missed are printed, not failures), 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import trio
from harness.load_client import Connection, Get, LoadClients, Outcome, Plan
from harness.meters import effective_cores, process_cpu_seconds, tree_cpu_seconds
from harness.options import add_database_url, script_parser
from harness.processes import Child
from harness.profiles import read_profile
from harness.run import run_on_postgres
from harness.send_rig import (
    EXISTING_PHONE_BASE,
    NEW_PHONE_BASE,
    CustomerMessages,
    Rig,
    TemplateSends,
    bearer,
    round_trips,
    running_rig,
)

SCRIPTS = Path(__file__).resolve().parent
# By CPU: the bare app's CPU a request over the service's (a message's, for envelopes), the figure of record.
TARGETS = {"sends": 0.12, "whoami": 0.5, "webhooks": 0.2, "envelopes": 0.4}
TARGET_P99_MS = 250.0
TARGET_NEW_VS_EXISTING = 0.8
ENVELOPE = 50
CUSTOMERS = 1024


@dataclass
class Figure:
    name: str
    outcome: Outcome
    per_request: int = 1          # messages a request carries
    service_cpu: float = 0.0
    postgres_cpu: float | None = None
    simulator_cpu: float | None = None

    @property
    def rate(self) -> float:
        return self.outcome.per_second * self.per_request


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


class Bench:
    def __init__(self, args: argparse.Namespace, clients: LoadClients, rig: Rig, bare: Bare) -> None:
        self.args, self.clients, self.rig, self.bare = args, clients, rig, bare
        self.figures: dict[str, Figure] = {}

    async def phase(self, key: str, title: str, plan: Plan, per_request: int = 1, target: str | None = None) -> None:
        rig, args = self.rig, self.args
        before = (process_cpu_seconds(rig.service.process.pid), rig.simulator.cpu_seconds(),
                  tree_cpu_seconds(rig.postgres_pid) if rig.postgres_pid else None)
        async with trio.open_nursery() as nursery:
            if args.profile:
                nursery.start_soon(record_profile, rig.service.process.pid, args.profile / f"{key}.txt", args.seconds)
            outcome = await self.clients.run(rig.url, plan, args.seconds, args.clients)
        after = (process_cpu_seconds(rig.service.process.pid), rig.simulator.cpu_seconds(),
                 tree_cpu_seconds(rig.postgres_pid) if rig.postgres_pid else None)
        per_thousand = 1000 / max(outcome.requests * per_request, 1)
        figure = Figure(title, outcome, per_request, (after[0] - before[0]) * per_thousand,
                        None if before[2] is None else (after[2] - before[2]) * per_thousand,
                        None if before[1] is None or after[1] is None else (after[1] - before[1]) * per_thousand)
        self.figures[key] = figure
        unit = "messages/s" if per_request > 1 or key == "webhooks" else "requests/s"
        ratio = figure.rate / self.bare.rate
        by_cpu = self.bare.cpu_ms / max(figure.service_cpu, 1e-9)
        print(f"{title}, {args.clients} clients, {outcome.seconds:.1f} s: {figure.rate:,.1f} {unit} = {ratio:.3f}x bare"
              f"; {outcome.requests:,} requests, errors {outcome.errors:,}; {outcome.latency_text()}", flush=True)
        goal = f" (target >= {TARGETS[target]:g}x: {verdict(by_cpu >= TARGETS[target])})" if target else ""
        print(f"  by CPU: {by_cpu:.3f}x bare{goal} (service {figure.service_cpu:.2f} ms a "
              f"{'message' if per_request > 1 else 'request'}, bare app {self.bare.cpu_ms:.2f} ms a request)")
        if outcome.errors:
            print(f"  errors: {outcome.problems()}")
        others = "".join(f"; {name} {value:.2f} s" for name, value in (("PostgreSQL", figure.postgres_cpu),
                                                                       ("simulator", figure.simulator_cpu))
                         if value is not None)
        print(f"  CPU per 1,000 {'messages' if per_request > 1 else 'requests'}: service {figure.service_cpu:.2f} s "
              f"({(after[0] - before[0]) / max(outcome.seconds, 1e-9):.0%} of a core){others}; {outcome.client_text()}",
              flush=True)
        if not await rig.wait_statuses_posted():
            print("  the simulator still owed statuses 60 s after the phase")
        if args.profile and (args.profile / f"{key}.txt").exists():  # absent when py-spy is not installed
            print(f"  profile ({args.profile / f'{key}.txt'}):")
            print(read_profile(args.profile / f"{key}.txt").report(15, indent="    "), flush=True)

    async def one_pass(self, plan: Plan, requests: int) -> None:
        """Each of `requests` once (chats made before they are measured), from the phase's clients."""
        outcome = await self.clients.run(self.rig.url, plan, 600.0, self.args.clients, limit=requests)
        if outcome.errors:
            print(f"  making the chats: {outcome.problems()}")

    async def count(self, title: str, plan: Plan, requests: int) -> None:
        """Statements and actor messages per request, one request at a time."""
        rig = self.rig
        during, after, actors_during, actors_after, statuses = Counter(), Counter(), Counter(), Counter(), Counter()
        stream = await trio.open_tcp_stream(urlsplit(rig.url).hostname, urlsplit(rig.url).port)
        async with stream:
            connection = Connection(stream)
            for n in range(requests):
                s0, a0 = await rig.statements.snapshot(), await rig.actor_messages()
                statuses[await connection.get(plan.request(n))] += 1
                s1, a1 = await rig.statements.snapshot(), await rig.actor_messages()
                await rig.wait_statuses_posted()
                await trio.sleep(0.2)
                s2, a2 = await rig.statements.snapshot(), await rig.actor_messages()
                during.update(s1 - s0)
                after.update(s2 - s1)
                actors_during.update(a1 - a0)
                actors_after.update(a2 - a1)
        for counts in (during, after):
            for query in [query for query in counts if "pg_stat_statements" in query]:
                del counts[query]

        def per(counter: Counter) -> str:
            return ", ".join(f"{kind} {value / requests:.2f}" for kind, value in counter.most_common()) or "none"

        print(f"{title} (x{requests}, answers {dict(statuses)}): {sum(during.values()) / requests:.1f} statements in "
              f"{round_trips(during) / requests:.1f} round trips while answered, then "
              f"{sum(after.values()) / requests:.1f} in {round_trips(after) / requests:.1f} (statuses, batched writes)")
        print(f"  actor messages while answered: {per(actors_during)}; after: {per(actors_after)}")
        for label, counts in (("while answered", during), ("after", after)):
            print(f"  statements {label}, per request:")
            for query, calls in counts.most_common(self.args.statements):
                print(f"    {calls / requests:5.2f}  {' '.join(query.split())[:150]}")
        print(flush=True)


async def record_profile(pid: int, output: Path, seconds: float) -> None:
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if spy is None:
        print("  py-spy not found (pip install py-spy): no profile")
        return
    await trio.run_process([spy, "record", "--pid", str(pid), "--rate", "100", "--format", "raw",
                            "--output", str(output), "--duration", str(max(1, round(seconds)))],
                           capture_stdout=True, capture_stderr=True, check=False)


@dataclass(frozen=True)
class Bare:
    rate: float          # GET /, requests/s
    cpu_ms: float        # the bare app's CPU milliseconds a request


async def bare_quart(args: argparse.Namespace, clients: LoadClients, work_dir: Path, bare: Bare) -> None:
    """The same answer from one Quart-Trio route: how much of the service's overhead is the framework's."""
    hello = Child("bare Quart-Trio app", [sys.executable, str(SCRIPTS / "http_load.py"), "--hello", "quart"],
                  dict(os.environ), work_dir / "quart.log")
    async with hello.running(60.0):
        url = hello.ready["url"]
        await clients.run(url, Get("/", urlsplit(url).netloc), 1.0, args.clients)
        cpu = process_cpu_seconds(hello.process.pid)
        outcome = await clients.run(url, Get("/", urlsplit(url).netloc), args.seconds, args.clients)
        cpu_ms = (process_cpu_seconds(hello.process.pid) - cpu) / max(outcome.requests, 1) * 1e3
    print(f"bare Quart-Trio app (one route; reference, not a denominator), GET /, {args.clients} clients: "
          f"{outcome.per_second:,.0f} requests/s = {outcome.per_second / bare.rate:.3f}x bare, errors "
          f"{outcome.errors}; {outcome.latency_text()}; {cpu_ms:.2f} ms CPU a request = {bare.cpu_ms / cpu_ms:.3f}x "
          f"bare by CPU", flush=True)


async def bare_app(args: argparse.Namespace, clients: LoadClients, work_dir: Path) -> Bare:
    hello = Child("bare app", [sys.executable, str(SCRIPTS / "http_load.py"), "--hello"], dict(os.environ),
                  work_dir / "bare.log")
    async with hello.running(60.0):
        url = hello.ready["url"]
        host = urlsplit(url).netloc
        await clients.run(url, Get("/", host), 1.0, args.clients)
        figures = {}
        for name, plan in (("GET /", Get("/", host)),
                           ("POST / (a signed one-message envelope)", CustomerMessages(host, "s", "1", "bare"))):
            cpu = process_cpu_seconds(hello.process.pid)
            outcome = await clients.run(url, plan, args.seconds, args.clients)
            spent = process_cpu_seconds(hello.process.pid) - cpu
            server = spent / max(outcome.seconds, 1e-9)
            figures[name] = Bare(outcome.per_second, spent / max(outcome.requests, 1) * 1e3)
            print(f"bare Hypercorn-trio app, {name}, {args.clients} clients, {outcome.seconds:.1f} s: "
                  f"{outcome.per_second:,.0f} requests/s, errors {outcome.errors}; {outcome.latency_text()}; "
                  f"server {server:.0%} of a core ({figures[name].cpu_ms:.2f} ms a request), {outcome.client_text()}",
                  flush=True)
    return figures["GET /"]


async def run(args: argparse.Namespace, server_url: str, postgres_pid: int | None, work_dir: Path) -> int:
    with LoadClients(args.client_processes) as clients:
        bare = await bare_app(args, clients, work_dir)
        await bare_quart(args, clients, work_dir, bare)
        async with running_rig(server_url, postgres_pid, work_dir, f"inbox_bench_send_{os.getpid()}") as rig:
            print(f"service {rig.url} (pid {rig.service.process.pid}), simulator {rig.simulator.ready['url']} "
                  f"(pid {rig.simulator.process.pid})", flush=True)
            bench = Bench(args, clients, rig, bare)
            host, key = rig.host, rig.ws.key
            whoami = Get("/api/reporting/v1/whoami", host, bearer(key))
            await clients.run(rig.url, whoami, 1.0, args.clients)
            existing = TemplateSends(host, key, EXISTING_PHONE_BASE, args.chats)
            await bench.one_pass(existing, args.chats)
            if "sends" in args.phases:
                await bench.phase("sends", f"sends to {args.chats} existing chats", existing, target="sends")
            if "new_chats" in args.phases:
                await bench.phase("new_chats", "sends to a new chat each", TemplateSends(host, key, NEW_PHONE_BASE))
            if "whoami" in args.phases:
                await bench.phase("whoami", "whoami", whoami, target="whoami")
            single = CustomerMessages(host, rig.platform.app_secret, rig.ws.phone_number_id, "one",
                                      customers=args.customers)
            await bench.one_pass(CustomerMessages(host, rig.platform.app_secret, rig.ws.phone_number_id, "first",
                                                  customers=args.customers), args.customers)
            if "webhooks" in args.phases:
                await bench.phase("webhooks", "platform webhooks, one message each", single, target="webhooks")
            if "envelopes" in args.phases:
                await bench.phase("envelopes", f"platform webhooks, envelopes of {ENVELOPE}",
                                  CustomerMessages(host, rig.platform.app_secret, rig.ws.phone_number_id, "fifty",
                                                   per_post=ENVELOPE, customers=args.customers),
                                  per_request=ENVELOPE, target="envelopes")
            if args.count and rig.statements is None:
                print("statements not counted: the server does not preload pg_stat_statements")
            elif args.count:
                print("per request, one at a time:")
                await bench.count("send to an existing chat", existing, args.count)
                await bench.count("send to a new chat", TemplateSends(host, key, NEW_PHONE_BASE + 50_000_000),
                                  args.count)
                await bench.count("whoami", whoami, args.count)
                await bench.count("platform webhook, one message", CustomerMessages(
                    host, rig.platform.app_secret, rig.ws.phone_number_id, "counted", customers=args.customers),
                    args.count)
    summary(bench.figures, bare, args)
    return 1 if any(figure.outcome.errors for figure in bench.figures.values()) else 0


def summary(figures: dict[str, Figure], bare: Bare, args: argparse.Namespace) -> None:
    print(f"\nsummary: ratios to the bare app's {bare.rate:,.0f} requests/s (GET, {args.clients} clients, same run); "
          f"by CPU: its {bare.cpu_ms:.2f} ms a request over the service's CPU a request (or message)")
    print(f"  {'':38} {'per s':>9} {'ratio':>7} {'by CPU':>7} {'target':>11}        {'p50 ms':>7} {'p99 ms':>7}"
          f" {'errors':>6} {'CPU ms':>7}")
    existing = figures.get("sends")
    for key, figure in figures.items():
        ratio = figure.rate / bare.rate
        by_cpu = bare.cpu_ms / max(figure.service_cpu, 1e-9)
        if key == "new_chats":
            # Against sends to existing chats: a new chat costs its contact, its conversation and an activation.
            goal, met = "of existing", None
            if existing is not None:
                share = existing.service_cpu / max(figure.service_cpu, 1e-9)
                goal, met = f"{share:.2f} >= {TARGET_NEW_VS_EXISTING:g}", share >= TARGET_NEW_VS_EXISTING
        else:
            goal, met = f">= {TARGETS[key]:g}", by_cpu >= TARGETS[key]
        print(f"  {figure.name:38} {figure.rate:9,.1f} {ratio:7.3f} {by_cpu:7.3f} {goal:>11} "
              f"{'' if met is None else verdict(met):6} {figure.outcome.percentile_ms(0.5):7.1f} "
              f"{figure.outcome.percentile_ms(0.99):7.1f} {figure.outcome.errors:6,} {figure.service_cpu:7.2f}")
    sends = [figures[key] for key in ("sends", "new_chats") if key in figures]
    for figure in sends:
        p99 = figure.outcome.percentile_ms(0.99)
        print(f"  {figure.name}: p99 {p99:.1f} ms (target < {TARGET_P99_MS:g} ms: {verdict(p99 < TARGET_P99_MS)})")
    if len(sends) == 2 and sends[1].service_cpu:
        share = sends[0].service_cpu / sends[1].service_cpu
        print(f"  new chats / existing chats, by CPU: {share:.2f} (target >= {TARGET_NEW_VS_EXISTING:g}: "
              f"{verdict(share >= TARGET_NEW_VS_EXISTING)})")

PHASES = ("sends", "new_chats", "whoami", "webhooks", "envelopes")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = script_parser(__doc__)
    parser.add_argument("--seconds", type=float, default=30.0, help="each phase (30)")
    parser.add_argument("--phases", type=lambda text: set(text.split(",")), default=set(PHASES),
                        help=f"which of the service's phases to run, comma-separated ({','.join(PHASES)})")
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients, keep-alive connections (16)")
    parser.add_argument("--client-processes", type=int, default=1,
                        help="processes the clients are spread over (1: on 2 cores, more take CPU from the server)")
    parser.add_argument("--chats", type=int, default=256, help="existing chats the sends go to (256)")
    parser.add_argument("--customers", type=int, default=CUSTOMERS,
                        help=f"customers writing in, each one's chat made before the webhook phases ({CUSTOMERS:,}; "
                             f"at least {ENVELOPE}, an envelope's messages)")
    parser.add_argument("--count", type=int, default=20,
                        help="sequential requests of each kind for statements and actor messages (20; 0: none)")
    parser.add_argument("--statements", type=int, default=12, help="statements listed per kind (12)")
    parser.add_argument("--profile", type=Path, help="a directory: py-spy records the service in each phase")
    add_database_url(parser)
    args = parser.parse_args(argv)
    if args.seconds <= 0 or min(args.clients, args.client_processes, args.chats) < 1 or args.count < 0:
        parser.error("--seconds must be above 0, --clients, --client-processes and --chats at least 1")
    if args.customers < ENVELOPE:
        parser.error(f"--customers must be at least {ENVELOPE}: an envelope's messages come from different customers")
    if not args.phases <= set(PHASES):
        parser.error(f"--phases: unknown {', '.join(sorted(args.phases - set(PHASES)))} (known: {', '.join(PHASES)})")
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs doing the work of {effective_cores():.1f} at once; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    started = time.perf_counter()
    status = run_on_postgres("bench-send", args.database_url, run, args, count_statements=True)
    load = os.getloadavg()
    print(f"took {time.perf_counter() - started:.0f} s; load average after {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return status


if __name__ == "__main__":
    sys.exit(main())
