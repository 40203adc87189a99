"""Three nodes on one PostgreSQL, and the one serving the workspace killed with SIGKILL (or, with --pause, stopped
with SIGSTOP past its lease and woken again) while sends are under way: how long until the workspace answers again on
the others, whether anything acknowledged was lost, sent twice or left without its webhook event, and with --pause
how many rows of the workspace the paused node wrote after another node had taken it over. With --postgres-restart,
PostgreSQL itself is restarted under sends and customers' messages: how long after its return a send is answered
again, and how many answers were a 5xx without Retry-After. With --skewed-clock, the third node's clock runs 25 h
ahead: whether its sweeps forget any workspace's Idempotency-Keys, so that a retried keyed send goes out again.

    .venv/bin/python scripts/cluster_check.py                   # 600 sends over 3 nodes, a kill after 2 s
    .venv/bin/python scripts/cluster_check.py --pause           # the same, the node paused instead
    .venv/bin/python scripts/cluster_check.py --postgres-restart    # PostgreSQL down 5 s under traffic
    .venv/bin/python scripts/cluster_check.py --broadcast --restart-after 1     # a broadcast across a failover
    .venv/bin/python scripts/cluster_check.py --skewed-clock [--skew-hours 25]  # a node's clock 25 h ahead
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
   asked `GET /api/reporting/v1/whoami` every 0.5 s: the time until it answers 200 is how long the workspace was
   out of service (the others see the dead node's liveness lock freed within a second and take its workspace at
   once, rather than when its lease expires, 8 s after its last renewal). Bound: 3 s (OUT_OF_SERVICE_BOUND). Also
   printed: the time from the kill to the first send started after it that a node answered 200.
   With --pause the third node gets SIGSTOP instead. Once another node has taken the workspace over (its lease
   row changed hands: harness/write_audit.py's triggers record it, and every row written for the workspace with the
   name of the node whose connection wrote it) and --pause-past seconds more have passed, it gets SIGCONT and serves
   again: whatever it had under way when it stopped now meets the lease fence. It must have written no row of the
   workspace after the takeover (bound: 0). Its workspace answers again within 12 s (PAUSED_OUT_OF_SERVICE_BOUND):
   a paused node keeps its sessions, and so its liveness lock, so its lease has to run out (8 s after its last
   renewal, not the second a kill takes), and then the node taking over waits up to 1 s for the transactions the
   paused node left open, holding the workspace's fence lock, before it ends their sessions (the fence-out). The key
   activity its requests saw is its own and not counted (write_audit.NODE_OWN_TABLES).
5. Once the clients are done: every send the platform accepted must be in the database (as in crash_sends), and
   every `message_sent` event of the outbox must reach the receiver (the node that took the workspace delivers
   what the dead one left pending).

Prints the time until the workspace answered again, the crash check's counts (acknowledged sends lost, sends
delivered twice for one key), the webhook events lost, and with --pause the paused node's writes before and after
the takeover. Exit status 0 when the workspace answered within its bound and nothing was lost, sent twice or
written after the takeover; 1 otherwise.

--broadcast, after the same steps 1 and 2: a broadcast of --recipients fresh numbers (the template of step 1, at
WHATSAPP_SENDS_PER_SECOND --rate on every node, the platform at 1,000 a second) is created through the first node
(relayed to the third), and once the API counts --kill-at of them sent the third node gets SIGKILL; with
--restart-after it is started again that many seconds later on its port and under its name (as `serve --nodes`
restarts a node after 1 s), else the survivors take the workspace. Then, until the broadcast is completed and every
send the platform accepted is settled (at most --settle-timeout s): the platform's record per recipient. Prints the
time from the kill to the platform's first send of the broadcast after it (its resumption), and the recipients sent
once, twice (bound 0) and never (bound 0; those left claimed with a pending message counted apart as "in flight").
Exit status 1 when any was sent twice or never, or the broadcast did not complete.

--postgres-restart, after the same steps 1 and 2: each of --chats customers writes once (so every chat's actor is
live, as an active chat's is), then template sends (--sends-per-second, none keyed, each tried once) and customers'
messages (--customers-per-second, signed envelopes posted to the webhook, each delivered again after the answer's
Retry-After, or 0.5 s, until answered 200, as the platform retries) go to the nodes in turn, to --chats numbers, each
kind on --connections of its own, from the start until --after seconds after PostgreSQL's return. After --kill-after
seconds PostgreSQL goes down for --down-for seconds: the embedded server stopped (fast shutdown: every session ended)
and started again on its port (with --database-url, which the script does not restart, the script's database refuses
connections and its sessions are ended instead). Its return is the moment it accepts connections again. Prints the
answers by status, the time from the return to the first send sent after it and answered 200 (bound 2 s:
RESTART_BACK_BOUND), the 5xx answered without Retry-After (bound 0), customer messages acknowledged and not stored
(bound 0) and nodes that exited (bound 0); exit status 1 when any is past its bound.

--skewed-clock, after step 1 (its database also records every retention DELETE, and who ran it): the third node
runs under Debian's libfaketime (`apt-get install faketime`) --skew-hours ahead (its wall clock only), and holds a
second workspace of its own, the second node the first (harness/skewed_clock.py). --sends template sends (every
other pair with an Idempotency-Key) and as many customers' messages, to both workspaces, go to the nodes in turn; a
relay across the skew is refused 403 `forwarding_stale` and tried on the next node. Then the third node is restarted
under the same skew, which runs its retention sweeps at once with every key of the run in the table, and once it
has: every acknowledged keyed send is sent again (each must be replayed with its first messageId) and every
acknowledged customer message delivered again (each stored once). Prints the crash check's counts (acknowledged
sends lost, sent twice for one key, unkeyed sends sent twice), the skewed node's `inbox_node_clock_skew_seconds` and
its warning, its sweeps and the rows they deleted, the keys' rows before and after (bound: none deleted), the
replays, and the customers' messages; exit status 1 when any is past its bound, the gauge is more than 5 s off the
skew, or the warning or the Idempotency-Key sweep never came.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import signal
import sys
from contextlib import AsyncExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import trio
import trio_asyncio
from harness import retried_sends, write_audit
from harness.broadcast_failover import BroadcastFailover
from harness.cluster import Cluster, out_of_service
from harness.options import add_database_url, script_parser
from harness.postgres import bench_database, outage
from harness.postgres_restart import RESTART_BACK_BOUND, PostgresRestart
from harness.processes import Child, free_ports, service_child
from harness.run import run_check
from harness.simulator import STATUS_RETRIES, SeparateSimulator, platform_record
from harness.skewed_clock import SkewedClock, install_sweep_audit, skewed_env
from harness.webhook_receiver import configure_webhook, pending_count, running_receiver
from harness.workspace import Workspace, make_workspace

from persistence.database import Database

NODES = 3
# The liveness lock's probe (0.5 s) and confirmation (0.5 s), a take, and this script's own probe (0.5 s): measured
# 1.0 s on the 2-core machine (7.2 to 7.6 s when only the lease's expiry told the others).
OUT_OF_SERVICE_BOUND = 3.0
# A lease's 8 s, the fence-out's 1 s, a take and a client's retry: measured 7.6 to 10.6 s on the 2-core machine,
# the highest while the test suite shared it.
PAUSED_OUT_OF_SERVICE_BOUND = 12.0


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
        "--throughput", "1000", "--history", str(max(args.sends, args.recipients) * 4), "--webhook-retry-delays",
        STATUS_RETRIES], dict(os.environ), work_dir / "simulator.log")
    cluster_env = {**platform.service_env(), "INBOX_CLUSTER_SECRET": secrets.token_urlsafe(24),
                   "WHATSAPP_SENDS_PER_SECOND": str(args.rate) if args.broadcast else "1000"}
    ports = [platform.service_port, *free_ports(NODES - 1)]
    # Named by their addresses, so each node's PostgreSQL connections carry its name (Settings.connection_name).
    names = [f"http://127.0.0.1:{port}" for port in ports]
    async with trio_asyncio.open_loop():
        async with bench_database(server_url, f"inbox_bench_cluster_{os.getpid()}") as (url, db):
            ws = await make_workspace(db, "Cluster check")
            if args.pause:
                await write_audit.install(db)
            if args.skewed_clock:
                await install_sweep_audit(db)
            victim = NODES - 1
            skew = args.skew_hours if args.skewed_clock else None     # the third node's, in hours
            async with simulator.running(retried_sends.STARTUP_SECONDS), \
                    running_receiver() as receiver, AsyncExitStack() as stack:
                nodes = [await stack.enter_async_context(
                    _node(url, work_dir, f"node-{n + 1}", port, {**cluster_env, "INBOX_NODE_URL": name},
                          skew if n == victim else None).running(retried_sends.STARTUP_SECONDS))
                    for n, (port, name) in enumerate(zip(ports, names))]
                cluster = Cluster(nodes)
                for node in nodes:
                    cluster.clients.append(await stack.enter_async_context(httpx.AsyncClient(
                        base_url=node.ready["url"], timeout=httpx.Timeout(retried_sends.REQUEST_TIMEOUT, pool=None),
                        limits=httpx.Limits(max_connections=args.connections))))
                if args.skewed_clock:
                    # The second node takes the workspace with its first call, the skewed third a second one.
                    other = await make_workspace(db, "Cluster check, the skewed node's")
                    await out_of_service(cluster.clients[1], ws.key, 0.0)
                    await out_of_service(cluster.clients[victim], other.key, 0.0)
                    holders = await db.fetch("SELECT workspace_id, node_id FROM workspace_leases"
                                             " WHERE workspace_id = ANY($1::bigint[]) ORDER BY workspace_id",
                                             [ws.workspace_id, other.workspace_id])
                    print(f"nodes: {', '.join(node.ready['url'] for node in nodes)}; node 3 runs {skew:g} h ahead "
                          "(libfaketime); workspaces held: " + ", ".join(
                              f"{row['workspace_id']} by {row['node_id']}" for row in holders)
                          + f"; platform {platform.url}", flush=True)
                    check = SkewedClock(args, cluster, db, [ws, other], victim, names[victim], platform.url,
                                        platform.app_secret)
                    await check.drive(partial(_restart, stack, url, work_dir, ports[victim],
                                              {**cluster_env, "INBOX_NODE_URL": names[victim]}, skew))
                    return await check.report()
                await out_of_service(cluster.clients[victim], ws.key, 0.0)       # the third node takes it
                holder = await db.fetchval("SELECT node_id FROM workspace_leases WHERE workspace_id = $1",
                                           ws.workspace_id)
                print(f"nodes: {', '.join(node.ready['url'] for node in nodes)}; the workspace is held by {holder};"
                      f" platform {platform.url}", flush=True)
                if args.broadcast:
                    failover = BroadcastFailover(args, cluster, ws, db, platform.url)
                    await failover.drive(victim, partial(_restart, stack, url, work_dir, ports[victim],
                                                         {**cluster_env, "INBOX_NODE_URL": names[victim]}))
                    return await failover.report()
                if args.postgres_restart:
                    restart = PostgresRestart(args, cluster, ws, platform.app_secret)
                    await restart.drive(lambda: outage(server_url, _postgres_pid is not None, work_dir,
                                                       urlsplit(url).path.lstrip("/"), args.down_for))
                    await restart.measure(db)
                    return restart.report()
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
    bound = args.back_after or (PAUSED_OUT_OF_SERVICE_BOUND if args.pause else OUT_OF_SERVICE_BOUND)
    print(f"the workspace answered again {out_for[1]:.2f} s after the {'SIGSTOP' if args.pause else 'SIGKILL'}"
          f" (bound {bound:g} s)")
    print("the first send started after it was answered 200 "
          + (f"{cluster.send_back_after:.2f} s after it" if cluster.send_back_after is not None
             else "never (no send was left to make)"))
    if fault is not None:
        status |= fault.report()
    print(f"webhook events (message_sent): {len(events):,} in the outbox, {len(events) - len(lost_events):,} "
          + ("received" if delivered is not None else "received by the end of the wait"))
    print(f"webhook events lost: {len(lost_events)}")
    if cluster.refusals:
        print(f"first refusals (4xx but 409 and 429): {'; '.join(cluster.refusals)}")
    return 1 if status or lost_events or out_for[1] > bound else 0


async def _restart(stack: AsyncExitStack, url: str, work_dir: Path, port: int, env: dict[str, str],
                   skew: float | None = None) -> Child:
    """The killed (or stopped) node started again on its port, under its name (and its skew)."""
    return await stack.enter_async_context(_node(url, work_dir, "node-3-again", port, env, skew).running(
        retried_sends.STARTUP_SECONDS))


def _node(url: str, work_dir: Path, name: str, port: int, env: dict[str, str], skew: float | None) -> Child:
    """A node; with `skew`, its wall clock that many hours ahead (libfaketime)."""
    child = service_child(url, work_dir, name, port, env)
    if skew is not None:
        child.env = skewed_env(child.env, skew)
    return child


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
            stopped_at = cluster.stopped_at = trio.current_time()
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
    parser.add_argument("--back-after", type=float, metavar="S",
                        help="the bound on the time until the workspace answers again (3 s after a SIGKILL, 12 s "
                             "after a SIGSTOP, the figures on a quiet machine; the suite's loaded runs allow more)")
    parser.add_argument("--pause-past", type=float, default=1.0,
                        help="--pause: seconds between the takeover and the SIGCONT (1)")
    parser.add_argument("--connections", type=int, default=24, help="client connections at once (24)")
    parser.add_argument("--doubt-timeout", type=float, default=20.0,
                        help="a client stops retrying a key in doubt this long after the start (20 s)")
    parser.add_argument("--deadline", type=float, default=300.0, help="clients give up after this (300 s)")
    parser.add_argument("--settle-timeout", type=float, default=90.0,
                        help="wait at most this long for the sends and the webhook events to settle (90 s)")
    parser.add_argument("--postgres-restart", action="store_true",
                        help="restart PostgreSQL instead, under sends and customers' messages")
    parser.add_argument("--down-for", type=float, default=5.0,
                        help="--postgres-restart: seconds PostgreSQL stays down (5)")
    parser.add_argument("--after", type=float, default=5.0,
                        help="--postgres-restart: seconds of traffic after PostgreSQL's return (5)")
    parser.add_argument("--back-within", type=float, default=RESTART_BACK_BOUND, metavar="S",
                        help="--postgres-restart: the bound on the first send answered after the return (2 s, the "
                             "figure on a quiet machine; the suite's loaded run allows more)")
    parser.add_argument("--sends-per-second", type=float, default=20.0,
                        help="--postgres-restart: template sends started a second (20)")
    parser.add_argument("--customers-per-second", type=float, default=20.0,
                        help="--postgres-restart: customer messages posted a second (20)")
    parser.add_argument("--broadcast", action="store_true",
                        help="kill the node of a workspace sending a broadcast instead, and count its recipients")
    parser.add_argument("--recipients", type=int, default=1000, help="--broadcast: its recipients (1,000)")
    parser.add_argument("--rate", type=int, default=100,
                        help="--broadcast: WHATSAPP_SENDS_PER_SECOND of the nodes (100: the broadcast sends 80/s)")
    parser.add_argument("--kill-at", type=float, default=1 / 3,
                        help="--broadcast: SIGKILL once this share of the recipients is sent (0.33)")
    parser.add_argument("--restart-after", type=float, metavar="S",
                        help="--broadcast: start the killed node again S seconds after the kill (default: never)")
    parser.add_argument("--skewed-clock", action="store_true",
                        help="run the third node's wall clock --skew-hours ahead (libfaketime) instead, restart it "
                             "under sends and customers' messages, and retry every acknowledged keyed send")
    parser.add_argument("--skew-hours", type=float, default=25.0,
                        help="--skewed-clock: how far ahead the third node's clock runs (25)")
    parser.add_argument("--seed", type=int, help="random seed for the numbers")
    add_database_url(parser)
    args = parser.parse_args(argv)
    if args.sends < 1 or args.chats < 1 or args.connections < 1 or args.kill_after <= 0 \
            or args.doubt_timeout <= 0 or args.deadline <= 0 or args.settle_timeout <= 0:
        parser.error("--sends, --chats and --connections must be at least 1, and the times positive")
    if args.down_for < 0 or args.after <= 0 or args.sends_per_second <= 0 or args.customers_per_second <= 0:
        parser.error("--down-for must be zero or more, --after and the rates positive")
    if args.pause + args.postgres_restart + args.broadcast + args.skewed_clock > 1:
        parser.error("--pause, --postgres-restart, --broadcast and --skewed-clock are different faults: one at a time")
    if args.skew_hours == 0:
        parser.error("--skew-hours must not be 0")
    if not 1 <= args.recipients <= 9_000 or args.rate < 1 or not 0 < args.kill_at < 1 \
            or (args.restart_after is not None and args.restart_after < 0):
        parser.error("--recipients must be 1 to 9,000, --rate at least 1, --kill-at between 0 and 1 (exclusive), "
                     "--restart-after zero or more")
    return args


def main(argv: list[str] | None = None) -> int:
    return run_check("cluster", parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
