"""A broadcast to 100,000 recipients, measured: the sustained send rate, the CPU each process spends per 1,000
sends, the service's memory through the run, the time to completion and the counts at the end, beside the bare
rate of a client posting the same sends to the simulator directly in the same run.

    .venv/bin/python scripts/bench_broadcast.py                          # 100,000 recipients, 1,000 sends/s tier
    .venv/bin/python scripts/bench_broadcast.py --recipients 20000 --rate 80     # the default tier: the pacer's pace
    .venv/bin/python scripts/bench_broadcast.py --database-url postgresql://postgres@127.0.0.1:5432/postgres

Processes, each of its own so that none spends another's CPU; all are stopped at the end (Ctrl-C included):
- PostgreSQL: the embedded server (durability off) in a temporary directory, or the server of --database-url (its
  role needs CREATEDB; its CPU is then not measured), as every script has it (harness.postgres): a database
  `inbox_bench_broadcast_<pid>` made there, migrated, dropped at the end, with a Scale workspace, an admin, a
  full-access key and the template `bench_broadcast` (en, 1 parameter, MARKETING; sends not metered).
- The platform: `inbox-actors simulator` (harness.simulator's SeparateSimulator) accepting --rate sends a
  second, posting its signed statuses (sent, delivered, read) to the service.
- The service: `inbox-actors serve` with WHATSAPP_SENDS_PER_SECOND = --rate (a broadcast takes at most four fifths
  of it: 800/s at the default 1,000, so the service and not the pacer is the limit; at 80, 64/s: the pacer is).

Phases:
1. Baseline: a simulator of its own (no webhook URL: it posts no statuses; no throughput limit that matters) and an
   httpx client in this process posting the same template sends on --concurrency connections (the broadcast's own
   concurrency, 16) for --baseline-seconds: the bare rate at which the platform takes sends from one client.
2. The broadcast: `POST /api/bulk-send` with --recipients fresh numbers, each recipient's parameter its own
   position. Every 0.5 s the script samples the simulator's sends accepted, the CPU seconds of the service, the
   simulator and PostgreSQL (/proc), and the service's RSS; every --actors-every s the live conversation actors
   (`/health/actors`, which costs the service a pass over its actors). Progress is printed every 10 s.
3. When the broadcast is completed, the script waits until the simulator has posted every status it owes, reads
   the broadcast's counts once (`GET /api/broadcasts/{id}`, timed) and prints:
   - the sustained rate: sends the platform accepted per second between 10% and 90% of them, and that rate as a
     ratio to the baseline and as a share of the broadcast's pace (what the number's pacer lets it send: four fifths
     of --rate in any 1.1 s);
   - service, simulator and PostgreSQL CPU seconds per 1,000 sends (from the bulk-send to completion, storing the
     audience included), with the baseline simulator's for comparison;
   - the service's RSS before the bulk-send, at every tenth of the sends, its maximum and at the end, with the live
     conversation actors: one per recipient stays in memory until it has been idle INBOX_ACTOR_IDLE_SECONDS
     (300 by default; --idle-seconds to change it for the run);
   - the time from the bulk-send to completed, and the counts at the end.

Exit status 0 when the broadcast completed with every recipient sent once (the platform accepted exactly
--recipients sends) and none failed; 1 otherwise; 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import trio
import trio_asyncio
from harness.meters import effective_cores, process_cpu_seconds, rss_bytes, tree_cpu_seconds
from harness.options import add_database_url, script_parser
from harness.postgres import bench_database
from harness.processes import Child, cli_command, free_ports, service_env
from harness.run import run_on_postgres
from harness.simulator import SeparateSimulator, wait_statuses_posted
from harness.workspace import Workspace, make_workspace

from inbox_actors.domain.send_pacing import WINDOW_SECONDS, SendSchedule
from inbox_actors.platform import templates
from inbox_actors.platform.cloud_api import encode_send_request
from inbox_actors.platform.payloads import SendRequest
from persistence.database import Database

SCRIPTS = Path(__file__).resolve().parent
TEMPLATE = ("bench_broadcast", "en", "Hello {{1}}, our sale starts today!")
PHONE_BASE = 447_400_000_000
STARTUP_SECONDS = 120.0
SAMPLE_SECONDS = 0.5
PROGRESS_SECONDS = 10.0
BROADCAST_CONCURRENCY = 16    # sends of one broadcast in flight at once (broadcasts/broadcast.py)
MIB = 1024 * 1024

# -- measuring ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    at: float                     # seconds since the bulk-send was posted
    accepted: int                 # the platform's sends accepted so far
    service_cpu: float | None
    simulator_cpu: float | None
    postgres_cpu: float | None
    rss: int | None               # the service's


@dataclass
class Meters:
    service: Child
    simulator: Child
    postgres_pid: int | None
    samples: list[Sample] = field(default_factory=list)
    live_chats: list[tuple[float, int]] = field(default_factory=list)     # (at, live conversation actors)

    async def sample(self, http: httpx.AsyncClient, started: float) -> Sample:
        stats = (await http.get("/simulator/stats")).json()
        sample = Sample(trio.current_time() - started, stats["sends_accepted"],
                        process_cpu_seconds(self.service.process.pid),
                        process_cpu_seconds(self.simulator.process.pid),
                        tree_cpu_seconds(self.postgres_pid) if self.postgres_pid else None,
                        rss_bytes(self.service.process.pid))
        self.samples.append(sample)
        return sample

    async def live_conversations(self, service_url: str, started: float) -> None:
        async with httpx.AsyncClient(base_url=service_url, timeout=60) as http:
            answer = await http.get("/health/actors", params={"busiest": 0})
        if answer.status_code == 200:
            kinds = answer.json()["kinds"]
            self.live_chats.append((trio.current_time() - started,
                                    kinds.get("conversation", {}).get("live", 0)))


def at_count(samples: list[Sample], count: float) -> float | None:
    """The time the platform's count passed `count`, interpolated between samples."""
    for before, after in zip(samples, samples[1:]):
        if before.accepted < count <= after.accepted:
            return before.at + (after.at - before.at) * (count - before.accepted) / (after.accepted - before.accepted)
    return None


def spent(first: Sample, last: Sample, name: str) -> float | None:
    a, b = getattr(first, name), getattr(last, name)
    return None if a is None or b is None else b - a


def mib(value: int | None) -> str:
    return "?" if value is None else f"{value / MIB:,.0f} MiB"


# -- the baseline -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Baseline:
    rate: float                  # sends/s
    simulator_cpu: float | None  # seconds per 1,000 sends
    client_cpu: float            # this process, seconds per 1,000 sends
    errors: int


async def baseline(args: argparse.Namespace, work_dir: Path) -> Baseline:
    # Its statuses go to the bare app (which answers 200 to anything): the simulator does the work it does in the run.
    receiver = Child("bare app", [sys.executable, str(SCRIPTS / "http_load.py"), "--hello", "--port", "0"],
                     dict(os.environ), work_dir / "bare.log")
    # Hex: these travel on a command line, where a token starting with '-' would be read as an option.
    token = secrets.token_hex(24)
    async with receiver.running(STARTUP_SECONDS):
        simulator = Child("baseline simulator", [
            *cli_command(), "simulator", "--host", "127.0.0.1", "--port", str(free_ports(1)[0]),
            "--webhook-url", f"{receiver.ready['url']}/webhooks/whatsapp", "--app-secret", secrets.token_hex(24),
            "--access-token", token, "--template", f"{TEMPLATE[0]}:{TEMPLATE[1]}:1", "--throughput", "100000",
            "--history", "1000"], dict(os.environ), work_dir / "baseline-simulator.log")
        async with simulator.running(STARTUP_SECONDS):
            result = await send_directly(args, simulator.ready["url"], simulator.process.pid, token)
    print(f"baseline: an httpx client on {args.concurrency} connections posting template sends to a simulator of its "
          f"own: {result.rate:,.0f} sends/s over {args.baseline_seconds:g} s, {result.errors} errors; CPU per 1,000 "
          f"sends: simulator {fmt(result.simulator_cpu)}, client {result.client_cpu:.2f} s", flush=True)
    if not result.rate:
        raise RuntimeError("the baseline simulator accepted no send; see its log")
    return result


async def send_directly(args: argparse.Namespace, url: str, pid: int, token: str) -> Baseline:
    """--concurrency clients, each posting its next send as soon as the last is answered."""
    done = Counter()
    limits = httpx.Limits(max_connections=args.concurrency, max_keepalive_connections=args.concurrency)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=30, headers=headers) as http:
        async def client(n: int, deadline: float) -> None:
            while trio.current_time() < deadline:
                # The body the service's platform client sends, to a new number each time as a broadcast does.
                body = encode_send_request(SendRequest(
                    to=str(PHONE_BASE + 9 * 10**8 + n), type="template", template_name=TEMPLATE[0],
                    template_language=TEMPLATE[1], template_parameters=(f"Customer {n}",), callback_data=str(n)))
                answer = await http.post("/100000000000001/messages", content=body)
                done["sent" if answer.status_code == 200 else "errors"] += 1
                n += args.concurrency

        async def clients(seconds: float, first: int) -> None:
            async with trio.open_nursery() as nursery:
                for offset in range(args.concurrency):
                    nursery.start_soon(client, first + offset, trio.current_time() + seconds)

        await clients(1.0, 0)                  # warm: connections, the simulator's caches
        done.clear()
        cpu, own, started = process_cpu_seconds(pid), time.process_time(), trio.current_time()
        await clients(args.baseline_seconds, 10**6)
        seconds = trio.current_time() - started
        simulator_cpu = spent_cpu(cpu, process_cpu_seconds(pid))
        client_cpu = time.process_time() - own
    per_thousand = 1000 / max(done["sent"], 1)
    return Baseline(done["sent"] / seconds, None if simulator_cpu is None else simulator_cpu * per_thousand,
                    client_cpu * per_thousand, done["errors"])


def spent_cpu(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else after - before


def fmt(seconds: float | None) -> str:
    return "?" if seconds is None else f"{seconds:.2f} s"


# -- the broadcast ------------------------------------------------------------------------------------------


@dataclass
class Rig:
    ws: Workspace
    db: Database
    service: Child
    simulator: Child
    postgres_pid: int | None

    @property
    def url(self) -> str:
        return self.service.ready["url"]


@contextlib.asynccontextmanager
async def running_rig(args: argparse.Namespace, server_url: str, postgres_pid: int | None,
                      work_dir: Path) -> AsyncIterator[Rig]:
    async with bench_database(server_url, f"inbox_bench_broadcast_{os.getpid()}") as (url, db):
        ws = await make_workspace(db, "Broadcast bench")
        await templates.add_template(db, workspace_id=ws.workspace_id, name=TEMPLATE[0], language=TEMPLATE[1],
                                     body=TEMPLATE[2], category_name="MARKETING")
        platform = SeparateSimulator.on_free_ports()
        env = {**service_env(work_dir / "service", platform.service_env()), "DATABASE_URL": url,
               "INBOX_IP_LIMIT_PER_MINUTE": "1000000", "WHATSAPP_SENDS_PER_SECOND": str(args.rate)}
        if args.idle_seconds is not None:
            env["INBOX_ACTOR_IDLE_SECONDS"] = str(args.idle_seconds)
        env.pop("INBOX_HEALTH_TOKEN", None)         # /health/actors from loopback, no token
        env.pop("INBOX_TEMPLATE_CREDITS", None)     # sends not metered: credits never pause the broadcast
        service = Child("service", [*cli_command(), "serve", "--port", str(platform.service_port)], env,
                        work_dir / "service.log")
        simulator = Child("simulator", [*platform.command(), "--throughput", str(args.rate), "--template",
                                        f"{TEMPLATE[0]}:{TEMPLATE[1]}:1"], dict(env), work_dir / "simulator.log")
        # The simulator starts after the service and stops before it: it holds keep-alive connections to it.
        async with service.running(STARTUP_SECONDS), simulator.running(STARTUP_SECONDS):
            yield Rig(ws, db, service, simulator, postgres_pid)


async def broadcast_status(db: Database, broadcast_id: int) -> str:
    return await db.fetchval("SELECT status FROM broadcasts WHERE id = $1", broadcast_id)


@dataclass
class Outcome:
    broadcast_id: int = 0
    created_in: float = 0.0       # the bulk-send's answer time
    completed_after: float | None = None
    status: str = ""
    counts: dict = field(default_factory=dict)
    read_ms: float = 0.0          # GET /api/broadcasts/{id} at the end
    accepted: int = 0             # the platform's, at the end
    refused: dict = field(default_factory=dict)


async def run_broadcast(args: argparse.Namespace, rig: Rig, meters: Meters) -> Outcome:
    outcome = Outcome()
    phones = [str(PHONE_BASE + i + i // 9 + 1) for i in range(args.recipients)]   # none ending in 0: read receipts
    body = {"name": f"Bench {args.recipients:,}", "template": {"name": TEMPLATE[0], "language": TEMPLATE[1],
                                                               "parameters": ["friend"]},
            "recipients": [{"phone": phone, "parameters": [f"Customer {n}"]} for n, phone in enumerate(phones, 1)]}
    headers = {"Authorization": f"Bearer {rig.ws.key}"}
    async with httpx.AsyncClient(base_url=rig.url, headers=headers, timeout=300) as http, \
            httpx.AsyncClient(base_url=rig.simulator.ready["url"], timeout=60) as simulator:
        started = trio.current_time()
        before = await meters.sample(simulator, started)
        answer = await http.post("/api/bulk-send", json=body)
        if answer.status_code != 202:
            raise RuntimeError(f"bulk-send answered {answer.status_code}: {answer.text[:500]}")
        outcome.created_in = trio.current_time() - started
        outcome.broadcast_id = answer.json()["id"]
        print(f"bulk-send of {args.recipients:,} recipients answered 202 in {outcome.created_in:.2f} s (broadcast "
              f"{outcome.broadcast_id}); service RSS {mib(before.rss)}", flush=True)
        async with trio.open_nursery() as nursery:
            if args.actors_every > 0:
                nursery.start_soon(watch_actors, meters, rig.url, started, args.actors_every)
            outcome.completed_after = await sample_until_done(args, rig, meters, simulator, outcome, started)
            nursery.cancel_scope.cancel()
        await meters.sample(simulator, started)
        if not await wait_statuses_posted(simulator, patience=120.0, every=0.5):
            print("the simulator still owed statuses 120 s after the broadcast completed")
        read_started = time.perf_counter()
        view = (await http.get(f"/api/broadcasts/{outcome.broadcast_id}")).json()
        outcome.read_ms = (time.perf_counter() - read_started) * 1e3
        outcome.status, outcome.counts = view["status"], view["counts"]
        stats = (await simulator.get("/simulator/stats")).json()
        outcome.accepted, outcome.refused = stats["sends_accepted"], stats["sends_refused"]
        if args.actors_every > 0:
            await meters.live_conversations(rig.url, started)
    return outcome


async def watch_actors(meters: Meters, service_url: str, started: float, every: float) -> None:
    while True:
        await meters.live_conversations(service_url, started)
        await trio.sleep(every)


async def sample_until_done(args: argparse.Namespace, rig: Rig, meters: Meters, simulator: httpx.AsyncClient,
                            outcome: Outcome, started: float) -> float | None:
    """Seconds from the bulk-send to the broadcast's completion; None past --deadline."""
    next_progress = PROGRESS_SECONDS
    with trio.move_on_after(args.deadline):
        while True:
            await trio.sleep(SAMPLE_SECONDS)
            sample = await meters.sample(simulator, started)
            outcome.status = await broadcast_status(rig.db, outcome.broadcast_id)
            if outcome.status != "sending":
                return sample.at if outcome.status == "completed" else None
            if sample.at >= next_progress:
                next_progress += PROGRESS_SECONDS
                earlier = next((s for s in reversed(meters.samples) if s.at <= sample.at - PROGRESS_SECONDS),
                               meters.samples[0])
                rate = (sample.accepted - earlier.accepted) / max(sample.at - earlier.at, 1e-9)
                cpu = spent(earlier, sample, "service_cpu")
                live = f"; {meters.live_chats[-1][1]:,} live chats" if meters.live_chats else ""
                print(f"  {sample.at:6.0f} s: {sample.accepted:,} sent ({rate:,.0f}/s), service "
                      f"{'?' if cpu is None else f'{cpu / max(sample.at - earlier.at, 1e-9):.0%}'} of a core, "
                      f"RSS {mib(sample.rss)}{live}", flush=True)
    return None


# -- the report ---------------------------------------------------------------------------------------------


def report(args: argparse.Namespace, base: Baseline, meters: Meters, outcome: Outcome) -> int:
    samples = meters.samples
    first, last = samples[0], samples[-1]
    sent = last.accepted - first.accepted
    total = outcome.accepted - first.accepted
    low, high = at_count(samples, first.accepted + 0.1 * total), at_count(samples, first.accepted + 0.9 * total)
    bulk = SendSchedule(args.rate).bulk_limit
    pace = bulk / WINDOW_SECONDS
    print()
    print(f"recipients: {args.recipients:,}; platform throughput and WHATSAPP_SENDS_PER_SECOND {args.rate:,} (a "
          f"broadcast's pace: {bulk:,} sends in any {WINDOW_SECONDS:g} s, {pace:,.1f}/s; "
          f"{BROADCAST_CONCURRENCY} sends in flight)")
    print("time to completion: " + (f"{outcome.completed_after:.1f} s from the bulk-send (answered 202 in "
                                    f"{outcome.created_in:.2f} s)" if outcome.completed_after is not None else
                                    f"NOT completed ({outcome.status}) within {args.deadline:g} s"))
    if low is not None and high is not None and high > low:
        middle = 0.8 * total / (high - low)
        print(f"sustained send rate: {middle:,.1f} sends/s (10% to 90% of the sends, {low:.1f} to {high:.1f} s); "
              f"{middle / base.rate:.3f}x the baseline's {base.rate:,.0f}/s; {middle / pace:.0%} of the "
              "broadcast's pace")
    else:
        print("sustained send rate: too few samples to tell")
    whole = f"{sent / last.at:,.1f} sends/s" if last.at > 0 else "?"
    print(f"average send rate: {whole} ({sent:,} sends in {last.at:.1f} s)")
    per_thousand = 1000 / max(sent, 1)
    cpu = {name: spent(first, last, f"{name}_cpu") for name in ("service", "simulator", "postgres")}
    print("CPU per 1,000 sends: " + ", ".join(
        f"{label} {'not measured' if value is None else f'{value * per_thousand:.2f} s'}" for label, value in
        (("service", cpu["service"]), ("simulator", cpu["simulator"]), ("PostgreSQL", cpu["postgres"]))) +
        f" (the baseline's simulator {fmt(base.simulator_cpu)})")
    if last.at > 0:
        print("CPU, share of a core over the run: " + ", ".join(
            f"{label} {value / last.at:.0%}" for label, value in (("service", cpu["service"]),
                                                                  ("simulator", cpu["simulator"]),
                                                                  ("PostgreSQL", cpu["postgres"]))
            if value is not None))
    rss = [s.rss for s in samples if s.rss is not None]
    if rss:
        print(f"service RSS: {mib(first.rss)} before the bulk-send, max {mib(max(rss))}, {mib(last.rss)} at the end "
              f"({(last.rss - first.rss) / MIB:+,.0f} MiB; {(last.rss - first.rss) / max(sent, 1) / 1024:,.2f} KiB "
              "per send)")
        print("  by tenths of the sends: " + ", ".join(
            f"{tenth * 10}% {mib(rss_at(samples, first.accepted + tenth / 10 * total))}" for tenth in range(1, 11)))
    if meters.live_chats:
        print("live conversation actors (at s): " + ", ".join(f"{count:,} ({at:.0f})" for at, count in
                                                              meters.live_chats))
    counts = outcome.counts
    print(f"counts at the end (GET /api/broadcasts/{{id}} answered in {outcome.read_ms:.0f} ms): " + ", ".join(
        f"{name} {counts.get(name, 0):,}" for name in ("recipients", "queued", "in_flight", "sent", "delivered",
                                                         "read", "failed", "skipped", "cancelled")))
    print(f"platform: {outcome.accepted:,} sends accepted, refused {outcome.refused or 'none'}")
    good = (outcome.status == "completed" and outcome.accepted == args.recipients
            and counts.get("sent") == args.recipients and not counts.get("failed"))
    if not good:
        print("NOT every recipient sent once: see the counts above")
    return 0 if good else 1


def rss_at(samples: list[Sample], count: float) -> int | None:
    for sample in samples:
        if sample.accepted >= count:
            return sample.rss
    return samples[-1].rss


# -- the command line ---------------------------------------------------------------------------------------


async def run(args: argparse.Namespace, server_url: str, postgres_pid: int | None, work_dir: Path) -> int:
    base = await baseline(args, work_dir)
    async with trio_asyncio.open_loop():
        async with running_rig(args, server_url, postgres_pid, work_dir) as rig:
            print(f"service {rig.url} (pid {rig.service.process.pid}), simulator {rig.simulator.ready['url']} "
                  f"(pid {rig.simulator.process.pid})", flush=True)
            meters = Meters(rig.service, rig.simulator, postgres_pid)
            outcome = await run_broadcast(args, rig, meters)
    return report(args, base, meters, outcome)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = script_parser(__doc__)
    parser.add_argument("--recipients", type=int, default=100_000, help="recipients of the broadcast (100,000)")
    parser.add_argument("--rate", type=int, default=1000,
                        help="WHATSAPP_SENDS_PER_SECOND and the simulator's throughput (1,000; 80 is the default tier)")
    parser.add_argument("--concurrency", type=int, default=BROADCAST_CONCURRENCY,
                        help=f"the baseline client's connections ({BROADCAST_CONCURRENCY}: a broadcast's sends in "
                             "flight)")
    parser.add_argument("--baseline-seconds", type=float, default=10.0, help="the baseline's length (10)")
    parser.add_argument("--idle-seconds", type=float,
                        help="INBOX_ACTOR_IDLE_SECONDS for the service (default: the service's own, 300)")
    parser.add_argument("--actors-every", type=float, default=30.0,
                        help="seconds between reads of the live conversation actors (30; 0: never)")
    parser.add_argument("--deadline", type=float,
                        help="give up on completion after this many seconds (default: 3x the pacer's time + 10 min)")
    add_database_url(parser)
    args = parser.parse_args(argv)
    if not 1 <= args.recipients <= 100_000 or args.rate < 1 or args.concurrency < 1 or args.baseline_seconds <= 0 \
            or args.actors_every < 0 or (args.deadline is not None and args.deadline <= 0) \
            or (args.idle_seconds is not None and args.idle_seconds <= 0):
        parser.error("--recipients must be 1 to 100,000 (a broadcast's most), --rate and --concurrency at least 1, "
                     "--baseline-seconds, --idle-seconds and --deadline above 0, --actors-every at least 0")
    if args.deadline is None:
        args.deadline = 3 * args.recipients * WINDOW_SECONDS / SendSchedule(args.rate).bulk_limit + 600
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs doing the work of {effective_cores():.1f} at once; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    started = time.perf_counter()
    try:
        return run_on_postgres("bench-broadcast", args.database_url, run, args, noun="bench")
    finally:
        print(f"took {time.perf_counter() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
