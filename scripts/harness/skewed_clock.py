"""scripts/cluster_check.py --skewed-clock: one node of the three runs hours ahead of PostgreSQL's clock (Debian's
libfaketime preloaded: the wall clock only, its monotonic clock left alone as a clock set wrong would leave it), and
what its node-wide sweeps do to every workspace's records.

The skewed node holds a workspace of its own (the second), the second node the first. Keyed and unkeyed template
sends and customers' messages to both go to the nodes in turn; what lands on a node that does not hold its workspace
is relayed, and a relay across the skew is refused 403 `forwarding_stale` (docs/nodes.md: a node more than 30 s off
another's), after which its client tries the next node. Then the skewed node is restarted, under the same skew, as
an operator restarts one: its timers run every sweep at once (the hourly retention of Idempotency-Keys, the activity
log, the delivery log and the team audit log), with every key of the run in the table. Triggers in the check's own
database record each retention DELETE with the name of the node whose connection ran it and the rows it removed.
Once the skewed node has swept, every acknowledged keyed send is sent again with its key (each must be replayed with
its first messageId, none sent again), and every acknowledged customer message is delivered again (each must be
stored once).

Before the fix a node 25 h ahead deleted every workspace's keys at once (its clock said they were 25 h old), and the
retries went out a second time.
"""

from __future__ import annotations

import argparse
import random
import re
import secrets
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import trio

from harness import retried_sends
from harness.cluster import Cluster, out_of_service, retry_after
from harness.inbound import customer_writes
from harness.processes import CannotRun, Child, stop_process
from harness.simulator import platform_record
from harness.spawned_service import parse_metrics
from harness.workspace import Workspace
from persistence.database import Database

SKEW_GAUGE = "inbox_node_clock_skew_seconds"
# The gauge against the offset libfaketime was given: its measure is the node's clock at half a round trip.
SKEW_TOLERANCE = 5.0
SKEW_WARNING = re.compile(r"WARNING inbox_actors\.monitoring\.clock_skew: this node's clock runs ([\d.]+) s ahead")
SWEEP_TIMEOUT = 60.0
TAKE_BACK_SECONDS = 10.0
RETENTION_TABLES = ("idempotent_requests", "key_activity", "webhook_outbox", "team_audit")
# The retention sweeps' statements, told from a request's own DELETE (a released key's, say): each compares a time
# with PostgreSQL's now() less the retention it is given.
_SWEEP_STATEMENT = re.compile(r"now\(\)\)?\s*-\s*\$1::interval")

_INSTALL = """
CREATE TABLE check_sweeps (
    id bigserial PRIMARY KEY,
    writer text NOT NULL,
    at timestamptz NOT NULL,
    table_name text NOT NULL,
    deleted bigint NOT NULL,
    statement text NOT NULL
);
CREATE FUNCTION check_record_sweep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO check_sweeps (writer, at, table_name, deleted, statement)
    VALUES (current_setting('application_name'), clock_timestamp(), TG_TABLE_NAME, (SELECT count(*) FROM gone),
            left(current_query(), 500));
    RETURN NULL;
END
$$;
"""


LIBFAKETIME = "libfaketime.so.1"


def find_libfaketime() -> list[Path]:
    """Debian's libfaketime: installed, or unpacked by scripts/faketime into .venv/share/faketime (no root)."""
    unpacked = Path(__file__).resolve().parents[2] / ".venv" / "share" / "faketime" / "usr" / "lib"
    return (sorted(Path("/usr/lib").glob(f"*/faketime/{LIBFAKETIME}")) + sorted(
        Path("/usr/lib/faketime").glob(LIBFAKETIME)) + sorted(unpacked.glob(f"*/faketime/{LIBFAKETIME}")))


def skewed_env(env: dict[str, str], hours: float) -> dict[str, str]:
    """`env` with libfaketime preloaded `hours` ahead (behind, if negative): the process itself, not the `faketime`
    command, which would stand between it and the signals that stop it. The wall clock only: a machine's clock set
    wrong leaves CLOCK_MONOTONIC (trio's) alone."""
    found = find_libfaketime()
    if not found:
        raise CannotRun("--skewed-clock needs Debian's libfaketime: apt-get install libfaketime (scripts/faketime "
                        "unpacks it into .venv without root)")
    preload = " ".join(filter(None, [str(found[0]), env.get("LD_PRELOAD")]))
    return {**env, "LD_PRELOAD": preload, "FAKETIME": f"{round(hours * 3600):+d}",
            "FAKETIME_DONT_FAKE_MONOTONIC": "1"}


async def install_sweep_audit(db: Database) -> None:
    """Record every DELETE on the retention tables from now on, one row per statement (zero rows deleted too)."""
    await db.execute(_INSTALL)
    for table in RETENTION_TABLES:
        await db.execute(f'CREATE TRIGGER check_record_sweep AFTER DELETE ON "{table}" REFERENCING OLD TABLE AS gone'
                         " FOR EACH STATEMENT EXECUTE FUNCTION check_record_sweep()")


@dataclass
class Sweep:
    table: str
    deleted: int


@dataclass
class SkewedClock:
    args: argparse.Namespace
    cluster: Cluster
    db: Database
    workspaces: list[Workspace]         # the second node's, the skewed node's
    skewed: int                         # the skewed node's index
    skewed_name: str
    platform_url: str
    app_secret: str
    sends: list[retried_sends.Send] = field(default_factory=list)
    workspace_of: dict[int, Workspace] = field(default_factory=dict)   # by send number
    phones: list[str] = field(default_factory=list)
    customers: list[tuple[Workspace, str, str]] = field(default_factory=list)   # acknowledged: (ws, phone, id)
    customer_answers: Counter = field(default_factory=Counter)
    unacknowledged: int = 0
    seconds: float = 0.0
    restarted_at: float = 0.0           # seconds into the traffic
    keys_before: int = 0                # the run's Idempotency-Key rows before the skewed node's restart
    keys_after: int = 0                 # ... once it had swept
    sweeps: list[Sweep] = field(default_factory=list)   # the skewed node's after its restart
    gauges: dict[int, float | None] = field(default_factory=dict)   # by node index
    retried: Counter = field(default_factory=Counter)   # keyed sends sent again: replayed, sent again, other
    retry_examples: list[str] = field(default_factory=list)
    redelivered: int = 0
    stored_twice: int = 0
    stored: int = 0
    logs: list[Path] = field(default_factory=list)      # the skewed node's, each start
    exited: list[str] = field(default_factory=list)     # nodes that were not up at the end

    async def drive(self, restart: Callable[[], Awaitable[Child]]) -> None:
        run_tag = secrets.token_hex(3)
        first = retried_sends.PHONE_BASE + random.randrange(1000) * 10**6
        self.phones = [str(first + i * 10 + 1) for i in range(self.args.chats)]
        for n in range(self.args.sends):
            keyed = (n // 2) % 2 == 0       # both workspaces get keyed and unkeyed sends
            self.sends.append(retried_sends.Send(n, f"skew {run_tag} #{n}", f"skew-{run_tag}-{n}" if keyed else None))
            self.workspace_of[n] = self.workspaces[n % 2]
        self.logs.append(self.cluster.nodes[self.skewed].log_path)
        started = trio.current_time()
        self.cluster.up.set()
        self.cluster.started_at = started
        await self._traffic(run_tag, started)
        self.restarted_at = trio.current_time() - started
        await self._restart(restart)
        self.gauges = {n: await self._gauge(n) for n in range(len(self.cluster.nodes))}
        await self._retry_keyed()
        await self._deliver_again()
        self.seconds = trio.current_time() - started
        self.exited = [f"node {n + 1} (exit {node.process.returncode})" for n, node in enumerate(self.cluster.nodes)
                       if node.process.returncode is not None]

    async def _traffic(self, run_tag: str, started: float) -> None:
        connections = trio.CapacityLimiter(self.args.connections)
        deadline = started + self.args.deadline
        async with trio.open_nursery() as clients:
            for send in self.sends:
                ws = self.workspace_of[send.n]
                clients.start_soon(retried_sends.client, self.cluster, connections, self.cluster, send,
                                   self.phones[send.n % len(self.phones)], ws.key, self.args.doubt_timeout, deadline)
            for n in range(self.args.sends):
                clients.start_soon(self._customer, self.workspaces[n % 2], self.phones[n % len(self.phones)],
                                   f"wamid.skew.{run_tag}.{n}", connections, deadline)

    async def _customer(self, ws: Workspace, phone: str, message_id: str, connections: trio.CapacityLimiter,
                        deadline: float, again: bool = False) -> None:
        """One customer message, delivered again as the platform does until answered 200."""
        while trio.current_time() < deadline:
            async with connections:
                try:
                    answer = await self.cluster.deliver(lambda http: customer_writes(
                        http, self.app_secret, ws.phone_number_id, phone, message_id, "is it 25 hours later?"))
                except httpx.HTTPError as err:
                    self.customer_answers[f"customer {type(err).__name__}"] += 1
                    answer = None
            if answer is not None:
                self.customer_answers[f"customer {answer.status_code}"] += 1
                if answer.status_code == 200:
                    if not again:
                        self.customers.append((ws, phone, message_id))
                    return
            await trio.sleep(retry_after(answer))
        if not again:
            self.unacknowledged += 1

    async def _restart(self, restart: Callable[[], Awaitable[Child]]) -> None:
        """The skewed node stopped (it drains and hands its workspace back) and started again under the same
        skew; once it has taken its workspace back, until its retention sweeps have run."""
        ids = [ws.workspace_id for ws in self.workspaces]
        self.keys_before = await self._keys(ids)
        last = await self.db.fetchval("SELECT coalesce(max(id), 0) FROM check_sweeps")
        self.cluster.dead.add(self.skewed)
        await stop_process(self.cluster.nodes[self.skewed].process)
        node = await restart()
        self.cluster.nodes[self.skewed] = node
        self.logs.append(node.log_path)
        # Its workspace back, unless another node took it meanwhile (a status webhook for it, say): then a call
        # through the skewed node is relayed and refused as stale, and the workspace stays where it is.
        with trio.move_on_after(TAKE_BACK_SECONDS):
            await out_of_service(self.cluster.clients[self.skewed], self.workspaces[1].key, 0.0)
        self.cluster.dead.discard(self.skewed)
        writer = f"inbox-actors {self.skewed_name}"
        with trio.move_on_after(SWEEP_TIMEOUT):
            while True:
                rows = await self.db.fetch(
                    "SELECT table_name, deleted, statement FROM check_sweeps WHERE id > $1 AND writer = $2 ORDER BY id",
                    last, writer)
                self.sweeps = [Sweep(row["table_name"], row["deleted"]) for row in rows
                               if _SWEEP_STATEMENT.search(row["statement"])]
                if any(sweep.table == "idempotent_requests" for sweep in self.sweeps):
                    break
                await trio.sleep(0.2)
        self.keys_after = await self._keys(ids)
        holders = await self.db.fetch("SELECT workspace_id, node_id FROM workspace_leases WHERE workspace_id ="
                                      " ANY($1::bigint[]) ORDER BY workspace_id", ids)
        print(f"node {self.skewed + 1} restarted {self.restarted_at:.1f} s in, {self.args.skew_hours:g} h ahead "
              f"again; workspaces held: " + ", ".join(f"{row['workspace_id']} by {row['node_id']}" for row in holders),
              flush=True)

    async def _keys(self, workspace_ids: list[int]) -> int:
        return await self.db.fetchval("SELECT count(*) FROM idempotent_requests WHERE workspace_id = ANY($1::bigint[])",
                                      workspace_ids)

    def _sweeps_said(self) -> str:
        if not self.sweeps:
            return "none"
        return ", ".join(f"{sweep.table} ({sweep.deleted:,} rows deleted)" for sweep in self.sweeps)

    async def _gauge(self, n: int) -> float | None:
        """The node's skew gauge once it has measured (the first round runs at its start); None if never."""
        with trio.move_on_after(20):
            while True:
                try:
                    answer = await self.cluster.clients[n].get("/metrics", timeout=5)
                    samples = parse_metrics(answer.text) if answer.status_code == 200 else {}
                except httpx.HTTPError:
                    samples = {}
                value = next((v for name, v in samples.items() if name.split("{")[0] == SKEW_GAUGE), None)
                if value:            # 0.0: not measured yet
                    return value
                await trio.sleep(0.25)
        return None

    async def _retry_keyed(self) -> None:
        """Every acknowledged keyed send sent again, as a client retries it: its first messageId, replayed."""
        connections = trio.CapacityLimiter(self.args.connections)
        deadline = trio.current_time() + self.args.settle_timeout
        async with trio.open_nursery() as nursery:
            for send in self.sends:
                if send.key and send.final == "acknowledged":
                    nursery.start_soon(self._retry, send, connections, deadline)

    async def _retry(self, send: retried_sends.Send, connections: trio.CapacityLimiter, deadline: float) -> None:
        ws = self.workspace_of[send.n]
        body = {"to": self.phones[send.n % len(self.phones)], "type": "template",
                "template": {"name": retried_sends.TEMPLATE, "language": "en", "parameters": [send.label]}}
        headers = {"Authorization": f"Bearer {ws.key}", "Idempotency-Key": send.key}
        while trio.current_time() < deadline:
            try:
                async with connections:
                    answer = await self.cluster.post("/api/send-message", json=body, headers=headers)
            except httpx.HTTPError:
                await trio.sleep(retried_sends.RETRY_PAUSE)
                continue
            if answer.status_code in (403, 503) or (answer.status_code == 409 and "in progress" in answer.text):
                await trio.sleep(retried_sends.RETRY_PAUSE)   # relayed across the skew, or busy: the next node
                continue
            message_id = answer.json().get("messageId") if answer.status_code == 200 else None
            if message_id is not None and answer.headers.get("idempotent-replayed") == "true" \
                    and message_id == send.message_ids[0]:
                self.retried["replayed"] += 1
            elif message_id is not None:
                self.retried["sent again"] += 1
                self._example(f"{send.key}: 200 {message_id} (first {send.message_ids[0]}), replayed "
                              f"{answer.headers.get('idempotent-replayed')}")
            else:
                self.retried["other"] += 1
                self._example(f"{send.key}: {answer.status_code} {answer.text[:160]}")
            return
        self.retried["no verdict"] += 1

    def _example(self, text: str) -> None:
        if len(self.retry_examples) < 5:
            self.retry_examples.append(text)

    async def _deliver_again(self) -> None:
        """Every acknowledged customer message delivered again, as the platform may; each must be stored once."""
        connections = trio.CapacityLimiter(self.args.connections)
        deadline = trio.current_time() + self.args.settle_timeout
        async with trio.open_nursery() as nursery:
            for ws, phone, message_id in list(self.customers):
                nursery.start_soon(self._customer, ws, phone, message_id, connections, deadline, True)
        self.redelivered = len(self.customers)

    async def measure(self) -> None:
        acknowledged = [message_id for _ws, _phone, message_id in self.customers]
        rows = await self.db.fetch(
            "SELECT platform_message_id, count(*) AS copies FROM messages WHERE direction = 'inbound'"
            " AND workspace_id = ANY($1::bigint[]) AND platform_message_id = ANY($2::text[])"
            " GROUP BY platform_message_id", [ws.workspace_id for ws in self.workspaces], acknowledged)
        self.stored = len(rows)
        self.stored_twice = sum(1 for row in rows if row["copies"] > 1)

    async def report(self) -> int:
        settled = None
        for ws in self.workspaces:
            waited = await retried_sends.wait_settled(self.db, ws, self.platform_url, self.args.settle_timeout)
            settled = None if waited is None else max(settled or 0.0, waited)
        await self.measure()
        record = [send for ws in self.workspaces for send in await platform_record(self.platform_url,
                                                                                  ws.phone_number_id)]
        rows = [row for ws in self.workspaces for row in await retried_sends.outbound_rows(self.db, ws.workspace_id)]
        status = retried_sends.report(self.args.chats, self.sends, [self.restarted_at], self.seconds, settled, record,
                                      rows, "restart")
        labels = {send.label: send for send in self.sends}
        delivered = Counter(r["template_parameters"][0] for r in record
                            if r["template_parameters"] and r["template_parameters"][0] in labels)
        unkeyed_twice = sum(1 for label, count in delivered.items() if count > 1 and not labels[label].key)
        stale = sum(send.answers["403"] for send in self.sends) + self.customer_answers["customer 403"]
        print(f"relays across the skew refused 403 forwarding_stale, tried again on the next node: {stale:,}")
        expected = self.args.skew_hours * 3600
        skewed_gauge = self.gauges.get(self.skewed)
        gauge_ok = skewed_gauge is not None and abs(skewed_gauge - expected) <= SKEW_TOLERANCE
        others = ", ".join(f"node {n + 1} {value:+.3f} s" if value is not None else f"node {n + 1} not measured"
                           for n, value in self.gauges.items() if n != self.skewed)
        print(f"{SKEW_GAUGE}: node {self.skewed + 1} "
              + (f"{skewed_gauge:+,.1f} s ({skewed_gauge / 3600:+.2f} h)" if skewed_gauge is not None
                 else "never measured")
              + f" (expected {expected:+,.0f} s within {SKEW_TOLERANCE:g}); {others}")
        warnings = [float(found[1]) for log in self.logs if log.exists()
                    for found in SKEW_WARNING.finditer(log.read_text(errors="replace"))]
        print(f"the skew warning in node {self.skewed + 1}'s log: "
              + (f"{len(warnings)} time(s), the first saying {warnings[0]:,.1f} s ahead" if warnings else "never"))
        swept = any(sweep.table == "idempotent_requests" for sweep in self.sweeps)
        print(f"retention sweeps of node {self.skewed + 1} after its restart: {self._sweeps_said()}"
              + ("" if swept else f" (the Idempotency-Key retention NOT seen within {SWEEP_TIMEOUT:g} s)"))
        deleted = self.keys_before - self.keys_after
        print(f"Idempotency-Key rows of the run: {self.keys_before:,} before the restart, {self.keys_after:,} after "
              f"the skewed node's sweeps; deleted {deleted} (bound 0)")
        keyed = sum(1 for send in self.sends if send.key and send.final == "acknowledged")
        print(f"acknowledged keyed sends sent again after the sweeps: {keyed:,}; replayed with their first "
              f"messageId {self.retried['replayed']:,}, sent again {self.retried['sent again']} (bound 0), other "
              f"answers {self.retried['other'] + self.retried['no verdict']}")
        for example in self.retry_examples:
            print(f"  {example}")
        lost = len(self.customers) - self.stored
        print(f"customer messages: {len(self.customers) + self.unacknowledged:,} posted, {len(self.customers):,} "
              f"acknowledged, {self.unacknowledged} never; acknowledged and not stored: {lost} (bound 0); delivered "
              f"again after the sweeps {self.redelivered:,}, stored twice: {self.stored_twice} (bound 0)")
        print(f"nodes that exited: {len(self.exited)}{' (' + ', '.join(self.exited) + ')' if self.exited else ''}"
              " (bound 0)")
        failed = (status or self.exited or unkeyed_twice or not gauge_ok or not warnings or not swept or deleted
                  or self.retried["replayed"] != keyed or lost or self.unacknowledged or self.stored_twice)
        return 1 if failed else 0
