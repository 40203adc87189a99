"""Shutdown under load: N live conversations with work under way in their actors, then SIGTERM. Prints the time
the service takes to exit and the work lost (acknowledged to the platform but not stored), which must be 0.

    .venv/bin/python scripts/shutdown_check.py                   # 20,000 chats, grace 10 s
    .venv/bin/python scripts/shutdown_check.py --small           # 500 chats: a smoke run
    .venv/bin/python scripts/shutdown_check.py --chats 5000 --grace 5 --database-url postgresql://...

1. PostgreSQL: the embedded server (durability off) in a temporary directory, or the server of --database-url
   (its role needs CREATEDB), as every script has it (harness.postgres): a database `inbox_bench_shutdown_<pid>`,
   migrated, dropped at the end, and one Scale workspace in it (no bot answers stored: every chat's first
   message is handed to a person, so the bot sends nothing to the platform).
2. The service: `inbox-actors serve --port 0` in a process of its own (harness.processes'
   service_child), with WHATSAPP_APP_SECRET made up here so the script can sign the platform's webhooks,
   INBOX_ACTOR_IDLE_SECONDS high so no chat passivates, INBOX_SHUTDOWN_GRACE_SECONDS from --grace.
3. Wave 1: one customer message per chat, --per-post messages (different chats) in each signed envelope
   POSTed to /webhooks/whatsapp, --concurrency POSTs at once. The service answers 200 only once its
   conversation actor committed every message of the envelope; POSTs answered otherwise are posted again
   (twice at most), as the platform retries. Then /health/actors must show N conversations live and every
   mailbox empty.
4. Wave 2: one more message per chat, posted the same way. Once --sigterm-after of its POSTs are answered,
   /health/actors is read (live actors, messages queued in mailboxes) and the service gets SIGTERM; the POSTs
   not yet sent go on being sent, as the platform would, and meet a stopping service. The route asks a chat's
   actor for one message at a time, so a mailbox rarely holds more than the message being handled: the work
   under way at SIGTERM is the messages of the POSTs not yet answered (printed too). The client keeps its
   connections alive between POSTs, as the platform does (--no-keep-alive: a connection per POST, and the
   health read on a connection of its own); Hypercorn (0.18, under quart-trio) closes no connection left idle
   after a request, neither at its keep-alive timeout nor at shutdown, so with any such connection the exit
   takes the whole grace period before the actors even begin to stop.
5. Measured: seconds from SIGTERM to the process's exit (and to the last 200 after SIGTERM); messages
   acknowledged (in a POST answered 200); stored (rows in `messages` of the workspace, by platform id);
   lost = acknowledged but not stored; sent but not acknowledged (connection refused or closed, or answered
   non-200: the platform retries those, and a redelivery is stored once), of which some may be stored anyway.

Exit status 0 when nothing acknowledged was lost, every wave-1 message was stored and the service exited by
itself; 1 otherwise; 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import httpx
import trio
import trio_asyncio
from harness.options import add_database_url, fill_from_preset, script_parser
from harness.postgres import bench_database
from harness.processes import Child, service_child
from harness.run import run_on_postgres
from harness.workspace import make_workspace

from inbox_actors.platform.payloads import InboundMessage
from inbox_actors.platform.webhook_envelope import SIGNATURE_HEADER, build_envelope, sign

# 8 POSTs at once: up to 8 x 64 asks in flight (inbox_http/routes/whatsapp_webhook.py's PARALLEL_CHATS), which
# a service storing ~50 new chats/s a core answers within the asks' 30 s (at 32, wave 1 timed out).
FULL = {"chats": 20_000, "per_post": 100, "concurrency": 8}
SMALL = {"chats": 500, "per_post": 20, "concurrency": 8}
PHONE_BASE = 15_550_000_000
IDLE_SECONDS = 86_400           # no chat passivates during the run
SETTLE_SECONDS = 120.0          # wave 1's bot turns (hand-offs) to finish
WAVE1_ROUNDS = 3                # wave 1's POSTs not answered 200 are posted again, as the platform retries
TEXTS = ("Hi, where is my order #{n}? It was due on Monday.", "Any news about order #{n}? Still waiting.")

# -- the platform's side: envelopes and POSTs ---------------------------------------------------------------


@dataclass(frozen=True)
class Post:
    ids: tuple[str, ...]        # the platform message ids the envelope carries
    body: bytes
    headers: dict[str, str]


def build_posts(phone_number_id: str, app_secret: str, wave: int, chats: int, per_post: int) -> list[Post]:
    """One message for each of `chats` customers, `per_post` (different customers) to an envelope, signed."""
    at = datetime.now(timezone.utc)
    posts = []
    for first in range(0, chats, per_post):
        messages = [InboundMessage(message_id=f"wamid.shutdown.{wave}.{n}", from_phone=str(PHONE_BASE + n), at=at,
                                   type="text", text=TEXTS[(wave - 1) % len(TEXTS)].format(n=100_000 + n),
                                   profile_name=f"Customer {n}")
                    for n in range(first, min(first + per_post, chats))]
        body = build_envelope(phone_number_id, "15550000000", messages=messages)
        posts.append(Post(tuple(m.message_id for m in messages), body,
                          {"Content-Type": "application/json", SIGNATURE_HEADER: sign(app_secret, body)}))
    return posts


@dataclass
class Wave:
    """What came back from one wave's POSTs."""

    sent: int = 0                                   # messages in envelopes whose POST was attempted
    in_flight: int = 0                              # messages in POSTs sent and not answered yet
    acknowledged: set[str] = field(default_factory=set)
    not_acknowledged: set[str] = field(default_factory=set)
    outcomes: Counter = field(default_factory=Counter)   # "200", "503", "ConnectError", ... per POST
    answered: int = 0                               # POSTs finished, whatever their outcome
    answered_changed: trio.Event = field(default_factory=trio.Event)
    last_ack_at: float = 0.0                        # perf_counter of the last 200

    def record(self, post: Post, outcome: str) -> None:
        self.in_flight -= len(post.ids)
        self.outcomes[outcome] += 1
        if outcome == "200":
            self.acknowledged.update(post.ids)
            self.last_ack_at = time.perf_counter()
        else:
            self.not_acknowledged.update(post.ids)
        self.answered += 1
        self.answered_changed.set()
        self.answered_changed = trio.Event()

    def describe(self) -> str:
        return ", ".join(f"{outcome} x{count:,}" for outcome, count in self.outcomes.most_common())


async def post_wave(client: httpx.AsyncClient, posts: list[Post], concurrency: int, wave: Wave) -> None:
    """Every POST, `concurrency` at once, each outcome recorded (transport errors by their type's name)."""
    queue = iter(posts)

    async def worker() -> None:
        for post in queue:
            wave.sent += len(post.ids)
            wave.in_flight += len(post.ids)
            try:
                answer = await client.post("/webhooks/whatsapp", content=post.body, headers=post.headers)
                outcome = str(answer.status_code)
            except httpx.HTTPError as err:
                outcome = type(err).__name__
            wave.record(post, outcome)

    async with trio.open_nursery() as nursery:
        for _ in range(min(concurrency, len(posts))):
            nursery.start_soon(worker)


async def actor_summary(client: httpx.AsyncClient) -> dict:
    answer = await client.get("/health/actors", params={"busiest": 0})
    answer.raise_for_status()
    return answer.json()


def live_and_queued(summary: dict) -> tuple[int, int, int]:
    """(live conversations, live actors of every kind, messages queued in all mailboxes)."""
    kinds = summary["kinds"]
    return (kinds.get("conversation", {}).get("live", 0), sum(k["live"] for k in kinds.values()),
            sum(k["mailbox_used"] for k in kinds.values()))


# -- the run -------------------------------------------------------------------------------------------------


@dataclass
class Figures:
    chats: int
    grace: float
    aborted: str | None = None      # why the check stopped before SIGTERM
    wave1_seconds: float = 0.0
    live_conversations: int = 0     # at SIGTERM
    live_actors: int = 0
    queued: int = 0                 # messages in mailboxes at SIGTERM
    posts_answered_at_sigterm: int = 0
    in_flight: int = 0              # messages in POSTs sent and not answered at SIGTERM
    exit_seconds: float | None = None   # None: killed
    last_ack_seconds: float | None = None
    return_code: int | None = None
    wave1_missing: int = 0
    acknowledged: int = 0
    stored: int = 0                 # wave 2
    lost: int = 0
    unacknowledged: int = 0
    unacknowledged_stored: int = 0
    sent: int = 0                   # wave 2
    wave2_outcomes: str = ""
    not_stored_warnings: int = 0


async def wave_one(client: httpx.AsyncClient, posts: list[Post], concurrency: int, figures: Figures) -> str | None:
    """Every chat made live; why not, if not."""
    started, pending, acknowledged = time.perf_counter(), posts, set()
    for attempt in range(1, WAVE1_ROUNDS + 1):
        wave = Wave()
        await post_wave(client, pending, concurrency, wave)
        acknowledged |= wave.acknowledged
        figures.wave1_seconds = time.perf_counter() - started
        print(f"wave 1{f' (again, {attempt})' if attempt > 1 else ''}: {wave.sent:,} messages in {len(pending):,} "
              f"POSTs ({concurrency} at once) after {figures.wave1_seconds:.1f} s "
              f"({len(acknowledged) / figures.wave1_seconds:,.0f} acknowledged/s); {wave.describe()}", flush=True)
        pending = [post for post in pending if not acknowledged.issuperset(post.ids)]
        if not pending:
            break
    if pending:
        return f"wave 1: {sum(len(post.ids) for post in pending):,} messages never acknowledged"
    deadline = time.perf_counter() + SETTLE_SECONDS
    while True:   # the hand-offs (bot turns) the first messages queued, then nothing should be left queued
        conversations, actors, queued = live_and_queued(await actor_summary(client))
        if conversations >= figures.chats and queued == 0 or time.perf_counter() > deadline:
            break
        await trio.sleep(0.5)
    print(f"live after wave 1: {conversations:,} conversations ({actors:,} actors of every kind), "
          f"{queued:,} messages queued", flush=True)
    if conversations < figures.chats:
        return f"only {conversations:,} of {figures.chats:,} conversations live after wave 1"
    return None


async def wave_two(service: Child, client: httpx.AsyncClient, posts: list[Post], concurrency: int,
                   sigterm_after: float, figures: Figures, wave: Wave) -> None:
    """Post the wave; once `sigterm_after` of its POSTs are answered, SIGTERM the service and time its exit."""
    trigger = max(1, min(len(posts), round(len(posts) * sigterm_after)))
    process = service.process
    # Beyond both grace periods the service applies (HTTP's, then the actors'), it is not stopping by itself.
    patience = 2 * figures.grace + 60.0

    async def stop_midway() -> None:
        while wave.answered < trigger:
            await wave.answered_changed.wait()
        try:
            figures.live_conversations, figures.live_actors, figures.queued = live_and_queued(
                await actor_summary(client))
        except httpx.HTTPError as err:
            print(f"/health/actors did not answer before SIGTERM ({type(err).__name__}); live counts left 0")
        figures.posts_answered_at_sigterm, figures.in_flight = wave.answered, wave.in_flight
        process.send_signal(signal.SIGTERM)
        signalled = time.perf_counter()
        print(f"SIGTERM after {wave.answered:,} of {len(posts):,} POSTs answered, {figures.in_flight:,} messages in "
              f"POSTs under way: {figures.live_conversations:,} conversations live ({figures.live_actors:,} actors), "
              f"{figures.queued:,} messages queued in mailboxes", flush=True)
        with trio.move_on_after(patience):
            await process.wait()
        if process.returncode is None:
            print(f"the service had not exited {patience:g} s after SIGTERM: killed", flush=True)
            process.kill()
            await process.wait()
        else:
            figures.exit_seconds = time.perf_counter() - signalled
        figures.return_code = process.returncode
        if wave.last_ack_at > signalled:
            figures.last_ack_seconds = wave.last_ack_at - signalled

    async with trio.open_nursery() as nursery:
        nursery.start_soon(stop_midway)
        await post_wave(client, posts, concurrency, wave)


async def stored_ids(db, workspace_id: int) -> set[str]:
    rows = await db.fetch("SELECT platform_message_id FROM messages WHERE workspace_id = $1"
                          " AND direction = 'inbound'", workspace_id)
    return {row["platform_message_id"] for row in rows}


async def check(args: argparse.Namespace, server_url: str, _postgres_pid: int | None, work_dir: Path) -> int:
    figures = await run(args, server_url, work_dir)
    report(figures)
    failed = figures.aborted or figures.lost or figures.wave1_missing or figures.exit_seconds is None
    return 1 if failed else 0


async def run(args: argparse.Namespace, server_url: str, work_dir: Path) -> Figures:
    figures = Figures(chats=args.chats, grace=args.grace)
    app_secret = secrets.token_hex(32)
    async with trio_asyncio.open_loop():
        async with bench_database(server_url, f"inbox_bench_shutdown_{os.getpid()}") as (url, db):
            ws = await make_workspace(db, "Shutdown check")
            service = service_child(url, work_dir)
            service.env.pop("INBOX_HEALTH_TOKEN", None)   # /health/actors from loopback, no token
            service.env.update({"WHATSAPP_APP_SECRET": app_secret, "INBOX_ACTOR_IDLE_SECONDS": str(IDLE_SECONDS),
                                "INBOX_SHUTDOWN_GRACE_SECONDS": str(args.grace)})
            first = build_posts(ws.phone_number_id, app_secret, 1, args.chats, args.per_post)
            second = build_posts(ws.phone_number_id, app_secret, 2, args.chats, args.per_post)
            wave = Wave()
            async with service.running(120.0):
                print(f"service: {service.ready['url']} (pid {service.process.pid}), grace {args.grace:g} s",
                      flush=True)
                kept = 0 if args.no_keep_alive else args.concurrency + 2
                limits = httpx.Limits(max_connections=args.concurrency + 2, max_keepalive_connections=kept)
                headers = {"Connection": "close"} if args.no_keep_alive else {}
                async with httpx.AsyncClient(base_url=service.ready["url"], limits=limits, headers=headers,
                                             timeout=httpx.Timeout(120.0, connect=30.0)) as client:
                    figures.aborted = await wave_one(client, first, args.concurrency, figures)
                    if not figures.aborted:
                        await wave_two(service, client, second, args.concurrency, args.sigterm_after, figures,
                                       wave)
            if args.service_log:
                shutil.copyfile(service.log_path, args.service_log)
            stored = await stored_ids(db, ws.workspace_id)
    figures.wave1_missing = sum(1 for post in first for ident in post.ids if ident not in stored)
    figures.acknowledged = len(wave.acknowledged)
    figures.stored = sum(1 for post in second for ident in post.ids if ident in stored)
    figures.lost = len(wave.acknowledged - stored)
    figures.unacknowledged = len(wave.not_acknowledged)
    figures.unacknowledged_stored = len(wave.not_acknowledged & stored)
    figures.sent = wave.sent
    figures.wave2_outcomes = wave.describe()
    figures.not_stored_warnings = sum(1 for line in service.log_path.read_text(errors="replace").splitlines()
                                      if "not stored" in line)
    return figures


def report(figures: Figures) -> None:
    if figures.aborted:
        print(f"check not run: {figures.aborted}")
        return
    exit_text = f"{figures.exit_seconds:.2f} s" if figures.exit_seconds is not None else "did not exit (killed)"
    last_ack = "none after SIGTERM" if figures.last_ack_seconds is None else \
        f"{figures.last_ack_seconds:.2f} s after SIGTERM"
    print(f"time to exit: {exit_text} after SIGTERM (grace {figures.grace:g} s; exit status {figures.return_code});"
          f" last acknowledgement {last_ack}")
    print(f"live at SIGTERM: {figures.live_conversations:,} conversations, {figures.live_actors:,} actors in all, "
          f"{figures.queued:,} messages queued in mailboxes, {figures.in_flight:,} in POSTs under way")
    print(f"wave 2: {figures.sent:,} messages sent; POST outcomes: {figures.wave2_outcomes}")
    print(f"acknowledged: {figures.acknowledged:,}; stored: {figures.stored:,}; sent but not acknowledged: "
          f"{figures.unacknowledged:,} (of which stored anyway: {figures.unacknowledged_stored:,}; the platform "
          f"retries these)")
    if figures.not_stored_warnings:
        print(f"the service logged {figures.not_stored_warnings:,} 'not stored' warnings (items answered 503)")
    if figures.wave1_missing:
        print(f"wave 1: {figures.wave1_missing:,} acknowledged messages missing")
    print(f"lost: {figures.lost}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = script_parser(__doc__)
    parser.add_argument("--small", action="store_true",
                        help=f"{SMALL['chats']:,} chats, {SMALL['per_post']} messages a POST, "
                             f"{SMALL['concurrency']} POSTs at once")
    parser.add_argument("--chats", type=int, help=f"live conversations (default {FULL['chats']:,})")
    parser.add_argument("--per-post", type=int, help=f"messages in one envelope (default {FULL['per_post']})")
    parser.add_argument("--concurrency", type=int, help=f"POSTs at once (default {FULL['concurrency']})")
    parser.add_argument("--grace", type=float, default=10.0,
                        help="INBOX_SHUTDOWN_GRACE_SECONDS for the service (10, its default)")
    parser.add_argument("--sigterm-after", type=float, default=0.2,
                        help="share of wave 2's POSTs answered before SIGTERM (0.2)")
    parser.add_argument("--no-keep-alive", action="store_true",
                        help="a connection per POST (Connection: close) instead of keep-alive connections, "
                             "as the platform keeps")
    parser.add_argument("--service-log", help="copy the service's log (stderr; INBOX_LOG_LEVEL, default WARNING) "
                                              "to this file")
    add_database_url(parser)
    args = parser.parse_args(argv)
    fill_from_preset(args, SMALL if args.small else FULL)
    if min(args.chats, args.per_post, args.concurrency) < 1:
        parser.error("--chats, --per-post and --concurrency must be at least 1")
    if not args.grace > 0 or not 0 < args.sigterm_after <= 1:
        parser.error("--grace must be above 0 and --sigterm-after within (0, 1]")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print(f"{args.chats:,} chats, {args.per_post} messages a POST, {args.concurrency} POSTs at once "
          f"({'a connection each' if args.no_keep_alive else 'on keep-alive connections'}); "
          f"SIGTERM after {args.sigterm_after:.0%} of wave 2's POSTs are answered", flush=True)
    return run_on_postgres("shutdown-check", args.database_url, check, args, noun="check")


if __name__ == "__main__":
    sys.exit(main())
