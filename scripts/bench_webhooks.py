"""Outbound webhook delivery, measured: a backlog drained from the outbox, and commit-to-delivery latency under
a steady stream, against a fast local receiver. Prints figures; targets missed are reported, not failures.

    .venv/bin/python scripts/bench_webhooks.py                  # 100,000 rows; 10 s at 500/s and at 1,000/s
    .venv/bin/python scripts/bench_webhooks.py --small          # 5,000 rows; 2 s runs: a smoke run
    .venv/bin/python scripts/bench_webhooks.py --database-url postgresql://postgres@127.0.0.1:5432/postgres

Processes, each of its own so that none spends another's CPU; all are stopped at the end (Ctrl-C included):
- PostgreSQL: the embedded server (durability off) in a temporary directory, or the server of --database-url
  (its role needs CREATEDB), as every script has it (harness.postgres): a database `inbox_bench_<pid>` made
  there, migrated, dropped at the end. One Scale workspace, an admin and a full-access key are made in it directly.
- The receiver (multiprocessing, spawned): raw trio sockets and h11, every POST answered 200 `{}` with
  keep-alive. It keeps every correlation id it got (distinct and duplicate counts) and, for events whose data
  carries `committed_at`, the delay from that to the moment the request had fully arrived.
- The service: `inbox-actors serve --port 0` on that database with WEBHOOK_ALLOWED_NETWORKS=127.0.0.0/8,
  started and stopped as every script does it (harness.processes); CPU time and RSS read from /proc/<pid>.

Phases, in one run:
1. Baseline: the receiver's capacity, from a bare client in this process (one h11 keep-alive loop on each of
   --connections connections, as many as the service's default webhook concurrency) posting requests shaped
   like the service's (the same headers, a signed envelope of the same size). The service's drain rate is
   printed as a share of it: compare such ratios across machines and runs, not the raw figures.
2. Backlog drain: the webhook is configured first (PUT /api/webhook/outbound/config with the Scale key, event
   message_received) while the outbox is empty; then --rows pending rows are appended in ONE transaction
   (INSERT ... SELECT generate_series, spread over --phones chats so that per-chat lanes matter, data shaped as
   the conversation actor writes it). Configure first, because the endpoint actor skips the pending rows of a
   workspace with no deliverable endpoint instead of keeping them. The service runs during the insert, so its
   endpoint actor is woken by that commit's NOTIFY exactly as by a burst of real changes; the clock starts at
   COMMIT and stops at the receiver's last arrival (and, separately, when no row is pending any more).
   Printed: events/s, service CPU seconds per 1,000 events, service RSS before and its peak during the drain
   (sampled every 0.1 s: the outbox, not memory, must hold the backlog), PostgreSQL's CPU when embedded.
3. Steady load, at each of --rates for --steady-seconds: a transaction of 10 rows every 10/rate seconds (500/s:
   every 20 ms), each one auto-committed INSERT. Each row's data carries `committed_at`: the server's
   clock_timestamp() while the INSERT writes it, i.e. just before the COMMIT that ends that statement (with
   durability off the commit itself takes microseconds). `created_at` (now(): the transaction's start) or a
   client time taken before sending would add the statement's round trip and execution, a few milliseconds
   here. The receiver takes its arrival time - committed_at (one machine, one clock): p50/p99/max.

Exit status 0 when every row appended was received at least once and marked delivered, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import h11
import msgspec
import trio
import trio_asyncio
from harness.figures import percentiles
from harness.meters import describe_cpu, effective_cores, process_cpu_seconds, rss_bytes, tree_cpu_seconds
from harness.options import add_database_url, script_parser
from harness.postgres import bench_database
from harness.processes import Child, service_child
from harness.run import run_on_postgres
from harness.webhook_receiver import Receiver, configure_webhook, pending_count, running_receiver
from harness.workspace import Workspace, make_workspace

from inbox_actors.webhooks.signing import envelope_body, signed_headers
from persistence.database import Database

FULL = {"rows": 100_000, "steady_seconds": 10.0}
SMALL = {"rows": 5_000, "steady_seconds": 2.0}
TARGET_DRAIN_PER_SECOND = 2_000
TARGET_P99_MS = 100.0
ROWS_PER_TRANSACTION = 10
PHONE_BASE = 15_550_000_000

# -- CPU over a phase ---------------------------------------------------------------------------------------


@dataclass
class CpuMeter:
    """CPU seconds of the service, the receiver and (embedded) PostgreSQL over a phase."""

    service: Child
    receiver: Receiver
    postgres_pid: int | None

    def read(self) -> dict[str, float | None]:
        return {"service": process_cpu_seconds(self.service.process.pid), "receiver": self.receiver.cpu_seconds(),
                "postgres": tree_cpu_seconds(self.postgres_pid) if self.postgres_pid else None}

    @staticmethod
    def spent(before: dict, after: dict) -> dict[str, float | None]:
        return {name: None if before[name] is None or after[name] is None else after[name] - before[name]
                for name in before}


# -- the outbox ---------------------------------------------------------------------------------------------


async def outcomes(db: Database, workspace_id: int) -> dict[str, int]:
    return {row["outcome"]: row["count"] for row in await db.fetch(
        "SELECT outcome, count(*) FROM webhook_outbox WHERE workspace_id = $1 AND NOT test GROUP BY outcome",
        workspace_id)}


# Rows as the conversation actor writes a customer's message (inbox_actors/conversations/events.py), with
# `committed_at` (the server's clock as the row is written) when $6 is true. Row n is chat n % phones; its
# correlation id evt_bench_<tag><n>_<hex>.
APPEND_ROWS = """
INSERT INTO webhook_outbox (workspace_id, event, correlation_id, actor, data)
SELECT $1, 'message_received', 'evt_bench_' || $2 || n || '_' || substr(md5($2 || n), 1, 12), 'customer',
       jsonb_build_object(
           'phone', ($5 + n % $4)::text, 'id', n, 'message_id', 'wamid.bench' || $2 || n,
           'sender_type', 'customer', 'actor', NULL, 'sender_label', NULL, 'type', 'text',
           'text', 'Hi, is the order #' || (100000 + n) || ' on its way? It was due on Monday.',
           'template_name', NULL, 'media_url', NULL, 'status', 'received', 'sent_at', stamp, 'at', stamp)
       || CASE WHEN $6::boolean THEN jsonb_build_object('committed_at', extract(epoch FROM clock_timestamp()))
               ELSE '{}'::jsonb END
FROM generate_series($3::bigint, $3::bigint + $7 - 1) AS n,
     LATERAL (SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')) AS t(stamp)
"""


async def append_rows(db: Database, workspace_id: int, tag: str, first: int, count: int, phones: int,
                      timed: bool = False) -> None:
    await db.execute(APPEND_ROWS, workspace_id, tag, first, phones, PHONE_BASE, timed, count)


# -- the phases ----------------------------------------------------------------------------------------------


@dataclass
class Figures:
    baseline_per_second: float = 0.0
    drain_per_second: float = 0.0
    lost: int = 0         # appended, never received
    unmarked: int = 0     # not marked delivered in the outbox (the backlog; the steady runs are checked by pending)


async def baseline(receiver: Receiver, seconds: float, connections: int) -> float:
    """Requests/s a bare h11 keep-alive client gets from the receiver; printed with both sides' CPU."""
    secret = "whsec_" + "A" * 43 + "="
    requests = []
    for n in range(1024):
        ident = f"evt_baseline_{n}_{os.urandom(6).hex()}"
        body = envelope_body(event="message_received", sent_at=datetime.now(timezone.utc), correlation_id=ident,
                             actor="customer", data_json=msgspec.json.encode({
                                 "phone": str(PHONE_BASE + n), "id": n, "message_id": f"wamid.baseline{n}",
                                 "sender_type": "customer", "actor": None, "sender_label": None, "type": "text",
                                 "text": f"Hi, is the order #{100000 + n} on its way? It was due on Monday.",
                                 "template_name": None, "media_url": None, "status": "received",
                                 "sent_at": "2025-01-01T00:00:00.000000Z", "at": "2025-01-01T00:00:00.000000Z",
                             }).decode())
        headers = signed_headers(secret=secret, body=body, event="message_received", correlation_id=ident,
                                 timestamp=int(time.time()))
        requests.append((h11.Request(method="POST", target="/hook", headers=[
            (b"Host", f"127.0.0.1:{receiver.port}".encode()), (b"Content-Type", b"application/json"),
            (b"Content-Length", str(len(body)).encode()), (b"User-Agent", b"bench-baseline"), *headers]), body))
    done = 0

    async def loop(offset: int, deadline: float) -> None:
        nonlocal done
        stream = await trio.open_tcp_stream("127.0.0.1", receiver.port)
        protocol = h11.Connection(h11.CLIENT)
        n = offset
        try:
            while trio.current_time() < deadline:
                request, body = requests[n % len(requests)]
                n += connections
                await stream.send_all(protocol.send(request) + protocol.send(h11.Data(data=body))
                                      + protocol.send(h11.EndOfMessage()))
                while True:
                    event = protocol.next_event()
                    if event is h11.NEED_DATA:
                        protocol.receive_data(await stream.receive_some(65536))
                    elif type(event) is h11.EndOfMessage:
                        break
                protocol.start_next_cycle()
                done += 1
        finally:
            await stream.aclose()

    receiver_before, client_before = receiver.cpu_seconds(), time.process_time()
    started = trio.current_time()
    async with trio.open_nursery() as nursery:
        for offset in range(connections):
            nursery.start_soon(loop, offset, started + seconds)
    elapsed = trio.current_time() - started
    rate = done / elapsed
    receiver_cpu = (receiver.cpu_seconds() or 0.0) - (receiver_before or 0.0)
    print(f"baseline: a bare h11 client -> the receiver: {rate:,.0f} requests/s on {connections} keep-alive "
          f"connections ({done:,} in {elapsed:.1f} s; receiver CPU {receiver_cpu / elapsed:.0%} of a core, client "
          f"{(time.process_time() - client_before) / elapsed:.0%})", flush=True)
    stats = await receiver.stats()
    if stats["received"] != done:
        print(f"  receiver counted {stats['received']:,} requests, the client {done:,}")
    await receiver.reset()
    return rate


async def drain(db: Database, ws: Workspace, receiver: Receiver, meter: CpuMeter, rows: int, phones: int,
                figures: Figures) -> None:
    pid = meter.service.process.pid
    rss_before = rss_bytes(pid) or 0
    started = time.perf_counter()
    await append_rows(db, ws.workspace_id, "", 1, rows, phones)
    committed, committed_wall = time.perf_counter(), time.time()
    cpu_before = meter.read()
    print(f"backlog: {rows:,} pending rows over {min(rows, phones):,} chats appended in one transaction in "
          f"{committed - started:.1f} s; service RSS {rss_before / 2**20:.1f} MiB before", flush=True)
    rss_peak, received, next_report = rss_before, 0, committed + 5.0
    deadline = committed + max(120.0, rows / 200)
    cpu_after = None
    while time.perf_counter() < deadline:
        await trio.sleep(0.1)
        rss_peak = max(rss_peak, rss_bytes(pid) or 0)
        stats = await receiver.stats()
        received = stats["distinct"]
        if received >= rows and cpu_after is None:
            cpu_after = meter.read()
        if received >= rows and await pending_count(db, ws.workspace_id) == 0:
            break
        if time.perf_counter() >= next_report:
            next_report += 5.0
            print(f"  ... {received:,} received after {time.perf_counter() - committed:.0f} s, service RSS "
                  f"{(rss_bytes(pid) or 0) / 2**20:.1f} MiB", flush=True)
    all_marked = time.perf_counter() - committed
    cpu_after = cpu_after or meter.read()
    stats = await receiver.stats()
    by_outcome = await outcomes(db, ws.workspace_id)
    last_at = stats["last_at"] or committed_wall
    seconds = max(1e-9, last_at - committed_wall)
    figures.drain_per_second = stats["distinct"] / seconds
    figures.lost += rows - stats["distinct"]
    spent = CpuMeter.spent(cpu_before, cpu_after)
    print(f"backlog drain: {stats['distinct']:,} of {rows:,} received in {seconds:.2f} s after COMMIT: "
          f"{figures.drain_per_second:,.0f} events/s (target {TARGET_DRAIN_PER_SECOND:,}: "
          f"{'met' if figures.drain_per_second >= TARGET_DRAIN_PER_SECOND else 'MISSED'}); "
          f"no row pending after {all_marked:.2f} s")
    print(f"  receiver: {stats['received']:,} POSTs on {stats['connections']:,} connections, {stats['distinct']:,} "
          f"distinct correlation ids, {stats['duplicates']:,} duplicates; outbox outcomes {by_outcome}")
    if spent["service"] is not None and stats["distinct"]:
        print(f"  service CPU {spent['service'] / stats['distinct'] * 1000:.3f} s per 1,000 events; "
              f"{describe_cpu(spent, seconds)}")
    print(f"  service RSS: {rss_before / 2**20:.1f} MiB before, peak {rss_peak / 2**20:.1f} MiB during the drain "
          f"({(rss_peak - rss_before) / 2**20:+.1f} MiB), {(rss_bytes(pid) or 0) / 2**20:.1f} MiB at its end",
          flush=True)
    if figures.baseline_per_second:
        ratio = figures.drain_per_second / figures.baseline_per_second
        print(f"  drain rate / receiver capacity (baseline): {ratio:.2f}")
    figures.unmarked += rows - by_outcome.get("delivered", 0)
    await receiver.reset()


async def steady(db: Database, ws: Workspace, receiver: Receiver, meter: CpuMeter, rate: int, seconds: float,
                 phones: int, first: int, figures: Figures) -> int:
    """Rows at `rate` for `seconds`; returns the next free row number."""
    interval = ROWS_PER_TRANSACTION / rate
    transactions = max(1, round(seconds * rate / ROWS_PER_TRANSACTION))
    rows = transactions * ROWS_PER_TRANSACTION
    tag = f"s{rate}_"
    inserts: list[float] = []
    cpu_before = meter.read()
    started = trio.current_time()
    for n in range(transactions):
        await trio.sleep_until(started + n * interval)
        sent = time.perf_counter()
        await append_rows(db, ws.workspace_id, tag, first + n * ROWS_PER_TRANSACTION, ROWS_PER_TRANSACTION,
                          phones, timed=True)
        inserts.append(time.perf_counter() - sent)
    elapsed = trio.current_time() - started
    deadline = trio.current_time() + 60
    while trio.current_time() < deadline:
        stats = await receiver.stats()
        if stats["distinct"] >= rows and await pending_count(db, ws.workspace_id) == 0:
            break
        await trio.sleep(0.05)
    spent = CpuMeter.spent(cpu_before, meter.read())
    stats = await receiver.stats()
    figures.lost += rows - stats["distinct"]
    delays = percentiles(await receiver.delays())
    insert = percentiles(inserts)
    verdict = "no deliveries" if not delays["count"] else \
        f"target p99 < {TARGET_P99_MS:g} ms {'met' if delays['p99'] < TARGET_P99_MS else 'MISSED'}"
    print(f"steady {rate:,}/s: {rows:,} rows in {elapsed:.1f} s ({rows / elapsed:,.0f}/s achieved, "
          f"{ROWS_PER_TRANSACTION} a transaction; INSERT p50 {insert['p50']:.1f} ms, p99 {insert['p99']:.1f} ms); "
          f"delivered {stats['distinct']:,} (duplicates {stats['duplicates']:,}; {stats['connections']:,} connections)")
    if delays["count"]:
        print(f"  commit-to-delivery p50 {delays['p50']:.1f} ms, p99 {delays['p99']:.1f} ms, max "
              f"{delays['max']:.1f} ms (n={delays['count']:,}); {verdict}")
    print(f"  CPU: {describe_cpu(spent, elapsed)}", flush=True)
    await receiver.reset()
    return first + rows


# -- the run -------------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = script_parser(__doc__)
    parser.add_argument("--small", action="store_true",
                        help=f"{SMALL['rows']:,} rows, {SMALL['steady_seconds']:g} s steady runs")
    parser.add_argument("--rows", type=int, help=f"backlog rows (default {FULL['rows']:,})")
    parser.add_argument("--phones", type=int, default=10_000, help="chats the rows are spread over (10,000)")
    parser.add_argument("--rates", default="500,1000", help="steady rates, rows/s, comma-separated (500,1000)")
    parser.add_argument("--steady-seconds", type=float, help=f"each steady run (default {FULL['steady_seconds']:g})")
    parser.add_argument("--baseline-seconds", type=float, default=3.0, help="the bare client's run (3)")
    parser.add_argument("--connections", type=int, default=64, help="the bare client's connections (64)")
    add_database_url(parser)
    args = parser.parse_args(argv)
    preset = SMALL if args.small else FULL
    args.rows = args.rows or preset["rows"]
    args.steady_seconds = args.steady_seconds or preset["steady_seconds"]
    try:
        args.rates = [int(rate) for rate in args.rates.split(",") if rate.strip()]
    except ValueError:
        parser.error("--rates takes whole numbers, e.g. 500,1000")
    if args.rows < 1 or args.phones < 1 or args.connections < 1 or any(rate < 1 for rate in args.rates):
        parser.error("--rows, --phones, --connections and every rate must be at least 1")
    return args


async def run(args: argparse.Namespace, server_url: str, postgres_pid: int | None, work_dir: Path) -> int:
    figures = Figures()
    async with trio_asyncio.open_loop():
        async with bench_database(server_url, f"inbox_bench_{os.getpid()}") as (url, db):
            ws = await make_workspace(db, "Webhook bench")
            async with running_receiver() as receiver:
                print(f"receiver: {receiver.url} (pid {receiver.process.pid})", flush=True)
                figures.baseline_per_second = await baseline(receiver, args.baseline_seconds, args.connections)
                async with service_child(url, work_dir).running(120.0) as service:
                    print(f"service: {service.ready['url']} (pid {service.process.pid})", flush=True)
                    await configure_webhook(service.ready["url"], ws.key, f"{receiver.url}/hook",
                                            ["message_received"])
                    meter = CpuMeter(service, receiver, postgres_pid)
                    await drain(db, ws, receiver, meter, args.rows, args.phones, figures)
                    first = args.rows + 1
                    for rate in args.rates:
                        first = await steady(db, ws, receiver, meter, rate, args.steady_seconds, args.phones,
                                             first, figures)
    print(f"lost: {figures.lost}" + (f"; {figures.unmarked:,} backlog rows not marked delivered"
                                     if figures.unmarked else ""))
    return 1 if figures.lost or figures.unmarked else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print(f"machine: {os.cpu_count()} CPUs; all busy at once they do the work of {effective_cores():.1f} "
          "(spin loops, against one alone)", flush=True)
    return run_on_postgres("bench-webhooks", args.database_url, run, args, noun="bench")


if __name__ == "__main__":
    sys.exit(main())
