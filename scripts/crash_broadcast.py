"""A broadcast across a crash: the service is SIGKILLed while a broadcast is sending, started again on the same
database, and the broadcast must resume and finish with every recipient sent to exactly once. Prints, per run, the
recipients, how many the platform had got before the kill, how many got the message once, twice (must be 0) or never
(lost: must be 0; a recipient left in doubt is counted apart), the time to resume and the total time.

    .venv/bin/python scripts/crash_broadcast.py                     # 400 recipients at 40 sends/s, one run
    .venv/bin/python scripts/crash_broadcast.py --recipients 1000 --rate 80 --runs 3 --database-url postgresql://...

1. PostgreSQL as every script has it (harness.postgres: embedded with durability off, or a database of its own
   on --database-url, dropped at the end); a Scale workspace, an admin, a full-access key and the template
   `crash_broadcast` (en, 1 parameter) made in it directly.
2. The platform: `inbox-actors simulator` in a process of its own for the whole run (it outlives every incarnation
   of the service, so its record of what it accepted is the truth), knowing that template, accepting --rate sends a
   second (--platform-throughput to differ), keeping every send, and retrying a status webhook the service did not
   take for about a minute (0.5, 1, 2, 4, 8, 15, 30 s), as Meta retries.
3. The service: `inbox-actors serve` on a fixed port (the simulator posts there) in a process of its own, with
   WHATSAPP_SENDS_PER_SECOND = --rate (a broadcast takes at most four fifths of it), so that a broadcast of
   --recipients takes a few seconds.
4. Each run: `POST /api/bulk-send` to --recipients fresh numbers; `GET /api/broadcasts/{id}` every 50 ms until its
   counts.sent reaches --kill-at of the recipients; SIGKILL (no shutdown, no drain); the service started again at
   once on the same database (its broadcast schedule resumes the broadcasts that were sending); then wait (at most
   --deadline s) until the broadcast is completed and every send the platform accepted has its status in the
   database.
5. The platform's record is compared with the recipients: each got the message once, twice or more (sent twice:
   must be 0), or never. A recipient whose message was committed as pending when the kill came, and which the
   platform never got (the kill came between the commit and the platform call), is in flight for the resumed
   broadcast: no status of it comes, so 30 s after the broadcast resumed it is given up as never sent and sent again
   (broadcasts/broadcast.py), and the broadcast completes only then. One still so at the end is counted *left in
   doubt* (the wait ran out first); every other recipient that never got it is *lost*. The
   time to resume runs from the kill to the first send the platform accepted from the new process. Also printed:
   the sends the platform refused. The restarted service's send pacer starts empty while the platform's last second
   still holds the killed process's sends, so with the platform at --rate the resumed broadcast's first burst is
   partly refused 130429; those recipients are queued again and sent 30 s later (a failed message stays in their
   chat), which is most of the total time of a small run.

Exit status 0 when, in every run, the broadcast completed, nobody was sent twice, nobody was lost and the database
knows every send the platform accepted; 1 otherwise; 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import httpx
import trio
import trio_asyncio
from harness.options import add_database_url, script_parser
from harness.postgres import bench_database
from harness.processes import Child, RestartableService, service_env
from harness.run import run_check
from harness.simulator import STATUS_RETRIES, SeparateSimulator, platform_record
from harness.workspace import Workspace, make_workspace

from inbox_actors.domain.send_pacing import WINDOW_SECONDS, SendSchedule
from inbox_actors.platform import templates
from persistence.database import Database

TEMPLATE = ("crash_broadcast", "en", "Hello {{1}}, our sale starts today!")
PHONE_BASE = 447_300_000_000
STARTUP_SECONDS = 120.0
POLL_SECONDS = 0.05
THROUGHPUT = 130429
RETRY_AFTER = 30             # seconds: a recipient refused for throughput is tried again (broadcasts/broadcast.py)


@dataclass
class Run:
    """One broadcast, killed once, and what was seen of it."""

    number: int
    phones: list[str]
    broadcast_id: int = 0
    created_at: float = 0.0          # trio time the bulk-send was answered
    sent_seen: int = 0               # counts.sent of the last read before the kill
    killed_at: float | None = None
    killed_wall: datetime | None = None    # the same moment on the wall clock (the database's timestamps)
    accepted_at_kill: int = 0        # the platform's sends of this broadcast once the service was dead
    ready_after: float | None = None       # the kill to the new process's ready line
    resumed_after: float | None = None     # the kill to the platform's first send from the new process
    completed_after: float | None = None   # creation to status completed
    settled_after: float | None = None     # creation to every accepted send's status in the database
    status: str = ""
    counts: dict = field(default_factory=dict)


async def read_broadcast(http: httpx.AsyncClient, broadcast_id: int) -> dict:
    answer = await http.get(f"/api/broadcasts/{broadcast_id}")
    answer.raise_for_status()
    return answer.json()


async def accepted_for(simulator_url: str, phone_number_id: str, phones: set[str]) -> list[dict]:
    return [record for record in await platform_record(simulator_url, phone_number_id) if record["to"] in phones]


async def recipient_rows(db: Database, broadcast_id: int) -> list:
    return await db.fetch(
        "SELECT r.position, r.phone, r.state, m.id AS message_id, m.status"
        " FROM broadcast_recipients r LEFT JOIN messages m ON m.id = r.message_id"
        " WHERE r.broadcast_id = $1 ORDER BY r.position", broadcast_id)


async def broadcast_messages(db: Database, broadcast_id: int) -> list:
    return await db.fetch("SELECT id, recipient, status, error_code, sent_at FROM messages WHERE broadcast_id = $1",
                          broadcast_id)


async def create(http: httpx.AsyncClient, run: Run, tag: str) -> None:
    answer = await http.post("/api/bulk-send", json={
        "name": f"Crash broadcast {tag} #{run.number}", "recipients": run.phones,
        "template": {"name": TEMPLATE[0], "language": TEMPLATE[1], "parameters": [f"crash {tag}"]}})
    if answer.status_code != 202:
        raise RuntimeError(f"bulk-send answered {answer.status_code}: {answer.text[:500]}")
    run.created_at = trio.current_time()
    run.broadcast_id = answer.json()["id"]


async def kill_when_sent(service: RestartableService, http: httpx.AsyncClient, run: Run, threshold: int,
                         simulator_url: str, ws: Workspace, patience: float) -> None:
    """SIGKILL once the API counts `threshold` sent (or the broadcast finished first: no kill), then start again."""
    while True:
        try:
            view = await read_broadcast(http, run.broadcast_id)
        except httpx.HTTPError:
            await trio.sleep(POLL_SECONDS)
            continue
        run.sent_seen = view["counts"]["sent"]
        if view["status"] != "sending" or run.sent_seen >= threshold:
            break
        await trio.sleep(POLL_SECONDS)
    if view["status"] != "sending":
        print(f"  the broadcast was {view['status']} before {threshold:,} were sent: not killed", flush=True)
        return
    await service.kill()
    run.killed_at, run.killed_wall = trio.current_time(), datetime.now(timezone.utc)
    run.accepted_at_kill = len(await accepted_for(simulator_url, ws.phone_number_id, set(run.phones)))
    async with httpx.AsyncClient(base_url=simulator_url, timeout=30) as simulator:
        accepted = (await simulator.get("/simulator/stats")).json()["sends_accepted"]
    print(f"  SIGKILL {run.killed_at - run.created_at:.2f} s after the bulk-send: {run.sent_seen:,} sent by the "
          f"API's counts, {run.accepted_at_kill:,} accepted by the platform", flush=True)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch_resume, run, simulator_url, accepted, patience)
        await service.start()
        run.ready_after = trio.current_time() - run.killed_at
    print(f"  started again (pid {service.child.process.pid}): ready {run.ready_after:.2f} s after the kill, "
          f"first send {run.resumed_after:.2f} s after it" if run.resumed_after is not None else
          f"  started again (pid {service.child.process.pid}): ready {run.ready_after:.2f} s after the kill; "
          "no send yet", flush=True)


async def watch_resume(run: Run, simulator_url: str, accepted: int, patience: float) -> None:
    """The time from the kill to the platform's first send from the new process (its count of accepted sends
    passing `accepted`, its count once the old process was dead)."""
    async with httpx.AsyncClient(base_url=simulator_url, timeout=30) as http:
        with trio.move_on_after(patience):
            while (await http.get("/simulator/stats")).json()["sends_accepted"] <= accepted:
                await trio.sleep(0.01)
            run.resumed_after = trio.current_time() - run.killed_at


async def wait_done(http: httpx.AsyncClient, db: Database, run: Run, simulator_url: str, ws: Workspace,
                    deadline: float) -> None:
    """Until the broadcast is completed and every send the platform accepted has a status in the database."""
    phones = set(run.phones)
    with trio.move_on_at(deadline):
        while True:
            try:
                view = await read_broadcast(http, run.broadcast_id)
            except httpx.HTTPError:
                await trio.sleep(POLL_SECONDS)
                continue
            run.status, run.counts = view["status"], view["counts"]
            if run.status == "completed" and run.completed_after is None:
                run.completed_after = trio.current_time() - run.created_at
            if run.completed_after is not None:
                accepted = {str(record["callback_data"]) for record in
                            await accepted_for(simulator_url, ws.phone_number_id, phones)}
                pending = {str(row["id"]) for row in await broadcast_messages(db, run.broadcast_id)
                           if row["status"] == "pending"}
                if not accepted & pending:
                    run.settled_after = trio.current_time() - run.created_at
                    return
            elif run.status not in ("sending", "completed"):
                return
            await trio.sleep(POLL_SECONDS * 4)


async def one_run(args: argparse.Namespace, service: RestartableService, db: Database, ws: Workspace,
                  simulator_url: str, number: int, tag: str) -> Run:
    first = PHONE_BASE + random.randrange(1000) * 10**6 + number * 10**4
    # Numbers ending in 1 to 9 (the simulator turns read receipts off for those ending in 0).
    run = Run(number, [str(first + i + i // 9 + 1) for i in range(args.recipients)])
    threshold = max(1, round(args.recipients * args.kill_at))
    bulk = SendSchedule(args.rate).bulk_limit       # sends a broadcast may make in any WINDOW_SECONDS
    print(f"run {number} of {args.runs}: {args.recipients:,} recipients at WHATSAPP_SENDS_PER_SECOND {args.rate} "
          f"(a broadcast's pace: {bulk} sends in any {WINDOW_SECONDS:g} s, about "
          f"{args.recipients * WINDOW_SECONDS / bulk:.1f} s); SIGKILL once {threshold:,} "
          "are sent", flush=True)
    headers = {"Authorization": f"Bearer {ws.key}"}
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{service.port}", headers=headers, timeout=60) as http:
        await create(http, run, tag)
        await kill_when_sent(service, http, run, threshold, simulator_url, ws, args.deadline)
        await wait_done(http, db, run, simulator_url, ws, trio.current_time() + args.deadline)
    return run


@dataclass
class Verdict:
    recipients: int = 0
    once: int = 0
    twice: int = 0
    in_doubt: int = 0
    lost: int = 0
    unknown: int = 0          # platform sends for the broadcast the database has no message of
    extra_messages: int = 0   # recipients with more than one message of the broadcast that did not fail
    throughput_refusals: int = 0   # failed messages the platform refused with 130429 (the recipient queued again)
    unfinished: int = 0       # runs whose broadcast did not complete and settle in time

    def add(self, other: Verdict) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def failed(self) -> bool:
        return bool(self.twice or self.lost or self.unknown or self.extra_messages or self.unfinished)


async def judge(run: Run, db: Database, simulator_url: str, ws: Workspace) -> Verdict:
    record = await accepted_for(simulator_url, ws.phone_number_id, set(run.phones))
    rows = await recipient_rows(db, run.broadcast_id)
    messages = await broadcast_messages(db, run.broadcast_id)
    got = Counter(item["to"] for item in record)
    callbacks = {str(item["callback_data"]) for item in record}
    verdict = Verdict(recipients=len(rows), unfinished=0 if run.settled_after is not None else 1)
    in_doubt, lost = [], []
    for row in rows:
        times = got[row["phone"]]
        if times == 1:
            verdict.once += 1
        elif times > 1:
            verdict.twice += 1
        elif row["state"] == "claimed" and row["status"] == "pending" and str(row["message_id"]) not in callbacks:
            in_doubt.append(row)
        else:
            lost.append(row)
    verdict.in_doubt, verdict.lost = len(in_doubt), len(lost)
    known = {str(row["id"]) for row in messages}
    unknown = [item for item in record if str(item["callback_data"]) not in known]
    verdict.unknown = len(unknown)
    live = Counter(row["recipient"] for row in messages if row["status"] != "failed")
    verdict.extra_messages = sum(1 for times in live.values() if times > 1)
    refused = Counter(row["error_code"] for row in messages if row["status"] == "failed")
    verdict.throughput_refusals = refused.pop(THROUGHPUT, 0)
    refused_when = sorted((row["sent_at"] - run.killed_wall).total_seconds() for row in messages
                          if row["error_code"] == THROUGHPUT and run.killed_wall is not None)
    twice = [phone for phone, times in got.items() if times > 1]

    counts = run.counts
    print(f"  broadcast {run.broadcast_id}: {run.status or 'unknown'}"
          + (f" {run.completed_after:.1f} s after the bulk-send" if run.completed_after is not None else "")
          + (f", every accepted send settled {run.settled_after:.1f} s after it" if run.settled_after is not None
             else "; NOT every accepted send settled before the deadline"))
    if counts:
        print("  its counts: " + ", ".join(f"{name} {counts[name]:,}" for name in
                                           ("recipients", "queued", "in_flight", "sent", "delivered", "read",
                                            "failed", "skipped", "cancelled", "erased")))
    print(f"  platform: {len(record):,} sends to the broadcast's recipients; database: {len(messages):,} messages of "
          f"the broadcast, {verdict.unknown} platform sends it does not know")
    if verdict.throughput_refusals or refused:
        print(f"  sends the platform refused: {verdict.throughput_refusals} for throughput (130429: the recipient "
              f"queued again and sent {RETRY_AFTER} s later, its refused message kept in the chat)"
              + (f", sent {refused_when[0]:.2f} to {refused_when[-1]:.2f} s after the kill" if refused_when else "")
              + "".join(f"; {times} with {code}" for code, times in refused.items()))
    print(f"recipients: {verdict.recipients:,}")
    print(f"sent before the kill: {run.accepted_at_kill:,} (the API's counts said {run.sent_seen:,} sent)"
          if run.killed_at is not None else "sent before the kill: no kill")
    print(f"got it once: {verdict.once:,}")
    print(f"got it twice: {verdict.twice:,}")
    print(f"never got it: {verdict.in_doubt + verdict.lost:,} (left in doubt {verdict.in_doubt:,}, lost "
          f"{verdict.lost:,})")
    if in_doubt:
        print(f"  left in doubt: position {', '.join(str(row['position']) for row in in_doubt[:10])}: committed as "
              "pending, then the process died before the platform got the request; still in flight when the wait "
              "ended (the broadcast sends it again once it has waited 30 s for a status)")
    print("time to resume: " + (f"{run.resumed_after:.2f} s from the kill to the first send of the new process "
                                f"(ready after {run.ready_after:.2f} s)" if run.resumed_after is not None else
                                "no kill" if run.killed_at is None else "never resumed"))
    print("total time: " + (f"{run.completed_after:.1f} s from the bulk-send to completed"
                            if run.completed_after is not None else "not completed"), flush=True)
    for what, examples in (("sent twice", twice), ("lost", [f"{row['position']} ({row['state']}, message "
                                                            f"{row['status']})" for row in lost]),
                           ("unknown", [str(item["callback_data"]) for item in unknown])):
        if examples:
            print(f"  first {what}: {', '.join(examples[:5])}")
    if verdict.extra_messages:
        print(f"  recipients with more than one message that did not fail: {verdict.extra_messages}")
    return verdict


async def run_all(args: argparse.Namespace, server_url: str, _postgres_pid: int | None, work_dir: Path) -> int:
    platform = SeparateSimulator.on_free_ports()
    simulator_url = platform.url
    simulator = Child("simulator", [
        *platform.command(from_environment=False), "--template", f"{TEMPLATE[0]}:{TEMPLATE[1]}:1",
        "--throughput", str(args.platform_throughput or args.rate),
        "--history", str(args.recipients * args.runs * 2 + 100), "--webhook-retry-delays", STATUS_RETRIES],
        dict(os.environ), work_dir / "simulator.log")
    total = Verdict()
    async with trio_asyncio.open_loop():
        async with bench_database(server_url, f"inbox_bench_crash_broadcast_{os.getpid()}") as (url, db):
            ws = await make_workspace(db, "Crash broadcast")
            await templates.add_template(db, workspace_id=ws.workspace_id, name=TEMPLATE[0], language=TEMPLATE[1],
                                         body=TEMPLATE[2], category_name="MARKETING")
            env = {**service_env(work_dir / "service", platform.service_env()), "DATABASE_URL": url,
                   "WHATSAPP_SENDS_PER_SECOND": str(args.rate), "INBOX_IP_LIMIT_PER_MINUTE": "1000000"}
            env.pop("INBOX_TEMPLATE_CREDITS", None)      # sends not metered: credits never pause the broadcast
            service = RestartableService(platform.service_port, env, work_dir, STARTUP_SECONDS)
            tag = secrets.token_hex(3)
            async with simulator.running(STARTUP_SECONDS):
                try:
                    await service.start()
                    print(f"service: {service.child.ready['url']} (pid {service.child.process.pid}); platform "
                          f"{simulator_url} in a process of its own", flush=True)
                    for number in range(1, args.runs + 1):
                        run = await one_run(args, service, db, ws, simulator_url, number, tag)
                        total.add(await judge(run, db, simulator_url, ws))
                finally:
                    await service.stop()
    if args.runs > 1:
        print(f"all {args.runs} runs: recipients {total.recipients:,}, got it once {total.once:,}, twice "
              f"{total.twice:,}, left in doubt {total.in_doubt:,}, lost {total.lost:,}")
    return 1 if total.failed else 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = script_parser(__doc__)
    parser.add_argument("--recipients", type=int, default=400, help="recipients of each broadcast (400)")
    parser.add_argument("--rate", type=int, default=40,
                        help="WHATSAPP_SENDS_PER_SECOND and the simulator's throughput (40: a broadcast sends 32/s)")
    parser.add_argument("--platform-throughput", type=int, metavar="N",
                        help="the simulator's sends a second (default: --rate; above it, the burst of a resumed "
                             "broadcast is not refused 130429)")
    parser.add_argument("--runs", type=int, default=1, help="broadcasts, each killed once (1)")
    parser.add_argument("--kill-at", type=float, default=1 / 3,
                        help="SIGKILL once this share of the recipients is sent by the API's counts (0.33)")
    parser.add_argument("--deadline", type=float, default=300.0,
                        help="after the kill, wait at most this long for the broadcast to complete and settle (300 s)")
    parser.add_argument("--seed", type=int, help="random seed for the numbers")
    add_database_url(parser)
    args = parser.parse_args(argv)
    if not 1 <= args.recipients <= 9_000 or min(args.rate, args.platform_throughput or 1) < 1 \
            or not 1 <= args.runs <= 99 or not 0 < args.kill_at < 1 or args.deadline <= 0:
        parser.error("--recipients must be 1 to 9,000, --rate and --platform-throughput at least 1, --runs 1 to 99, "
                     "--kill-at between 0 and 1 (exclusive), --deadline positive")
    return args


def main(argv: list[str] | None = None) -> int:
    return run_check("crash-broadcast", parse_args(argv), run_all)


if __name__ == "__main__":
    sys.exit(main())
