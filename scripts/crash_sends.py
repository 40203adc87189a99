"""Sends across crashes: concurrent API sends while the service is SIGKILLed at random points and restarted; at the
end the platform's record, the database and the clients' answers are compared. Prints the sends acknowledged
but lost (must be 0), the sends the platform got twice for one Idempotency-Key (must be 0) and the rows left in
doubt.

    .venv/bin/python scripts/crash_sends.py                     # 1,000 sends, 3 kills
    .venv/bin/python scripts/crash_sends.py --sends 100 --kills 1 --database-url postgresql://...

1. PostgreSQL as every script has it (harness.postgres: embedded with durability off, or a database of its own
   on --database-url, dropped at the end); a Scale workspace, an admin and a full-access key.
2. The platform: `inbox-actors simulator` in a process of its own, for the whole run (it outlives every
   incarnation of the service, so its record of what it accepted is the truth), knowing the template
   `crash_note` (1 parameter), accepting 1,000 sends a second, keeping every send, and retrying a status webhook
   the service did not take for about a minute (0.5, 1, 2, 4, 8, 15, 30 s), as Meta retries.
3. The service: `inbox-actors serve` on a fixed port (the simulator posts there) in a process of its own, with
   the simulator's URL and secrets. --kills times, --kill-after (random, 1 to 4 s by default) after each start
   while sends are under way, it gets SIGKILL and is started again at once.
4. The clients: --sends template sends, all started at once, taking turns on --connections connections, to
   --chats numbers in turn; every other one carries an Idempotency-Key. Each send's parameter names it, so the
   platform's record tells which logical send each delivery was. A client retries after any error or dropped connection
   (and after a 409, waiting its Retry-After) until it gets a verdict: 200, or the spec's 500 with an errorCode.
   A send whose key stays in doubt (409) for --doubt-timeout s after the service last started is left so (its
   message was committed, then the service died before the platform got it or before its status came).
5. Once the clients are done, the script waits (at most --settle-timeout s) until every send the platform
   accepted is known to the database (statuses settle the sends whose answers were lost), then compares:
   - acknowledged sends lost: a 200's messageId that the platform's record or the database (as a settled
     message) lacks;
   - sends delivered twice to the platform for one key: keyed sends whose parameter the platform got twice;
   - rows left in doubt: messages still pending (the platform never got them, or their status is still due).
   Unkeyed sends the platform got more than once are counted too: a client that retries without a key can send
   twice, which is why keys exist.

Exit status 0 when nothing acknowledged was lost, no key was sent twice, no keyed client got two different
messageIds and every send the platform accepted is in the database; 1 otherwise; 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import sys
from pathlib import Path

import httpx
import trio
import trio_asyncio
from harness.options import add_database_url, script_parser
from harness.postgres import bench_database
from harness.processes import Child, RestartableService, service_env
from harness.retried_sends import (
    PHONE_BASE,
    REQUEST_TIMEOUT,
    STARTUP_SECONDS,
    TEMPLATE,
    Send,
    client,
    outbound_rows,
    report,
    wait_settled,
)
from harness.run import run_check
from harness.simulator import STATUS_RETRIES, SeparateSimulator, platform_record
from harness.workspace import Workspace, make_workspace


async def killer(service: RestartableService, kills: int, low: float, high: float, done: trio.Event,
                 kill_times: list[float], sends: list[Send]) -> None:
    for _ in range(kills):
        with trio.move_on_after(random.uniform(low, high)):
            await done.wait()
        if done.is_set():
            return
        kill_times.append(trio.current_time() - service.started_at)
        acknowledged = sum(1 for send in sends if send.final == "acknowledged")
        await service.kill()
        await service.start()
        print(f"SIGKILL {len(kill_times)} after {kill_times[-1]:.2f} s up, {acknowledged:,} of {len(sends):,} sends "
              f"acknowledged; started again (pid {service.child.process.pid})", flush=True)


async def run(args: argparse.Namespace, server_url: str, _postgres_pid: int | None, work_dir: Path) -> int:
    platform = SeparateSimulator.on_free_ports()
    simulator = Child("simulator", [
        *platform.command(from_environment=False), "--template", f"{TEMPLATE}:en:1", "--throughput", "1000",
        "--history", str(args.sends * 4), "--webhook-retry-delays", STATUS_RETRIES], dict(os.environ),
        work_dir / "simulator.log")
    async with trio_asyncio.open_loop():
        async with bench_database(server_url, f"inbox_bench_crash_sends_{os.getpid()}") as (url, db):
            ws = await make_workspace(db, "Crash sends")
            env = {**service_env(work_dir / "service", platform.service_env()), "DATABASE_URL": url,
                   "WHATSAPP_SENDS_PER_SECOND": "1000", "INBOX_IP_LIMIT_PER_MINUTE": "1000000"}
            service = RestartableService(platform.service_port, env, work_dir, STARTUP_SECONDS)
            async with simulator.running(STARTUP_SECONDS):
                try:
                    await service.start()
                    print(f"service: {service.child.ready['url']} (pid {service.child.process.pid}); platform "
                          f"{platform.url} in a process of its own", flush=True)
                    sends, kill_times, seconds = await drive(args, service, ws)
                    settled = await wait_settled(db, ws, platform.url, args.settle_timeout)
                    record = await platform_record(platform.url, ws.phone_number_id)
                    rows = await outbound_rows(db, ws.workspace_id)
                finally:
                    await service.stop()
    return report(args.chats, sends, kill_times, seconds, settled, record, rows)


async def drive(args: argparse.Namespace, service: RestartableService,
                ws: Workspace) -> tuple[list[Send], list[float], float]:
    run_tag = secrets.token_hex(3)
    sends = [Send(n, f"crash {run_tag} #{n}", f"crash-{run_tag}-{n}" if n % 2 == 0 else None)
             for n in range(args.sends)]
    # Fresh numbers on each run, ending in 1 (the simulator turns read receipts off for those ending in 0).
    first = PHONE_BASE + random.randrange(1000) * 10**6
    phones = [str(first + i * 10 + 1) for i in range(args.chats)]
    done, kill_times = trio.Event(), []
    limits = httpx.Limits(max_connections=args.connections, max_keepalive_connections=args.connections)
    timeout = httpx.Timeout(REQUEST_TIMEOUT, pool=None)
    started = trio.current_time()
    deadline = started + args.deadline
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{service.port}", limits=limits,
                                 timeout=timeout) as http, trio.open_nursery() as nursery:
        nursery.start_soon(killer, service, args.kills, args.kill_after[0], args.kill_after[1], done, kill_times,
                           sends)
        connections = trio.CapacityLimiter(args.connections)
        async with trio.open_nursery() as clients:
            for send in sends:
                clients.start_soon(client, http, connections, service, send, phones[send.n % len(phones)], ws.key,
                                   args.doubt_timeout, deadline)
        done.set()
    return sends, kill_times, trio.current_time() - started


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = script_parser(__doc__)
    parser.add_argument("--sends", type=int, default=1000, help="logical sends, all started at once (1,000)")
    parser.add_argument("--chats", type=int, default=250, help="numbers sent to, in turn (250; at most 100,000)")
    parser.add_argument("--kills", type=int, default=3, help="SIGKILLs while sends are under way (3)")
    parser.add_argument("--kill-after", default="1,4", metavar="LOW,HIGH",
                        help="seconds after each start, drawn uniformly, before the next SIGKILL (1,4)")
    parser.add_argument("--connections", type=int, default=64, help="client connections at once (64)")
    parser.add_argument("--doubt-timeout", type=float, default=20.0,
                        help="a client stops retrying a key in doubt this long after the last start (20 s)")
    parser.add_argument("--deadline", type=float, default=600.0, help="clients give up after this (600 s)")
    parser.add_argument("--settle-timeout", type=float, default=90.0,
                        help="wait at most this long for every accepted send to be in the database (90 s)")
    parser.add_argument("--seed", type=int, help="random seed for the kill times and the numbers")
    add_database_url(parser)
    args = parser.parse_args(argv)
    try:
        low, high = (float(part) for part in args.kill_after.split(","))
    except ValueError:
        parser.error("--kill-after takes two numbers of seconds, e.g. 1,4")
    if args.sends < 1 or not 1 <= args.chats <= 100_000 or args.kills < 0 or args.connections < 1 \
            or not 0 < low <= high or args.doubt_timeout <= 0 or args.deadline <= 0 or args.settle_timeout <= 0:
        parser.error("--sends, --chats and --connections must be at least 1, --kills at least 0, --kill-after "
                     "0 < LOW <= HIGH, and the timeouts positive")
    args.kill_after = (low, high)
    return args


def main(argv: list[str] | None = None) -> int:
    return run_check("crash-sends", parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
