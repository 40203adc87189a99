"""A working hour in the agent workspace, in Chromium: agents work the inbox under emulated network latency while
simulated customers write; afterwards the records must show nothing sent twice, nothing lost, every draft left
unsent still in its box, and the focus never taken by a live update (issue 38's quality bar).

    .venv/bin/python scripts/working_hour.py                    # 3 agents, 50 customers, 5 minutes, 300 ms
    .venv/bin/python scripts/working_hour.py --agents 3 --customers 50 --minutes 5 --latency-ms 300
    .venv/bin/python scripts/working_hour.py --minutes 1 --customers 12 --gap-seconds 12   # what the suite runs
    .venv/bin/python scripts/working_hour.py --database-url postgresql://user@host/postgres

1. PostgreSQL: the embedded server (durability off) in a temporary directory, or the server of --database-url; a
   database of the run's own there (`inbox_bench_<pid>`), migrated, dropped at the end.
2. A Scale workspace with --agents members (the first an admin, the others agents), each with a password made
   for the run, and a full-access key (the labels and the records are read with it).
3. The service: `inbox-actors serve` on that database in a process of its own, with its built-in simulator
   playing the customers and the keyword FAQ bot (which hands a chat to the team when a customer asks for a
   person), the per-IP ceiling raised as for every script's service.
4. The hour (scripts/harness/working_hour.py): every customer asks for a person, then writes about once every
   --gap-seconds, and while an agent types in their chat; each agent, signed in in a browser context of their own
   with --latency-ms of latency emulated, claims, replies (one click, a double click, two clicks 300 ms apart,
   Ctrl+Enter, a click and Ctrl+Enter), notes, labels, snoozes, resolves, transfers, leaves drafts unsent and moves
   with the keyboard, for --minutes. Then each chat left with a draft is opened again, and reloaded.
5. The verdict, from the simulator's record of what each customer received and the service's threads: replies
   sent once, twice (0) or never (0), customer messages lost (0), notes, drafts still there (all) or sent (0),
   focus lost while an agent typed or read (0), the page's script errors and Content-Security-Policy reports (0).

Prints the figures, the verdict and one JSON line with them. Exit status 0 when the verdict holds, 1 when it does
not (or the service could not start), 2 on bad arguments.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import trio_asyncio
from harness.options import add_database_url, script_parser
from harness.postgres import bench_database
from harness.processes import CannotRun, service_child
from harness.run import run_on_postgres
from harness.working_hour import Plan, Stage, find_chromium, seat_team, work_the_hour


def parse_args(argv: list[str] | None):
    parser = script_parser(__doc__)
    parser.add_argument("--agents", type=int, default=3, help="members working, each in a browser of their own (3)")
    parser.add_argument("--customers", type=int, default=50, help="simulated customers (50)")
    parser.add_argument("--minutes", type=float, default=5.0, help="how long the agents work (5)")
    parser.add_argument("--latency-ms", type=int, default=300, help="network latency emulated in each browser (300)")
    parser.add_argument("--gap-seconds", type=float, default=60.0,
                        help="each customer writes about this often, besides while an agent types to them (60)")
    parser.add_argument("--seed", type=int, help="the run's random choices (default: a new seed, printed)")
    parser.add_argument("--chromium", help="the Chromium to drive (default: as the browser tests find it)")
    add_database_url(parser)
    args = parser.parse_args(argv)
    if not 1 <= args.agents <= 20 or not 2 <= args.customers <= 5_000:
        parser.error("--agents must be 1 to 20 and --customers 2 to 5,000")
    if args.minutes <= 0 or args.latency_ms < 0 or args.gap_seconds <= 0:
        parser.error("--minutes and --gap-seconds must be positive, --latency-ms at least 0")
    args.chromium = args.chromium or find_chromium()
    if not args.chromium:
        parser.error("no Chromium found: install Debian's chromium (scripts/browser does) or give --chromium")
    if args.seed is None:
        args.seed = int.from_bytes(os.urandom(3), "big")
    return args


async def run(args, server_url: str, postgres_pid: int | None, work_dir: Path) -> int:
    plan = Plan(agents=args.agents, customers=args.customers, seconds=args.minutes * 60, latency_ms=args.latency_ms,
                gap_seconds=args.gap_seconds, seed=args.seed)
    print(f"seed {plan.seed}; Chromium {args.chromium}", flush=True)
    async with trio_asyncio.open_loop():
        async with bench_database(server_url, f"inbox_bench_{os.getpid()}") as (url, db):
            seats = await seat_team(db, plan.agents)
            service = service_child(url, work_dir, extra_env={"INBOX_MODEL_URL": "none"})
            async with service.running(120.0):
                stage = Stage(service.ready["url"], service.ready["platform"], seats)
                print(f"service: {stage.url}, simulator: {stage.simulator_url}", flush=True)
                verdict = await work_the_hour(stage, plan, args.chromium, lambda line: print(line, flush=True))
    print()
    print("\n".join(verdict.lines))
    print(json.dumps({"seed": plan.seed, **verdict.figures, "failures": verdict.failures,
                      "stumbled": verdict.remarks}))
    return 0 if verdict.ok else 1


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    try:
        return run_on_postgres("working-hour", args.database_url, run, args)
    except CannotRun as err:
        print(f"could not run: {err}", file=sys.stderr)
        return 1
    finally:
        print(f"run: {time.perf_counter() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
