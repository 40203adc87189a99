"""Three nodes on one PostgreSQL, and the one serving the workspace killed with SIGKILL (or, with --pause, stopped
with SIGSTOP past its lease and woken again) while sends are under way: how long until the workspace answers again on
the others, whether anything acknowledged was lost, sent twice or left without its webhook event, and with --pause
how many rows of the workspace the paused node wrote after another node had taken it over.

    .venv/bin/python scripts/cluster_check.py                   # 600 sends over 3 nodes, a kill after 2 s
    .venv/bin/python scripts/cluster_check.py --pause           # the same, the node paused instead
    .venv/bin/python scripts/cluster_check.py --sends 100 --kill-after 1 --database-url postgresql://...

1. PostgreSQL as every script has it (harness.postgres); a Scale workspace and a full-access key. The platform:
   `inbox-actors simulator` in a process of its own for the whole run (its record of what it accepted is the
   truth), as in scripts/retried_sends.py, posting statuses to the first node. A webhook receiver in a process of its
   own, subscribed to `message_sent`.
2. Three nodes: `inbox-actors serve` each, on ports of their own, with one cluster secret. The third takes the
   workspace (the first call goes there), so the first and second relay every request for it to the third.
3. The clients: --sends template sends, all started at once on --connections connections, each sent to the next
   node that is still up at every try; every other one carries an Idempotency-Key. A client retries after any
   error, as in scripts/retried_sends.py, until it gets a verdict.
4. After --kill-after seconds the third node gets SIGKILL and is not started again. From then on the first node is
   asked `GET /api/reporting/v1/whoami` every 0.1 s: the time until it answers 200 is how long the workspace was
   out of service (its lease expires at most 8 s after the dead node last renewed it; one of the others then
   takes it). Bound: 10 s (OUT_OF_SERVICE_BOUND).
   With --pause the third node gets SIGSTOP instead. Once another node has taken the workspace over (its lease
   row changed hands: harness/write_audit.py's triggers record it, and every row written for the workspace with the
   name of the node whose connection wrote it) and --pause-past seconds more have passed, it gets SIGCONT and serves
   again: whatever it had under way when it stopped now meets the lease fence. It must have written no row of the
   workspace after the takeover (bound: 0). Its workspace answers again within 12 s (PAUSED_OUT_OF_SERVICE_BOUND):
   the lease runs out as after a kill, and then the node taking over waits up to 1 s for the transactions the
   paused node left open on the lease row before it ends their sessions (the fence-out). The key activity its
   requests saw is its own and not counted (write_audit.NODE_OWN_TABLES).
5. Once the clients are done: every send the platform accepted must be in the database (as in crash_sends), and
   every `message_sent` event of the outbox must reach the receiver (the node that took the workspace delivers
   what the dead one left pending).

Prints the time until the workspace answered again, the crash check's counts (acknowledged sends lost, sends
delivered twice for one key), the webhook events lost, and with --pause the paused node's writes before and after
the takeover. Exit status 0 when the workspace answered within its bound and nothing was lost, sent twice or
written after the takeover; 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import signal
import sys
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import trio
import trio_asyncio

from harness import retried_sends, write_audit
from harness.options import add_database_url, script_parser
from harness.postgres import bench_database
from harness.processes import Child, free_ports, service_child
from harness.run import run_check
from harness.simulator import STATUS_RETRIES, SeparateSimulator, platform_record
from harness.webhook_receiver import configure_webhook, pending_count, running_receiver
from harness.workspace import Workspace, make_workspace
from persistence.database import Database

NODES = 3
OUT_OF_SERVICE_BOUND = 10.0
# A lease's 8 s, the fence-out's 1 s, a take and a client's retry: measured 7.6 to 10.6 s on the 2-core machine,
# the highest while the test suite shared it.
PAUSED_OUT_OF_SERVICE_BOUND = 12.0
# The calls that find when the workspace answers again: at most PROBE_TIMEOUT / PROBE_EVERY (4) in flight at once.
PROBE_EVERY = 0.5
PROBE_TIMEOUT = 2.0
WHOAMI = "/api/reporting/v1/whoami"


@dataclass
class Cluster:
    """The nodes and which are up; what crash_sends' clients read of a service (`up`, `started_at`)."""

    nodes: list[Child]
    clients: list[httpx.AsyncClient] = field(default_factory=list)
    dead: set[int] = field(default_factory=set)
    up: trio.Event = field(default_factory=trio.Event)
    started_at: float = 0.0
    turn: int = 0
    refusals: list[str] = field(default_factory=list)      # the first answers 4xx other than 409 and 429

    async def post(self, path: str, **request) -> httpx.Response:
        """The request on the next node still up (crash_sends' client calls this as it calls an httpx client)."""
        live = [n for n in range(len(self.clients)) if n not in self.dead]
        self.turn += 1
        answer = await self.clients[live[self.turn % len(live)]].post(path, **request)
        if 400 <= answer.status_code < 500 and answer.status_code not in (409, 429) and len(self.refusals) < 5:
            self.refusals.append(f"{answer.status_code} {answer.text[:200]}")
        return answer


async def out_of_service(client: httpx.AsyncClient, key: str, since: float) -> float:
    """Seconds from `since` until the node answers a call of the workspace 200. A call is started every
    PROBE_EVERY seconds, each given up after PROBE_TIMEOUT (one relayed to a paused node would wait for the relay's
    own timeout), so one call stuck on the stopped node does not hide, for its whole timeout, the answer a later
    call gets: the figure is late by PROBE_EVERY at most."""
    answered_at: float | None = None

    async with trio.open_nursery() as probes:
        async def probe() -> None:
            nonlocal answered_at
            try:
                answer = await client.get(WHOAMI, headers={"Authorization": f"Bearer {key}"}, timeout=PROBE_TIMEOUT)
            except httpx.HTTPError:
                return
            if answer.status_code == 200 and answered_at is None:
                answered_at = trio.current_time()
                probes.cancel_scope.cancel()

        while True:
            probes.start_soon(probe)
            await trio.sleep(PROBE_EVERY)
    assert answered_at is not None
    return answered_at - since


@dataclass
class Pause:
    """--pause: the node SIGSTOPped past its lease, SIGCONTed once another node has taken the workspace over, and
    what it wrote for the workspace on either side of that takeover (harness/write_audit.py)."""

    db: Database
    node_name: str
    past: float
    takeover: write_audit.Takeover | None = None
    writes: write_audit.Writes | None = None
    new_owner_writes: int = 0

    def stop(self, node: Child) -> None:
        node.process.send_signal(signal.SIGSTOP)

    async def wake(self, node: Child, workspace_id: int) -> None:
        """Once the workspace has passed to another node, and `past` seconds more, SIGCONT."""
        while (taken := await write_audit.takeover(self.db, workspace_id, self.node_name)) is None:
            await trio.sleep(0.1)
        self.takeover = taken
        await trio.sleep(self.past)
        node.process.send_signal(signal.SIGCONT)
        print(f"the workspace passed to {taken.node} (epoch {taken.epoch}); SIGCONT {self.past:g} s later",
              flush=True)

    async def measure(self, workspace_id: int) -> None:
        assert self.takeover is not None, "the workspace was never taken over"
        self.writes = await write_audit.writes_around(self.db, workspace_id, f"inbox-actors {self.node_name}",
                                                      self.takeover.at)
        self.new_owner_writes = (await write_audit.writes_around(
            self.db, workspace_id, f"inbox-actors {self.takeover.node}", self.takeover.at)).after

    def report(self) -> int:
        assert self.writes is not None
        where = f" (in {', '.join(self.writes.tables_after)})" if self.writes.after else ""
        print(f"rows of the workspace the paused node wrote: {self.writes.before:,} before the takeover, "
              f"{self.writes.after} after it{where} (bound 0); the node that took over wrote "
              f"{self.new_owner_writes:,} after it")
        return 1 if self.writes.after or not self.writes.before else 0


async def webhook_events(db: Database, workspace_id: int) -> set[str]:
    return {row["correlation_id"] for row in await db.fetch(
        "SELECT correlation_id FROM webhook_outbox WHERE workspace_id = $1 AND event = 'message_sent' AND NOT test",
        workspace_id)}


async def wait_delivered(db: Database, ws: Workspace, receiver, timeout: float) -> float | None:
    """Seconds until no event of the workspace is pending and the receiver has them all; None after `timeout`."""
    started = trio.current_time()
    while trio.current_time() - started < timeout:
        if await pending_count(db, ws.workspace_id) == 0:
            received = set(await receiver.ids())
            if await webhook_events(db, ws.workspace_id) <= received:
                return trio.current_time() - started
        await trio.sleep(0.25)
    return None


async def run(args: argparse.Namespace, server_url: str, _postgres_pid: int | None, work_dir: Path) -> int:
    platform = SeparateSimulator.on_free_ports()
    simulator = Child("simulator", [
        *platform.command(from_environment=False), "--template", f"{retried_sends.TEMPLATE}:en:1",
        "--throughput", "1000", "--history", str(args.sends * 4), "--webhook-retry-delays",
        STATUS_RETRIES], dict(os.environ), work_dir / "simulator.log")
    cluster_env = {**platform.service_env(), "INBOX_CLUSTER_SECRET": secrets.token_urlsafe(24),
                   "WHATSAPP_SENDS_PER_SECOND": "1000"}
    ports = [platform.service_port, *free_ports(NODES - 1)]
    # Named by their addresses, so each node's PostgreSQL connections carry its name (Settings.connection_name).
    names = [f"http://127.0.0.1:{port}" for port in ports]
    async with trio_asyncio.open_loop():
        async with bench_database(server_url, f"inbox_bench_cluster_{os.getpid()}") as (url, db):
            ws = await make_workspace(db, "Cluster check")
            if args.pause:
                await write_audit.install(db)
            async with simulator.running(retried_sends.STARTUP_SECONDS), \
                    running_receiver() as receiver, AsyncExitStack() as stack:
                nodes = [await stack.enter_async_context(
                    service_child(url, work_dir, f"node-{n + 1}", port,
                                  {**cluster_env, "INBOX_NODE_URL": name}).running(
                        retried_sends.STARTUP_SECONDS)) for n, (port, name) in enumerate(zip(ports, names))]
                cluster = Cluster(nodes)
                for node in nodes:
                    cluster.clients.append(await stack.enter_async_context(httpx.AsyncClient(
                        base_url=node.ready["url"], timeout=httpx.Timeout(retried_sends.REQUEST_TIMEOUT, pool=None),
                        limits=httpx.Limits(max_connections=args.connections))))
                victim = NODES - 1
                await out_of_service(cluster.clients[victim], ws.key, 0.0)       # the third node takes it
                holder = await db.fetchval("SELECT node_id FROM workspace_leases WHERE workspace_id = $1",
                                           ws.workspace_id)
                print(f"nodes: {', '.join(node.ready['url'] for node in nodes)}; the workspace is held by {holder};"
                      f" platform {platform.url}", flush=True)
                secret = await configure_webhook(nodes[0].ready["url"], ws.key, f"{receiver.url}/hook",
                                                 ["message_sent"])
                await receiver.check_signatures(secret)
                cluster.up.set()
                cluster.started_at = trio.current_time()
                fault = Pause(db, names[victim], args.pause_past) if args.pause else None
                sends, out_for, seconds = await drive(args, cluster, ws, victim, fault)
                settled = await retried_sends.wait_settled(db, ws, platform.url, args.settle_timeout)
                delivered = await wait_delivered(db, ws, receiver, args.settle_timeout)
                if fault is not None:
                    await fault.measure(ws.workspace_id)
                record = await platform_record(platform.url, ws.phone_number_id)
                rows = await retried_sends.outbound_rows(db, ws.workspace_id)
                events = await webhook_events(db, ws.workspace_id)
                received = await receiver.ids()
    status = retried_sends.report(args.chats, sends, [out_for[0]], seconds, settled, record, rows,
                                  "SIGSTOP" if args.pause else "SIGKILL")
    lost_events = sorted(events - set(received))
    bound = PAUSED_OUT_OF_SERVICE_BOUND if args.pause else OUT_OF_SERVICE_BOUND
    print(f"the workspace answered again {out_for[1]:.2f} s after the {'SIGSTOP' if args.pause else 'SIGKILL'}"
          f" (bound {bound:g} s)")
    if fault is not None:
        status |= fault.report()
    print(f"webhook events (message_sent): {len(events):,} in the outbox, {len(events) - len(lost_events):,} "
          + ("received" if delivered is not None else "received by the end of the wait"))
    print(f"webhook events lost: {len(lost_events)}")
    if cluster.refusals:
        print(f"first refusals (4xx but 409 and 429): {'; '.join(cluster.refusals)}")
    return 1 if status or lost_events or out_for[1] > bound else 0


async def drive(args: argparse.Namespace, cluster: Cluster, ws: Workspace, victim: int,
                pause: Pause | None) -> tuple[list[retried_sends.Send], tuple[float, float], float]:
    run_tag = secrets.token_hex(3)
    sends = [retried_sends.Send(n, f"cluster {run_tag} #{n}", f"cluster-{run_tag}-{n}" if n % 2 == 0 else None)
             for n in range(args.sends)]
    first = retried_sends.PHONE_BASE + random.randrange(1000) * 10**6
    phones = [str(first + i * 10 + 1) for i in range(args.chats)]
    started = trio.current_time()
    out_for: list[float] = []
    async with trio.open_nursery() as nursery:
        async def stop() -> None:
            await trio.sleep(args.kill_after)
            node = cluster.nodes[victim]
            stopped_at = trio.current_time()
            if pause is None:
                node.process.kill()
            else:
                pause.stop(node)
            cluster.dead.add(victim)
            acknowledged = sum(1 for send in sends if send.final == "acknowledged")
            print(f"{'SIGSTOP' if pause else 'SIGKILL'} of node {victim + 1} (pid {node.process.pid}) "
                  f"{stopped_at - started:.2f} s in, {acknowledged:,} of {len(sends):,} sends acknowledged",
                  flush=True)
            out_for.extend([stopped_at - cluster.started_at, await out_of_service(cluster.clients[0], ws.key,
                                                                                  stopped_at)])
            if pause is not None:
                await pause.wake(node, ws.workspace_id)
                cluster.dead.discard(victim)             # it serves again, relaying to the workspace's new node

        nursery.start_soon(stop)
        connections = trio.CapacityLimiter(args.connections)
        async with trio.open_nursery() as clients:
            for send in sends:
                clients.start_soon(retried_sends.client, cluster, connections, cluster, send,
                                   phones[send.n % len(phones)], ws.key, args.doubt_timeout,
                                   started + args.deadline)
    return sends, (out_for[0], out_for[1]), trio.current_time() - started


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = script_parser(__doc__)
    parser.add_argument("--sends", type=int, default=600, help="logical sends, all started at once (600)")
    parser.add_argument("--chats", type=int, default=100, help="numbers sent to, in turn (100)")
    parser.add_argument("--kill-after", type=float, default=2.0,
                        help="seconds of sends before the SIGKILL (or SIGSTOP) (2)")
    parser.add_argument("--pause", action="store_true",
                        help="SIGSTOP the node instead, and SIGCONT it once another node has taken the workspace")
    parser.add_argument("--pause-past", type=float, default=1.0,
                        help="--pause: seconds between the takeover and the SIGCONT (1)")
    parser.add_argument("--connections", type=int, default=24, help="client connections at once (24)")
    parser.add_argument("--doubt-timeout", type=float, default=20.0,
                        help="a client stops retrying a key in doubt this long after the start (20 s)")
    parser.add_argument("--deadline", type=float, default=300.0, help="clients give up after this (300 s)")
    parser.add_argument("--settle-timeout", type=float, default=90.0,
                        help="wait at most this long for the sends and the webhook events to settle (90 s)")
    parser.add_argument("--seed", type=int, help="random seed for the numbers")
    add_database_url(parser)
    args = parser.parse_args(argv)
    if args.sends < 1 or args.chats < 1 or args.connections < 1 or args.kill_after <= 0 \
            or args.doubt_timeout <= 0 or args.deadline <= 0 or args.settle_timeout <= 0:
        parser.error("--sends, --chats and --connections must be at least 1, and the times positive")
    return args


def main(argv: list[str] | None = None) -> int:
    return run_check("cluster", parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
