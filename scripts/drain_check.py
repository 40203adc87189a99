"""Drain under HTTP API load: clients write contacts and read through the REST API, the service gets SIGTERM, and
the script prints requests refused, requests lost (must be 0) and the time to exit.

    .venv/bin/python scripts/drain_check.py                   # 16 clients, 8 s of load before SIGTERM, drain 2 s
    .venv/bin/python scripts/drain_check.py --small           # 4 clients, 2 s before SIGTERM, drain 0.5 s
    .venv/bin/python scripts/drain_check.py --clients 32 --drain 5 --grace 10 --database-url postgresql://...

1. PostgreSQL: the embedded server (durability off) in a temporary directory, or a database made on the server
   of --database-url and dropped at the end; one Scale workspace with a full-access key.
2. The service: `inbox-actors serve --port 0` in a process of its own, with INBOX_DRAIN_SECONDS (--drain),
   INBOX_SHUTDOWN_GRACE_SECONDS (--grace) and INBOX_LOG_LEVEL=INFO (the drain's own counts are read from its
   log).
3. Load: --clients clients, each on its kept-alive connections, one request after another: a write
   (`POST /api/contacts`, a phone of its own each time: the contact actor commits before it answers) and a
   read (`GET /api/reporting/v1/whoami`) in turn. After --sigterm-after seconds the service gets SIGTERM; the
   clients go on until the process has exited. A probe reads `GET /health/ready` every 50 ms throughout (up to
   8 at once, so a slow answer does not hold the next one back).
4. Every request ends in one of: answered 2xx; refused (answered 503 or another status, or the connection
   was refused or closed before an answer with nothing stored); lost. Lost is a write answered 2xx whose
   contact is not stored, a write that got no answer although its contact was stored (the service took it),
   or a request the service took and never answered (its own count, logged when HTTP has drained).

Exit status 0 when nothing was lost, readiness turned false before the service stopped answering, and the
service exited by itself; 1 otherwise; 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import trio
import trio_asyncio
from harness.options import add_database_url, fill_from_preset, script_parser
from harness.postgres import bench_database
from harness.processes import service_child
from harness.run import run_on_postgres
from harness.workspace import make_workspace

FULL = {"clients": 16, "sigterm_after": 8.0, "drain": 2.0}
SMALL = {"clients": 4, "sigterm_after": 2.0, "drain": 0.5}
PHONE_BASE = 447_700_000_000
DRAINED = re.compile(r"drained HTTP: (\d+) requests answered while draining, (\d+) taken and left unanswered"
                     r"(?:, (\d+) refused 503 once HTTP stopped)?")


@dataclass
class Tally:
    outcomes: Counter = field(default_factory=Counter)      # ("write"|"read", outcome) -> count
    acknowledged: set[str] = field(default_factory=set)     # phones whose write was answered 2xx
    unanswered_writes: set[str] = field(default_factory=set)
    sent: int = 0
    sent_after_sigterm: int = 0
    last_2xx_after_sigterm: float | None = None
    sigterm_at: float | None = None
    ready_false_at: float | None = None     # first 503 from /health/ready after SIGTERM
    ready_before_sigterm: Counter = field(default_factory=Counter)
    exited_at: float | None = None
    return_code: int | None = None


async def client_loop(number: int, url: str, key: str, tally: Tally, done: trio.Event) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    n = 0
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=httpx.Timeout(60.0, connect=5.0)) as http:
        while not done.is_set():
            n += 1
            write = n % 2 == 1
            phone = str(PHONE_BASE + number * 1_000_000 + n)
            tally.sent += 1
            if tally.sigterm_at is not None:
                tally.sent_after_sigterm += 1
            try:
                if write:
                    answer = await http.post("/api/contacts", json={"phone": phone, "name": f"Drain {phone}"})
                else:
                    answer = await http.get("/api/reporting/v1/whoami")
            except httpx.ConnectError:
                outcome = "connection refused"
                await trio.sleep(0.02)
            except httpx.HTTPError as err:
                outcome = f"no answer ({type(err).__name__})"
                if write:
                    tally.unanswered_writes.add(phone)
            else:
                outcome = str(answer.status_code)
                if 200 <= answer.status_code < 300:
                    if write:
                        tally.acknowledged.add(phone)
                    if tally.sigterm_at is not None:
                        tally.last_2xx_after_sigterm = time.perf_counter()
            tally.outcomes["write" if write else "read", outcome] += 1


async def probe_readiness(url: str, tally: Tally, done: trio.Event) -> None:
    # A probe starts every 50 ms whether or not the one before has answered: on a loaded machine one probe can take
    # longer than a short drain, and probes taken one after another would then miss the window readiness is false.
    in_flight = trio.CapacityLimiter(8)

    async def probe(http: httpx.AsyncClient) -> None:
        async with in_flight:
            try:
                status = (await http.get("/health/ready")).status_code
            except httpx.HTTPError:
                status = None
        if tally.sigterm_at is None:
            tally.ready_before_sigterm[status] += 1
        elif status == 503 and tally.ready_false_at is None:
            tally.ready_false_at = time.perf_counter()

    limits = httpx.Limits(max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=url, timeout=2.0, headers={"Connection": "close"}, limits=limits) as http:
        async with trio.open_nursery() as probes:
            while not done.is_set():
                if in_flight.borrowed_tokens < in_flight.total_tokens:
                    probes.start_soon(probe, http)
                await trio.sleep(0.05)


async def check(args: argparse.Namespace, server_url: str, _postgres_pid: int | None, work_dir: Path) -> int:
    tally, stored, log = await run(args, server_url, work_dir)
    return report(tally, stored, log)


async def run(args: argparse.Namespace, server_url: str, work_dir: Path) -> tuple[Tally, set[str], str]:
    tally = Tally()
    async with trio_asyncio.open_loop():
        async with bench_database(server_url, f"inbox_bench_drain_{os.getpid()}") as (url, db):
            ws = await make_workspace(db, "Drain check")
            service = service_child(url, work_dir)
            service.env.pop("INBOX_HEALTH_TOKEN", None)
            service.env.update({"INBOX_SHUTDOWN_GRACE_SECONDS": str(args.grace), "INBOX_DRAIN_SECONDS": str(args.drain),
                                "INBOX_LOG_LEVEL": "INFO"})
            async with service.running(120.0):
                base = service.ready["url"]
                print(f"service: {base} (pid {service.process.pid}); drain {args.drain:g} s, grace {args.grace:g} s; "
                      f"{args.clients} clients", flush=True)
                done = trio.Event()
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(probe_readiness, base, tally, done)
                    for number in range(args.clients):
                        nursery.start_soon(client_loop, number, base, ws.key, tally, done)
                    await trio.sleep(args.sigterm_after)
                    before = tally.sent
                    service.process.send_signal(signal.SIGTERM)
                    tally.sigterm_at = time.perf_counter()
                    print(f"SIGTERM after {before:,} requests", flush=True)
                    with trio.move_on_after(2 * args.grace + args.drain + 60):
                        await service.process.wait()
                    if service.process.returncode is None:
                        print("the service had not exited: killed", flush=True)
                        service.process.kill()
                        await service.process.wait()
                    else:
                        tally.exited_at = time.perf_counter()
                    tally.return_code = service.process.returncode
                    await trio.sleep(0.3)   # the clients meet the stopped service
                    done.set()
            log = service.log_path.read_text(errors="replace")
            rows = await db.fetch("SELECT phone FROM contacts WHERE workspace_id = $1", ws.workspace_id)
    return tally, {row["phone"] for row in rows}, log


def report(tally: Tally, stored: set[str], log: str) -> int:
    drained = DRAINED.search(log)
    taken_unanswered = int(drained[2]) if drained else None
    by_outcome = Counter()
    for (_, outcome), count in tally.outcomes.items():
        by_outcome[outcome] += count
    answered_2xx = sum(count for outcome, count in by_outcome.items() if outcome.startswith("2"))
    unanswered = sum(count for outcome, count in by_outcome.items() if outcome.startswith("no answer"))
    acknowledged_not_stored = len(tally.acknowledged - stored)
    unanswered_but_stored = len(tally.unanswered_writes & stored)
    lost = acknowledged_not_stored + unanswered_but_stored + (taken_unanswered or 0)
    refused = tally.sent - answered_2xx - lost
    sigterm = tally.sigterm_at or 0.0
    exit_text = f"{tally.exited_at - sigterm:.2f} s" if tally.exited_at else "did not exit (killed)"
    ready_text = f"{tally.ready_false_at - sigterm:.2f} s" if tally.ready_false_at else "never seen"
    last_2xx = f"{tally.last_2xx_after_sigterm - sigterm:.2f} s" if tally.last_2xx_after_sigterm else "none"
    print(f"time to exit: {exit_text} after SIGTERM (exit status {tally.return_code}); readiness false seen after "
          f"{ready_text}; last 2xx answer {last_2xx} after SIGTERM")
    print(f"readiness before SIGTERM: {dict(tally.ready_before_sigterm)}")
    print("outcomes: " + ", ".join(f"{kind} {outcome} x{count:,}"
                                   for (kind, outcome), count in sorted(tally.outcomes.items())))
    print(f"service's drain: {drained[0] if drained else 'no drain line in its log'}")
    for line in [line for line in log.splitlines() if "left unanswered:" in line][:5]:
        print(f"  {line.strip()}")
    print(f"requests: {tally.sent:,} sent ({tally.sent_after_sigterm:,} after SIGTERM); answered 2xx: "
          f"{answered_2xx:,}; writes acknowledged: {len(tally.acknowledged):,}, contacts stored: {len(stored):,}")
    print(f"requests refused: {refused:,} (of which closed unanswered with nothing stored: "
          f"{unanswered - unanswered_but_stored:,})")
    print(f"requests lost: {lost} (acknowledged not stored {acknowledged_not_stored}, unanswered but stored "
          f"{unanswered_but_stored}, taken by the service and left unanswered {taken_unanswered})")
    ok = (lost == 0 and tally.exited_at is not None and tally.ready_false_at is not None and drained is not None
          and tally.return_code == 0)
    return 0 if ok else 1


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = script_parser(__doc__)
    parser.add_argument("--small", action="store_true",
                        help=f"{SMALL['clients']} clients, SIGTERM after {SMALL['sigterm_after']:g} s, "
                             f"drain {SMALL['drain']:g} s")
    parser.add_argument("--clients", type=int, help=f"clients at once (default {FULL['clients']})")
    parser.add_argument("--sigterm-after", type=float, help=f"seconds of load before SIGTERM "
                                                            f"(default {FULL['sigterm_after']:g})")
    parser.add_argument("--drain", type=float, help=f"INBOX_DRAIN_SECONDS (default {FULL['drain']:g})")
    parser.add_argument("--grace", type=float, default=10.0, help="INBOX_SHUTDOWN_GRACE_SECONDS (10)")
    add_database_url(parser)
    args = parser.parse_args(argv)
    fill_from_preset(args, SMALL if args.small else FULL)
    if args.clients < 1 or not args.sigterm_after > 0 or not args.drain >= 0 or not args.grace > 0:
        parser.error("--clients must be at least 1, --sigterm-after and --grace above 0, --drain 0 or more")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_on_postgres("drain-check", args.database_url, check, args, noun="check")


if __name__ == "__main__":
    sys.exit(main())
