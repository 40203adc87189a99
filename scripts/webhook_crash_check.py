"""The crash test of outbound webhooks: SIGKILL the service while customers write and events go out, restart it,
and check that every event committed to the outbox reached the receiver at least once.

    .venv/bin/python scripts/webhook_crash_check.py [--rate 50] [--phones 100] [--kill-after 5] [--after-restart 3]
    .venv/bin/python scripts/webhook_crash_check.py --database-url postgresql://postgres@127.0.0.1:5432/postgres

1. PostgreSQL as every script has it (harness.postgres: embedded, or a database of its own on --database-url,
   dropped at the end); a Scale workspace, an admin and a full-access key.
2. The de-duplicating receiver of scripts/bench_webhooks.py (harness.webhook_receiver) in a process of its own:
   it counts distinct correlation ids and duplicates, checks every X-Webhook-Signature against the secret the
   settings answered, and holds each answer --receiver-delay-ms, so that deliveries are in flight when the kill
   comes.
3. The service (`inbox-actors serve --port 0`, its own process); the webhook configured over HTTP for
   message_received and contact_created.
4. Customers write through the service's built-in simulator (`POST /simulator/customers/{phone}/messages`, as
   tests/e2e/chat_helpers.py::customer_writes does) at --rate messages a second over --phones numbers (the first
   message of each number also makes a contact_created). After --kill-after seconds the service gets SIGKILL
   mid-stream (its simulator dies with it: calls in flight fail and are counted, never retried).
5. The service is started again on the same database and port, so it takes the workspace's lease back at once
   (it resumes from the outbox: its listener wakes every workspace with pending events on connecting);
   customers write for --after-restart seconds more through its new simulator; then the script waits until no
   outbox row of the workspace is pending.
6. Every outbox row of the two events (`SELECT correlation_id FROM webhook_outbox WHERE workspace_id = $1 AND
   event IN (...)`) must have been received at least once; every message the simulator saw acknowledged (the
   service answered its webhook 2xx) must have its message_received row.

Prints `lost: N` and `duplicates: N`. Exit status 0 when nothing was lost, no acknowledged message lacks its event
and every signature checked out; 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import trio
import trio_asyncio
from harness.options import add_database_url, script_parser
from harness.postgres import bench_database
from harness.processes import service_child
from harness.run import run_on_postgres
from harness.simulator import customer_phones, random_start_phone
from harness.webhook_receiver import Receiver, configure_webhook, pending_count, running_receiver
from harness.workspace import Workspace, make_workspace

from persistence.database import Database

EVENTS = ["message_received", "contact_created"]
IN_FLIGHT = 64          # customer calls at once at most; beyond, the stream waits (and says so)


@dataclass
class Stream:
    """The customers' side: what the simulator answered."""

    sent: int = 0
    acknowledged: list[str] = field(default_factory=list)   # platform message ids the service took (2xx)
    failed: Counter = field(default_factory=Counter)
    late: int = 0           # calls started after their slot: the service (or this script) fell behind


async def write_messages(simulator_url: str, phone_number_id: str, phones: list[str], rate: float, first: int,
                         stream: Stream, *, stop: trio.Event, seconds: float = float("inf")) -> int:
    """One message every 1/rate s, the numbers in turn, until `seconds` pass or `stop` is set; then waits for
    the calls under way (after a kill they fail: counted, not retried). Returns the next message number."""
    limiter = trio.Semaphore(IN_FLIGHT)
    n = first

    async def one(client: httpx.AsyncClient, number: int) -> None:
        phone = phones[number % len(phones)]
        try:
            answer = await client.post(f"/simulator/customers/{phone}/messages", json={
                "phone_number_id": phone_number_id, "text": f"Crash check message {number}", "name": f"C{number}"})
            result = answer.json() if answer.status_code == 200 else {}
            if answer.status_code != 200:
                stream.failed[f"simulator_http_{answer.status_code}"] += 1
            elif result.get("delivered_to_service"):
                stream.acknowledged.append(result["message_id"])
            else:
                stream.failed[f"webhook_http_{result.get('service_status') or 'no_answer'}"] += 1
        except httpx.HTTPError as err:
            stream.failed[f"call_{type(err).__name__}"] += 1
        finally:
            limiter.release()

    async with httpx.AsyncClient(base_url=simulator_url, timeout=10,
                                 limits=httpx.Limits(max_connections=IN_FLIGHT, keepalive_expiry=2.0)) as client:
        async with trio.open_nursery() as nursery:
            started = trio.current_time()
            while not stop.is_set() and trio.current_time() - started < seconds:
                with trio.move_on_at(started + (n - first) / rate):
                    await stop.wait()
                if stop.is_set():
                    break
                if limiter.value == 0:
                    stream.late += 1
                await limiter.acquire()
                stream.sent += 1
                nursery.start_soon(one, client, n)
                n += 1
    return n


async def wait_settled(db: Database, ws: Workspace, receiver: Receiver, timeout: float) -> float | None:
    """Seconds until no row of the workspace is pending and the receiver got nothing new for a moment (a last
    delivery may still be on its way when its row is marked); None after `timeout`."""
    started = trio.current_time()
    last = -1
    while trio.current_time() - started < timeout:
        received = (await receiver.stats())["received"]
        if received == last and await pending_count(db, ws.workspace_id) == 0:
            return trio.current_time() - started
        last = received
        await trio.sleep(0.25)
    return None


async def outbox_ids(db: Database, workspace_id: int) -> dict[str, tuple[str, str]]:
    """correlation id -> (event, outcome) of every row of the two events."""
    return {row["correlation_id"]: (row["event"], row["outcome"]) for row in await db.fetch(
        "SELECT correlation_id, event, outcome FROM webhook_outbox"
        " WHERE workspace_id = $1 AND event = ANY($2::text[]) AND NOT test", workspace_id, EVENTS)}


async def unrecorded_messages(db: Database, workspace_id: int, acknowledged: list[str]) -> list[str]:
    """The acknowledged platform message ids that have no message_received row."""
    rows = await db.fetch(
        "SELECT m.id FROM unnest($2::text[]) AS m(id) WHERE NOT EXISTS (SELECT 1 FROM webhook_outbox o"
        " WHERE o.workspace_id = $1 AND o.event = 'message_received' AND o.data->>'message_id' = m.id)",
        workspace_id, acknowledged)
    return [row["id"] for row in rows]


async def check(args: argparse.Namespace, server_url: str, _postgres_pid: int | None, work_dir: Path) -> int:
    stream = Stream()
    phones = customer_phones(random_start_phone(), args.phones)
    async with trio_asyncio.open_loop():
        async with bench_database(server_url, f"inbox_bench_{os.getpid()}") as (url, db):
            ws = await make_workspace(db, "Webhook crash check")
            async with running_receiver(args.receiver_delay_ms / 1000) as receiver:
                async with service_child(url, work_dir, "service-1").running(120.0) as first:
                    print(f"service: {first.ready['url']} (pid {first.process.pid}); receiver {receiver.url} "
                          f"answering after {args.receiver_delay_ms:g} ms", flush=True)
                    secret = await configure_webhook(first.ready["url"], ws.key, f"{receiver.url}/hook", EVENTS)
                    await receiver.check_signatures(secret)
                    stop = trio.Event()
                    async with trio.open_nursery() as nursery:
                        async def first_stream() -> None:
                            nonlocal next_message
                            next_message = await write_messages(first.ready["platform"], ws.phone_number_id,
                                                                phones, args.rate, 0, stream, stop=stop)
                        next_message = 0
                        nursery.start_soon(first_stream)
                        await trio.sleep(args.kill_after)
                        first.process.kill()       # SIGKILL: no shutdown, no drain, mid-stream
                        await first.process.wait()
                        stop.set()
                    pending_at_kill = await pending_count(db, ws.workspace_id)
                    at_kill = await receiver.stats()
                    print(f"killed (SIGKILL) after {args.kill_after:g} s: {stream.sent:,} messages written, "
                          f"{len(stream.acknowledged):,} acknowledged; {at_kill['distinct']:,} events received, "
                          f"{pending_at_kill:,} rows still pending in the outbox", flush=True)
                # Restarted on the same address, as a service is: the node takes its workspaces' leases back at
                # once (docs/architecture.md), where a node on another address would wait for them to expire.
                port = int(first.ready["url"].rpartition(":")[2])
                async with service_child(url, work_dir, "service-2", port).running(120.0) as second:
                    print(f"restarted: {second.ready['url']} (pid {second.process.pid})", flush=True)
                    await write_messages(second.ready["platform"], ws.phone_number_id, phones, args.rate,
                                         next_message, stream, stop=trio.Event(), seconds=args.after_restart)
                    settled = await wait_settled(db, ws, receiver, args.settle_timeout)
                    ids = await outbox_ids(db, ws.workspace_id)
                    unrecorded = await unrecorded_messages(db, ws.workspace_id, stream.acknowledged)
                stats = await receiver.stats()
                received = await receiver.ids()
    return report(stream, ids, received, stats, unrecorded, settled)


def report(stream: Stream, ids: dict[str, tuple[str, str]], received: dict[str, int], stats: dict,
           unrecorded: list[str], settled: float | None) -> int:
    lost = sorted(ident for ident in ids if ident not in received)
    unknown = [ident for ident in received if ident not in ids]
    duplicates = sum(count - 1 for ident, count in received.items() if ident in ids)
    by_event = Counter(event for event, _ in ids.values())
    by_outcome = Counter(outcome for _, outcome in ids.values())
    print(f"customers: {stream.sent:,} messages written, {len(stream.acknowledged):,} acknowledged by the service"
          + (f", failed {dict(stream.failed)}" if stream.failed else "")
          + (f", {stream.late} started late" if stream.late else ""))
    print(f"outbox: {len(ids):,} rows ({dict(by_event)}), outcomes {dict(by_outcome)}; "
          + (f"nothing pending {settled:.1f} s after the stream ended" if settled is not None
             else "STILL PENDING at the end of the wait"))
    print(f"receiver: {stats['received']:,} POSTs, {stats['distinct']:,} distinct correlation ids, "
          f"{stats['bad_signatures']} bad signatures" + (f", {len(unknown)} ids not in the outbox" if unknown else ""))
    print(f"acknowledged messages without a message_received row: {len(unrecorded)}")
    print(f"lost: {len(lost)}")
    print(f"duplicates: {duplicates}")
    if lost:
        print(f"  first lost: {', '.join(lost[:10])}")
    return 1 if lost or unrecorded or stats["bad_signatures"] or settled is None else 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = script_parser(__doc__)
    parser.add_argument("--rate", type=float, default=50.0, help="customer messages a second (50)")
    parser.add_argument("--phones", type=int, default=100, help="customer numbers written from, in turn (100)")
    parser.add_argument("--kill-after", type=float, default=5.0, help="seconds of stream before SIGKILL (5)")
    parser.add_argument("--after-restart", type=float, default=3.0, help="seconds of stream after the restart (3)")
    parser.add_argument("--receiver-delay-ms", type=float, default=50.0,
                        help="the receiver holds each answer this long (50), so deliveries are in flight")
    parser.add_argument("--settle-timeout", type=float, default=60.0,
                        help="wait at most this long for no pending row after the stream (60 s)")
    add_database_url(parser)
    args = parser.parse_args(argv)
    if args.rate <= 0 or args.phones < 1 or args.kill_after <= 0 or args.after_restart < 0 \
            or args.receiver_delay_ms < 0:
        parser.error("--rate, --phones and --kill-after must be positive; --after-restart and "
                     "--receiver-delay-ms at least 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_on_postgres("webhook-crash", args.database_url, check, args, noun="check")


if __name__ == "__main__":
    sys.exit(main())
