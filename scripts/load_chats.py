"""Many simulated WhatsApp customers chatting at once: webhook latency, bot round trip, throughput.

Drives a RUNNING service through its WhatsApp simulator (the built-in one of `serve`), or starts one itself
(`--spawn`: `inbox-actors serve --demo --port 0` on a fresh embedded PostgreSQL in a temporary directory).
The built-in simulator shares the service's process, and so its CPU core: `--spawn --separate-simulator` runs
it as `inbox-actors simulator` in a process of its own instead, as the real platform would be (two free local
ports, made-up secrets; the service gets WHATSAPP_API_URL and its secrets, and its CPU is then its own). The
report names the mode, and with --spawn shows the CPU time of each process started. With --spawn,
`--sends-per-second N` (default 80, the platform's default tier) is the business number's send pace: the service's
WHATSAPP_SENDS_PER_SECOND and the simulator's throughput (`--throughput` of a separate one, INBOX_SIMULATOR_THROUGHPUT
of the built-in one). With the one business number of the demo every bot answer goes through that pace: at 80/s and
4 FAQ answers per 5 messages, a run of 200x5 cannot exceed about 100 customer messages per second whatever the
service's speed; `--sends-per-second 1000` (the platform's top tier) takes that bound away. A running service keeps
its own pace (the option is then an error, unless left at 80).

    .venv/bin/python scripts/load_chats.py --spawn [--customers 200] [--messages-per-customer 5]
    .venv/bin/python scripts/load_chats.py --spawn --separate-simulator [--customers 200] ...
    .venv/bin/python scripts/load_chats.py --spawn --separate-simulator --sends-per-second 1000 [--rate 100] ...
    .venv/bin/python scripts/load_chats.py --spawn --nodes 2 --workspaces 8 [--separate-simulator] ...
    .venv/bin/python scripts/load_chats.py --compare-nodes 1,2 --workspaces 8 --sends-per-second 1000 ...
    .venv/bin/python scripts/load_chats.py --ready-file serve.out        # holding the ready line of scripts/serve
    .venv/bin/python scripts/load_chats.py --simulator URL --phone-number-id ID [--service URL --key KEY]

Several nodes and workspaces (harness/spawned_service.py). `--spawn --nodes N` starts `inbox-actors serve --nodes N`
(N node processes behind one port; 1: the service alone) and `--workspaces W` spreads the customers over W
workspaces, customer i writing to workspace i mod W. Either makes the database itself, as the other benchmarks do:
a fresh database on harness PostgreSQL (embedded, durability off; `--database-url`: that server's, whose CPU is then
not measured), holding W Scale workspaces, each with its own business number, a full-access key and the demo's bot
answers; the service runs on it without `--demo`. Every business number has the `--sends-per-second` pace, and the
poller reads each number's sent list. The report adds the CPU time of every process started (the parent `serve` and
each node, PostgreSQL with its backends, the simulator), the CPU per message delivered of each, the requests the
nodes relayed to the workspace's node out of those their apps answered (from each node's /metrics) and the
workspaces each node holds; beside how busy the machine was, the share of its cores these processes took (on a
shared machine, what else ran took the rest). `--compare-nodes 1,2` runs the same load (the same customers) against `serve --nodes 1`,
then `serve --nodes 2`, each on a fresh database, with `--separate-simulator` implied so that the simulator's CPU is
its own, and prints each run's report, then the runs side by side with each one's throughput over the first's
(a list such as 1,2,2,1 interleaves the runs, for a machine whose speed drifts).

Each customer (at most `--concurrency` at once) sends M messages in sequence through the simulator's
`POST /simulator/customers/{phone}/messages`, which returns once the service has answered the webhook, i.e.
committed the message: that is the webhook latency. Messages 1..M-1 ask the demo FAQ (price, hours, refund, in
turn) and the customer waits for the bot's answer before going on; the last of M >= 2 asks something the bot
cannot answer, which hands the chat to a person, after which the bot must stay quiet (`--no-handoff`: every
message is an FAQ question). The answer is seen by one poller for all customers, reading the number's sent list
(`GET /simulator/numbers/{id}/messages`) every `--poll-interval` while anyone waits: the bot round trip runs
from the send to that read; "bot answer sent" runs to the simulator's own `accepted_at` (same-machine clocks),
free of polling granularity. An answer must be the demo's text for the question (`--any-answer`: any send).

That load is closed-loop: each customer goes on as soon as it has its answer, so the service's speed sets the
offered load. `--rate R` paces it instead (open loop): one scheduler starts R messages a second in all, on a fixed
schedule that does not wait for answers, each slot handed to the customer ready longest (a customer is ready once
its previous answer came, or failed, and its think time passed; never two messages of one customer at once). A slot
with nobody ready is lost, not made up, and counted as missed (`slots_missed`): many missed slots mean the customers
(`--customers`, `--concurrency`) cannot carry R with the answers as slow as they are. The report then gives the
offered rate and the achieved one (messages started per second of the schedule).

With a service URL and a key, a sample of the chats that saw no error (`--verify`) is read back at the end
(`GET /api/inbox/conversations/{phone}`): state and counts must match what the customers saw.

Errors by kind: `webhook_no_answer` (the simulator got no answer from the service in its 5 s timeout, or
could not connect; the service may still store the message), `webhook_http_N` (the service answered N),
`customer_call_X` / `simulator_http_N` (the call to the simulator failed), `bot_no_answer` (nothing within
`--bot-timeout`), `bot_unexpected_send` (a send to a customer with no question pending and no earlier error:
e.g. the bot speaking after the hand-off), `chat_mismatch`, `poll_*`, `verify_*`. Sends that answer no
pending question after an earlier error are counted as stray answers, not errors.

Prints a report, then one JSON line with the same figures (`rate` null and `slots_missed` null when not paced;
`sends_per_second` null for a running service; with --compare-nodes, `{"runs": [...], "throughput_ratios": [...]}`).
Exit status 0 without errors, 1 with any (or when the service could not be started, or on Ctrl-C), 2 on bad
arguments.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import msgspec
import trio

from harness.figures import percentiles
from harness.options import add_database_url
from harness.processes import CannotRun
from harness.run import run_on_postgres
from harness.simulator import customer_phones, random_start_phone
from harness.spawned_service import NodeFigures, NodesPlan, SpawnedService, each_node_count, spawned_demo

FAQ_QUESTIONS = (  # the demo workspace's keywords, each matched as a whole word
    ("price", "Hi! What is the price of the basic plan?"),
    ("hours", "What are your opening hours on Saturday?"),
    ("refund", "How long does a refund take?"),
)
NO_ANSWER_TEXT = "Thanks. Can you ship to Norway?"   # no keyword, no hand-off phrase: bot_has_no_answer
PROGRESS_SECONDS = 5.0
SETTLE_SECONDS = 1.0                                   # after the last customer, before the last sweep
CLIENT_POOL = 16                                       # connections per HTTP client of the customers
DEFAULT_SENDS_PER_SECOND = 80                          # the platform's default tier (its top tier: 1,000)
MODES = {   # how the service and its simulator ran
    "running": "a running service and its simulator",
    "spawn": "spawned service, its built-in simulator in the same process",
    "spawn-separate-simulator": "spawned service, the simulator in a process of its own",
}


@dataclass(frozen=True)
class Number:
    """A workspace's business number, and a key of that workspace for the end-of-run check (None: not checked)."""

    phone_number_id: str
    key: str | None = None


@dataclass(frozen=True)
class Target:
    simulator_url: str
    phone_number_id: str
    service_url: str | None = None   # with key: the end-of-run check of chats
    key: str | None = None
    more_numbers: tuple[Number, ...] = ()   # other workspaces': customer i writes to numbers[i % len(numbers)]

    @property
    def numbers(self) -> tuple[Number, ...]:
        return (Number(self.phone_number_id, self.key), *self.more_numbers)


@dataclass(frozen=True)
class LoadOptions:
    customers: int = 200
    messages_per_customer: int = 5
    concurrency: int | None = None   # customers active at once; None: all
    think_time: float = 0.0          # seconds between a customer's messages
    start_phone: str | None = None   # first customer number; None: a random 11-digit base
    handoff: bool = True             # the last of M >= 2 messages has no bot answer
    bot_timeout: float = 30.0        # wait for each bot answer
    poll_interval: float = 0.1       # between reads of the sent list while anyone waits
    any_answer: bool = False         # any send counts as the answer (a workspace with other answers)
    request_timeout: float = 30.0
    verify: int = 50                 # chats checked at the end (needs the service URL and a key)
    rate: float | None = None        # messages started a second in all (open loop); None: closed loop


@dataclass
class Report:
    options: LoadOptions
    messages_sent: int = 0           # customer calls made
    messages_delivered: int = 0      # the service answered the webhook 2xx (committed)
    bot_questions: int = 0           # delivered messages the bot should answer
    bot_answers: int = 0             # answers seen in the simulator's sent list
    handoffs: int = 0                # delivered messages the bot cannot answer
    stray_answers: int = 0           # sends that answered no waiting question (late, or after the hand-off)
    chats_verified: int = 0
    errors: Counter = field(default_factory=Counter)
    webhook: list[float] = field(default_factory=list)      # seconds
    bot_seen: list[float] = field(default_factory=list)     # send to the poll that saw the answer
    bot_sent: list[float] = field(default_factory=list)     # send to the simulator's accepted_at (same clock)
    mismatches: list[str] = field(default_factory=list)     # a few examples of chats that did not match
    customers_done: int = 0
    phones: str = ""                 # the customers' numbers, first..last
    wall_seconds: float = 0.0
    client_cpu_seconds: float = 0.0
    mode: str = "running"            # a key of MODES
    service_cpu_seconds: float | None = None                 # with mode "spawn", its simulator's CPU included
    simulator_cpu_seconds: float | None = None               # mode "spawn-separate-simulator"
    machine_cpu_busy: float | None = None                    # share of all cores busy during the load
    simulator: dict[str, Any] = field(default_factory=dict)  # the simulator's counters over the run
    sends_per_second: int | None = None                      # --spawn: the business number's send pace
    slots_missed: int | None = None                          # paced: slots with no customer ready
    paced_seconds: float | None = None                       # paced: from the first slot to the last one's end
    workspaces: int = 1                                      # business numbers the customers were spread over
    nodes: int | None = None                                 # --nodes: `serve --nodes N`
    process_cpu: dict[str, float | None] = field(default_factory=dict)   # --spawn: each process started, by name
    postgres_cpu_seconds: float | None = None                # --spawn: PostgreSQL and its backends
    node_figures: NodeFigures | None = None                  # --nodes: requests relayed, workspaces held
    measured_seconds: float | None = None                    # --spawn: the wall time the CPU figures cover

    def cpu_per_message(self) -> dict[str, float]:
        """Milliseconds of CPU per customer message delivered, by who spent it; `all`: their sum."""
        spent = {"service": self.service_cpu_seconds, "postgres": self.postgres_cpu_seconds,
                 "simulator": self.simulator_cpu_seconds, "client": self.client_cpu_seconds}
        spent = {name: seconds for name, seconds in spent.items() if seconds is not None}
        if not self.messages_delivered or not spent:
            return {}
        spent["all"] = sum(spent.values())
        return {name: round(seconds / self.messages_delivered * 1e3, 2) for name, seconds in spent.items()}

    def own_share(self) -> float | None:
        """The share of all cores the measured processes and the client took (the rest of machine_cpu_busy is
        other processes')."""
        spent = self.cpu_per_message().get("all")
        if spent is None or not self.measured_seconds:
            return None
        return spent * self.messages_delivered / 1e3 / self.measured_seconds / (os.cpu_count() or 1)

    def achieved_rate(self) -> float | None:
        """Paced: messages started per second of the schedule."""
        if self.paced_seconds is None:
            return None
        return round(self.messages_sent / self.paced_seconds, 1) if self.paced_seconds > 0 else 0.0

    def error_count(self) -> int:
        return sum(self.errors.values())

    def summary(self) -> dict[str, Any]:
        o, wall = self.options, self.wall_seconds or 1e-9
        return {
            "customers": o.customers, "messages_per_customer": o.messages_per_customer,
            "concurrency": o.concurrency or o.customers, "think_time": o.think_time, "handoff": o.handoff,
            "phones": self.phones, "mode": self.mode,
            "messages_sent": self.messages_sent, "messages_delivered": self.messages_delivered,
            "bot_questions": self.bot_questions, "bot_answers": self.bot_answers, "handoffs": self.handoffs,
            "stray_answers": self.stray_answers,
            "chats_verified": self.chats_verified, "errors": dict(sorted(self.errors.items())),
            "error_count": self.error_count(), "wall_seconds": round(self.wall_seconds, 3),
            "messages_per_second": round(self.messages_delivered / wall, 1),
            "bot_answers_per_second": round(self.bot_answers / wall, 1),
            "webhook_latency_ms": percentiles(self.webhook), "bot_round_trip_ms": percentiles(self.bot_seen),
            "bot_answer_sent_ms": percentiles(self.bot_sent),
            "client_cpu_seconds": round(self.client_cpu_seconds, 2),
            "service_cpu_seconds": None if self.service_cpu_seconds is None else round(self.service_cpu_seconds, 2),
            "simulator_cpu_seconds": None if self.simulator_cpu_seconds is None
            else round(self.simulator_cpu_seconds, 2),
            "machine_cpu_busy": None if self.machine_cpu_busy is None else round(self.machine_cpu_busy, 3),
            "own_cpu_share": None if self.own_share() is None else round(self.own_share(), 3),
            "simulator": self.simulator,
            "rate": o.rate, "achieved_rate": self.achieved_rate(), "slots_missed": self.slots_missed,
            "sends_per_second": self.sends_per_second,
            "workspaces": self.workspaces, "nodes": self.nodes,
            "bot_round_trip_p95_ms": p95_ms(self.bot_seen), "webhook_latency_p95_ms": p95_ms(self.webhook),
            "process_cpu_seconds": {name: None if value is None else round(value, 2)
                                    for name, value in self.process_cpu.items()},
            "postgres_cpu_seconds": None if self.postgres_cpu_seconds is None
            else round(self.postgres_cpu_seconds, 2),
            "cpu_ms_per_message": self.cpu_per_message(),
            "requests_relayed": self.node_figures.relayed if self.node_figures else None,
            "requests_answered": self.node_figures.answered if self.node_figures else None,
            "workspaces_held": list(self.node_figures.held) if self.node_figures else None,
        }

    def text(self) -> str:
        s = self.summary()
        lines = [
            f"{s['customers']} customers x {s['messages_per_customer']} messages, concurrency {s['concurrency']}, "
            f"think time {s['think_time']:g} s, hand-off {'on' if s['handoff'] else 'off'}, "
            + ("closed loop" if s["rate"] is None else f"paced at {s['rate']:g} messages/s")
            + f", phones {s['phones']}",
            f"  mode               {MODES[s['mode']]}"
            + ("" if s["nodes"] is None else f"; `serve --nodes {s['nodes']}`"
               + (" (the simulator in the parent)" if s["mode"] == "spawn" and s["nodes"] > 1 else ""))
            + ("" if s["workspaces"] == 1 else f"; {s['workspaces']} workspaces")
            + ("" if s["sends_per_second"] is None else
               f"; {'each ' if s['workspaces'] > 1 else ''}business number sends {s['sends_per_second']}/s"),
            f"  messages sent      {s['messages_sent']} (delivered {s['messages_delivered']}; bot questions "
            f"{s['bot_questions']}, answers seen {s['bot_answers']}; hand-offs {s['handoffs']}; "
            f"stray answers {s['stray_answers']})",
            f"  errors             {s['error_count']}" + (f"  {s['errors']}" if s["errors"] else ""),
            f"  wall time          {s['wall_seconds']:.2f} s",
            f"  throughput         {s['messages_per_second']:,.1f} messages/s, "
            f"{s['bot_answers_per_second']:,.1f} bot answers/s",
        ]
        if s["rate"] is not None:
            lines.append(f"  pace               offered {s['rate']:,.1f} messages/s, "
                         f"achieved {s['achieved_rate']:,.1f} "
                         f"({s['messages_sent']} started in {self.paced_seconds:.2f} s), "
                         f"slots missed {s['slots_missed']}")
        for label, key in (("webhook latency", "webhook_latency_ms"), ("bot round trip", "bot_round_trip_ms"),
                           ("bot answer sent", "bot_answer_sent_ms")):
            p = s[key]
            lines.append(f"  {label:<18} " + ("no samples" if not p["count"] else
                         f"p50 {p['p50']:.1f}  p90 {p['p90']:.1f}  p99 {p['p99']:.1f}  max {p['max']:.1f}  "
                         f"mean {p['mean']:.1f} ms  (n={p['count']})"))
        cpu = f"client {s['client_cpu_seconds']:.1f} s"
        if s["service_cpu_seconds"] is not None:
            cpu += f", service {s['service_cpu_seconds']:.1f} s"
            cpu += " (with its simulator)" if s["mode"] == "spawn" else ""
        if len(self.process_cpu) > 1:
            cpu += "; by process " + ", ".join(f"{name} {'?' if value is None else f'{value:.1f}'} s"
                                              for name, value in self.process_cpu.items())
        elif s["simulator_cpu_seconds"] is not None:
            cpu += f", simulator {s['simulator_cpu_seconds']:.1f} s"
        if s["machine_cpu_busy"] is not None:
            cpu += f"; machine {s['machine_cpu_busy']:.0%} busy ({os.cpu_count()} cores)"
            cpu += "" if s["own_cpu_share"] is None else f", {s['own_cpu_share']:.0%} by these processes"
        lines.append(f"  CPU                {cpu}")
        if s["cpu_ms_per_message"]:
            lines.append("  CPU per message    " + ", ".join(f"{name} {ms:.2f} ms"
                                                            for name, ms in s["cpu_ms_per_message"].items()))
        if self.node_figures is not None:
            f = self.node_figures
            lines.append(f"  nodes              requests relayed to the workspace's node {f.relayed:,} of "
                         f"{f.answered:,} answered ({f.relayed / max(1, f.answered):.0%}); workspaces held "
                         + ", ".join(map(str, f.held)))
        lines.append(f"  chats verified     {s['chats_verified']}")
        lines.extend(f"    mismatch: {m}" for m in self.mismatches)
        if self.simulator:
            lines.append(f"  simulator          {self.simulator}")
        return "\n".join(lines)


def p95_ms(seconds: list[float]) -> float | None:
    """The 95th percentile in milliseconds, nearest rank as harness.figures ranks its p50, p90 and p99."""
    if not seconds:
        return None
    ordered = sorted(seconds)
    return round(ordered[max(0, math.ceil(len(ordered) * 0.95) - 1)] * 1e3, 2)


def demo_answers() -> dict[str, str] | None:
    """The demo workspace's answer to each FAQ topic, from `inbox_actors.access.demo_workspace` (None: not importable)."""
    try:
        from inbox_actors.access.demo_workspace import DEMO_ANSWERS
    except ImportError:
        return None
    return {keyword: answer for keywords, answer in DEMO_ANSWERS for keyword in keywords}


@dataclass
class Customer:
    index: int
    phone: str
    number: Number                  # the workspace's number it writes to
    delivered: int = 0
    answered: int = 0
    handed_off: bool = False
    troubled: bool = False          # a message not delivered or not answered: late answers are expected
    waiting: Waiting | None = None


class Sent(msgspec.Struct):
    """What the script reads of one send in the simulator's sent list (the rest of each record is skipped)."""

    message_id: str
    to: str
    text: str | None = None
    accepted_at: str | None = None


class SentList(msgspec.Struct):
    data: list[Sent]


SENT_LIST = msgspec.json.Decoder(SentList)   # ~6x faster than json on a full list (1,000 records, ~0.5 MB)


@dataclass
class Waiting:
    expected: str | None            # the answer's text; None: any send to the customer
    done: trio.Event = field(default_factory=trio.Event)
    answer: Sent | None = None
    seen_at: float = 0.0


class Pace:
    """The paced mode's schedule: every 1/rate seconds (absolute deadlines, so it does not drift) one slot, handed to
    the customer that has been ready longest; a slot with nobody ready is missed, not made up. A ready customer
    waits in the bounded `ready` channel with its own go event; one that has sent all its messages does not come
    back. The schedule ends with the last message's slot."""

    def __init__(self, rate: float, messages: int, customers_at_once: int) -> None:
        self.interval = 1.0 / rate
        self.messages = messages     # slots to fill: every message of every customer
        # Each active customer holds at most one place: a buffer of `customers_at_once` never blocks a sender.
        self.ready_send, self.ready_receive = trio.open_memory_channel[trio.Event](customers_at_once)
        self.started = 0             # slots filled
        self.missed = 0              # slots with nobody ready
        self.seconds = 0.0           # from the first slot to the end of the last

    async def turn(self) -> None:
        """A customer's wait for its next slot."""
        go = trio.Event()
        await self.ready_send.send(go)
        await go.wait()

    async def run(self) -> None:
        # The first slot one interval in (the customers are starting meanwhile); the schedule is timed from it.
        first = deadline = trio.current_time() + self.interval
        while self.started < self.messages:
            await trio.sleep_until(deadline)
            try:
                self.ready_receive.receive_nowait().set()
                self.started += 1
            except trio.WouldBlock:
                self.missed += 1
            deadline += self.interval
        self.seconds = max(trio.current_time(), deadline) - first


class LoadRun:
    def __init__(self, target: Target, options: LoadOptions, simulator: httpx.AsyncClient,
                 customer_clients: list[httpx.AsyncClient], answers: dict[str, str] | None) -> None:
        self.target, self.options, self.answers = target, options, answers
        self.simulator, self.customer_clients = simulator, customer_clients   # control calls; customers' calls
        self.report = Report(options)
        self.customers: dict[str, Customer] = {}
        self.known_sends: dict[str, set[str]] = {}   # per number, the ids in the last read of its sent list
        self.waiting_count = 0               # customers waiting for an answer
        self.someone_waits = trio.Event()
        self.pace: Pace | None = None        # the paced mode's schedule

    async def customer(self, customer: Customer) -> None:
        o, report = self.options, self.report
        for n in range(o.messages_per_customer):
            if n and o.think_time:
                await trio.sleep(o.think_time)
            if self.pace is not None:
                await self.pace.turn()
            no_answer = o.handoff and o.messages_per_customer >= 2 and n == o.messages_per_customer - 1
            topic, text = ("handoff", NO_ANSWER_TEXT) if no_answer else \
                FAQ_QUESTIONS[(customer.index + n) % len(FAQ_QUESTIONS)]
            if not no_answer:   # waiting from before the send: an answer may come before the call returns
                self.start_waiting(customer, self.answers.get(topic) if self.answers is not None else None)
            wall_started, started = time.time(), time.perf_counter()
            if not await self.customer_writes(customer, text, started):
                customer.troubled = True
                self.stop_waiting(customer)
                continue
            customer.delivered += 1
            if no_answer:
                report.handoffs += 1
                customer.handed_off = True
                continue
            report.bot_questions += 1
            waiting = customer.waiting
            with trio.move_on_after(max(0.0, started + o.bot_timeout - time.perf_counter())):
                await waiting.done.wait()
            self.stop_waiting(customer)
            if waiting.answer is None:
                report.errors["bot_no_answer"] += 1
                customer.troubled = True
                continue
            customer.answered += 1
            report.bot_answers += 1
            report.bot_seen.append(waiting.seen_at - started)
            accepted = parse_time(waiting.answer.accepted_at)
            if accepted is not None:
                report.bot_sent.append(max(0.0, accepted - wall_started))
        report.customers_done += 1

    async def customer_writes(self, customer: Customer, text: str, started: float) -> bool:
        """One customer message; True when the service committed it (webhook latency recorded)."""
        report = self.report
        report.messages_sent += 1
        try:
            client = self.customer_clients[customer.index % len(self.customer_clients)]
            response = await client.post(f"/simulator/customers/{customer.phone}/messages", json={
                "phone_number_id": customer.number.phone_number_id, "text": text, "name": f"Load {customer.index}"})
        except httpx.HTTPError as err:
            report.errors[f"customer_call_{type(err).__name__}"] += 1
            return False
        elapsed = time.perf_counter() - started
        if response.status_code != 200:
            report.errors[f"simulator_http_{response.status_code}"] += 1
            return False
        result = response.json()
        if not result.get("delivered_to_service"):
            status = result.get("service_status")
            # 0: the simulator got no answer (its webhook timeout is 5 s) or could not connect
            report.errors[f"webhook_http_{status}" if status else "webhook_no_answer"] += 1
            return False
        report.messages_delivered += 1
        report.webhook.append(elapsed)
        return True

    # -- seeing the bot's answers: one poller for every customer --------------------------------------------

    def start_waiting(self, customer: Customer, expected: str | None) -> None:
        customer.waiting = Waiting(expected)
        self.waiting_count += 1
        self.someone_waits.set()

    def stop_waiting(self, customer: Customer) -> None:
        if customer.waiting is not None:
            customer.waiting = None
            self.waiting_count -= 1

    async def watch_sends(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """While any customer waits, sweep the sent lists every poll interval."""
        for number in self.target.numbers:   # earlier runs' sends
            self.known_sends[number.phone_number_id] = {
                r.message_id for r in await self.sent_list(number.phone_number_id) or ()}
        task_status.started()
        while True:
            if not self.waiting_count:
                self.someone_waits = trio.Event()
                await self.someone_waits.wait()
            await trio.sleep(self.options.poll_interval)
            await self.sweep()

    async def sweep(self) -> None:
        """Read each number's sent list (its newest 1,000 sends) once, all at once; hand each send not seen before
        to the customer it went to."""
        async with trio.open_nursery() as reads:
            for number in self.target.numbers:
                reads.start_soon(self.sweep_number, number.phone_number_id)

    async def sweep_number(self, phone_number_id: str) -> None:
        records = await self.sent_list(phone_number_id)
        if records is None:
            return
        seen_at = time.perf_counter()
        known = self.known_sends.get(phone_number_id, set())
        for record in records:
            if record.message_id not in known:
                self.send_seen(record, seen_at)
        self.known_sends[phone_number_id] = {r.message_id for r in records}

    def send_seen(self, record: Sent, seen_at: float) -> None:
        customer = self.customers.get(record.to)
        if customer is None:
            return   # not one of ours
        waiting = customer.waiting
        if waiting is not None and waiting.answer is None and waiting.expected in (None, record.text):
            waiting.answer, waiting.seen_at = record, seen_at
            waiting.done.set()
            return
        self.report.stray_answers += 1
        if not customer.troubled:   # every message of theirs was answered in time: nothing should be late
            self.report.errors["bot_unexpected_send"] += 1
            self.example(f"{customer.phone}: unexpected send {record.text!r} "
                          f"({'after the hand-off' if customer.handed_off else 'not the expected answer'})")

    async def sent_list(self, phone_number_id: str) -> list[Sent] | None:
        try:
            response = await self.simulator.get(f"/simulator/numbers/{phone_number_id}/messages")
        except httpx.HTTPError as err:
            self.report.errors[f"poll_{type(err).__name__}"] += 1
            return None
        if response.status_code != 200:
            self.report.errors[f"poll_http_{response.status_code}"] += 1
            return None
        try:
            return SENT_LIST.decode(response.content).data
        except msgspec.DecodeError as err:
            self.report.errors["poll_bad_body"] += 1
            self.example(f"the sent list did not decode: {err}")
            return None

    async def stats(self) -> dict[str, Any]:
        try:
            response = await self.simulator.get("/simulator/stats")
            return response.json() if response.status_code == 200 else {}
        except httpx.HTTPError:
            return {}

    def example(self, text: str) -> None:
        if len(self.report.mismatches) < 5:
            self.report.mismatches.append(text)

    # -- the end-of-run check ------------------------------------------------------------------------------

    async def verify(self) -> None:
        """The detail of up to `verify` untroubled chats, spread over the run: state and counts as seen."""
        target, o = self.target, self.options
        chats = [c for c in self.customers.values() if not c.troubled and c.number.key]
        if not (target.service_url and chats and o.verify > 0):
            return
        step = max(1, len(chats) // o.verify)
        async with httpx.AsyncClient(base_url=target.service_url, timeout=o.request_timeout) as service:
            for chat in chats[::step][:o.verify]:
                if not await self.verify_chat(service, chat):
                    return

    async def verify_chat(self, service: httpx.AsyncClient, chat: Customer) -> bool:
        """False when verifying should stop (rate limited)."""
        expected = {"messages": chat.delivered + chat.answered, "from_customer": chat.delivered,
                    "from_bot": chat.answered}
        state = "HANDOFF_PENDING" if chat.handed_off else "AI_ONLY"
        for _ in range(10):   # the hand-off happens just after the last webhook was answered
            try:
                response = await service.get(f"/api/inbox/conversations/{chat.phone}",
                                             headers={"Authorization": f"Bearer {chat.number.key}"})
            except httpx.HTTPError as err:
                self.report.errors[f"verify_{type(err).__name__}"] += 1
                return False
            if response.status_code == 429:
                self.report.errors["verify_rate_limited"] += 1
                return False
            if response.status_code != 200:
                self.report.errors[f"verify_http_{response.status_code}"] += 1
                return True
            detail = response.json()
            if detail.get("state") == state and detail.get("counts") == expected:
                self.report.chats_verified += 1
                return True
            await trio.sleep(0.2)
        self.report.errors["chat_mismatch"] += 1
        self.example(f"{chat.phone}: expected {state} {expected}, got {detail.get('state')} {detail.get('counts')} "
                     f"({detail.get('handover_reason')})")
        return True

    async def progress(self, started: float) -> None:
        while True:
            await trio.sleep(PROGRESS_SECONDS)
            r = self.report
            print(f"[{time.perf_counter() - started:6.1f} s] customers done {r.customers_done}/"
                  f"{self.options.customers}, messages {r.messages_sent}, bot answers {r.bot_answers}, "
                  f"errors {r.error_count()}"
                  + (f", slots missed {self.pace.missed}" if self.pace else ""), file=sys.stderr, flush=True)


def parse_time(value: str | None) -> float | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() if value else None
    except ValueError:
        return None


def counter_delta(before: dict, after: dict) -> dict[str, Any]:
    delta: dict[str, Any] = {}
    for name, value in after.items():
        if isinstance(value, dict):
            changed = {k: v - before.get(name, {}).get(k, 0) for k, v in value.items()}
            delta[name] = {k: v for k, v in changed.items() if v}
        elif isinstance(value, int) and not name.endswith("_running"):
            delta[name] = value - before.get(name, 0)
    return delta


def machine_cpu() -> tuple[float, float] | None:
    """(busy, total) jiffies of the whole machine (Linux), for the share of CPU the run kept busy."""
    try:
        fields = [float(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)
    return sum(fields) - idle, sum(fields)


def busy_between(started: tuple[float, float] | None, ended: tuple[float, float] | None) -> float | None:
    if not (started and ended and ended[1] > started[1]):
        return None
    return (ended[0] - started[0]) / (ended[1] - started[1])


async def run_load(target: Target, options: LoadOptions) -> Report:
    """The whole load against a running service and simulator; the report (nothing printed but progress)."""
    start_phone = options.start_phone or random_start_phone()
    phones = customer_phones(start_phone, options.customers)
    concurrency = options.concurrency or options.customers
    async with contextlib.AsyncExitStack() as clients:
        simulator = await clients.enter_async_context(simulator_client(target, options, 4))
        # Several small pools rather than one big one: httpcore's pool does work per request that grows with
        # its size, which at hundreds of connections costs the client more CPU than the requests.
        customer_clients = [await clients.enter_async_context(simulator_client(target, options, CLIENT_POOL))
                            for _ in range(-(-concurrency // CLIENT_POOL))]
        run = LoadRun(target, options, simulator, customer_clients,
                      None if options.any_answer else demo_answers())
        numbers = target.numbers
        run.customers = {phone: Customer(index, phone, numbers[index % len(numbers)])
                         for index, phone in enumerate(phones)}
        run.report.phones, run.report.workspaces = f"{phones[0]}..{phones[-1]}", len(numbers)
        if options.rate is not None:
            run.pace = Pace(options.rate, options.customers * options.messages_per_customer, concurrency)
        before = await run.stats()
        if not before:
            raise CannotRun(f"the simulator at {target.simulator_url} does not answer GET /simulator/stats")
        cpu_started, machine_started, started = time.process_time(), machine_cpu(), time.perf_counter()
        slots = trio.Semaphore(concurrency)

        async def one(customer: Customer) -> None:
            try:
                await run.customer(customer)
            finally:
                slots.release()

        async with trio.open_nursery() as helpers:
            helpers.start_soon(run.progress, started)
            await helpers.start(run.watch_sends)
            if run.pace is not None:
                helpers.start_soon(run.pace.run)
            async with trio.open_nursery() as customers:
                for customer in run.customers.values():
                    await slots.acquire()
                    customers.start_soon(one, customer)
            run.report.wall_seconds = time.perf_counter() - started
            machine_ended = machine_cpu()
            helpers.cancel_scope.cancel()
        if run.pace is not None:
            run.report.slots_missed, run.report.paced_seconds = run.pace.missed, run.pace.seconds
        await trio.sleep(SETTLE_SECONDS)
        await run.sweep()   # late sends: answers after a timeout, or a bot that spoke after the hand-off
        run.report.machine_cpu_busy = busy_between(machine_started, machine_ended)
        after = await run.stats()
        run.report.simulator = counter_delta(before, after) if before and after else {}
        await run.verify()
        run.report.client_cpu_seconds = time.process_time() - cpu_started
    return run.report


def simulator_client(target: Target, options: LoadOptions, connections: int) -> httpx.AsyncClient:
    # Idle connections go before Hypercorn's 5 s keep-alive timeout can close one under a new request.
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections, keepalive_expiry=2.0)
    return httpx.AsyncClient(base_url=target.simulator_url, limits=limits, timeout=options.request_timeout)


# -- spawning the service (harness.spawned_service): `serve --demo` alone, or `serve --nodes N` -----------------


async def spawn_and_run(options: LoadOptions, startup_timeout: float, separate_simulator: bool = False,
                        sends_per_second: int = DEFAULT_SENDS_PER_SECOND) -> Report:
    """The load against `serve --demo` on a fresh embedded PostgreSQL of its own, with its built-in simulator or
    one in a process of its own; everything stopped at the end."""
    async with spawned_demo(separate_simulator=separate_simulator, sends_per_second=sends_per_second,
                            startup_timeout=startup_timeout) as spawned:
        print(f"service {spawned.describe()}", file=sys.stderr, flush=True)
        return await measured_load(spawned, options, sends_per_second)


async def run_on_nodes(reports: list[Report], options: LoadOptions, plan: NodesPlan, server_url: str,
                       postgres: int | None, work_dir: Path) -> int:
    """The load against `serve --nodes N` for each N of the plan in turn, each on a fresh database; each run's
    report appended to `reports`."""
    from inbox_actors.access.demo_workspace import DEMO_ANSWERS

    # The same customers in every run (each has a fresh database and simulator), so that the runs compare.
    options = replace(options, start_phone=options.start_phone or random_start_phone())

    async def load(spawned: SpawnedService) -> None:
        reports.append(await measured_load(spawned, options, plan.sends_per_second))

    await each_node_count(plan, DEMO_ANSWERS, server_url, postgres, work_dir, load)
    return 0


async def measured_load(spawned: SpawnedService, options: LoadOptions, sends_per_second: int) -> Report:
    """The load, its customers spread over the spawned service's workspaces, and the CPU time each process
    started spent meanwhile (None where it cannot be read)."""
    first, *others = spawned.workspaces
    target = Target(spawned.simulator_url, first.phone_number_id, spawned.url, first.key,
                    tuple(Number(w.phone_number_id, w.key) for w in others))
    machine_started = machine_cpu()
    report, spent = await spawned.measured(partial(run_load, target, options))
    # The machine's share over the CPU figures' window (the load, its settling and the check), as own_share's.
    report.machine_cpu_busy = busy_between(machine_started, machine_cpu())
    report.process_cpu, report.node_figures, report.measured_seconds = spent.cpu, spent.nodes, spent.seconds
    report.service_cpu_seconds, report.postgres_cpu_seconds = spent.service, spent.postgres
    report.simulator_cpu_seconds = spent.simulator
    report.mode = "spawn-separate-simulator" if spawned.simulator else "spawn"
    report.nodes, report.sends_per_second = spawned.nodes, sends_per_second
    return report


def throughput_ratios(summaries: list[dict[str, Any]]) -> list[float]:
    """Each run's customer messages a second over the first run's."""
    first = summaries[0]["messages_per_second"] or 1e-9
    return [round(s["messages_per_second"] / first, 2) for s in summaries]


def comparison(summaries: list[dict[str, Any]]) -> str:
    """The runs side by side, and each one's throughput as a ratio to the first's."""
    summaries = [{**s, "ratio": ratio} for s, ratio in zip(summaries, throughput_ratios(summaries))]

    def ms(value: float | None, digits: int = 1) -> str:
        return "-" if value is None else f"{value:,.{digits}f}"

    def busy(s: dict[str, Any]) -> str:
        """The whole machine's busy share, and the run's own processes' (what else runs takes the rest)."""
        if s["machine_cpu_busy"] is None or s["own_cpu_share"] is None:
            return "-"
        return f"{s['machine_cpu_busy']:.0%} ({s['own_cpu_share']:.0%})"

    rows = [
        ("messages/s (delivered)", lambda s: f"{s['messages_per_second']:,.1f}"),
        ("bot answers/s", lambda s: f"{s['bot_answers_per_second']:,.1f}"),
        ("bot round trip p50 ms", lambda s: ms(s["bot_round_trip_ms"]["p50"])),
        ("bot round trip p95 ms", lambda s: ms(s["bot_round_trip_p95_ms"])),
        ("webhook latency p50 ms", lambda s: ms(s["webhook_latency_ms"]["p50"])),
        ("webhook latency p95 ms", lambda s: ms(s["webhook_latency_p95_ms"])),
        *((f"CPU/message {who} ms", lambda s, who=who: ms(s["cpu_ms_per_message"].get(who), 2))
          for who in ("service", "postgres", "simulator", "client", "all")),
        ("machine busy (the run's)", busy),
        ("requests relayed", lambda s: f"{s['requests_relayed']} of {s['requests_answered']}"),
        ("workspaces held", lambda s: "/".join(map(str, s["workspaces_held"] or []))),
        ("errors", lambda s: str(s["error_count"])),
        ("throughput ratio", lambda s: f"{s['ratio']:.2f}"),
    ]
    width = max(14, *(len(cell(s)) + 2 for _, cell in rows for s in summaries))
    heads = [f"--nodes {s['nodes']}" for s in summaries]
    lines = [f"{'':<24}" + "".join(f"{head:>{width}}" for head in heads)]
    lines += [f"{label:<24}" + "".join(f"{cell(s):>{width}}" for s in summaries) for label, cell in rows]
    return "\n".join(lines)


# -- the command line ---------------------------------------------------------------------------------------


def target_from_ready(ready: dict, simulator_url: str | None = None) -> Target:
    """The ready line's service, demo number and key; its built-in simulator, unless `simulator_url` names the
    one the service was pointed at (WHATSAPP_API_URL)."""
    demo = ready.get("demo") or {}
    if simulator_url is None:
        if not ready.get("platform") or ready.get("simulator") is False:
            raise ValueError("the ready line names no simulator (the service runs against WHATSAPP_API_URL)")
        simulator_url = ready["platform"]
    return Target(simulator_url=simulator_url, phone_number_id=str(demo.get("phone_number_id") or ""),
                  service_url=ready.get("url"), key=demo.get("key"))


def read_ready_file(path: str) -> dict:
    """The last line of the file that is a ready line (the file may hold other output too)."""
    ready = None
    for line in Path(path).read_text().splitlines():
        try:
            parsed = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(parsed, dict) and parsed.get("status") == "ready":
            ready = parsed
    if ready is None:
        raise ValueError(f"{path} holds no ready line")
    return ready


def node_count(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 64:
        raise argparse.ArgumentTypeError("must be 1 to 64, as with serve --nodes")
    return value


def node_counts(text: str) -> tuple[int, ...]:
    counts = tuple(node_count(part) for part in text.split(","))
    if len(counts) < 2:
        raise argparse.ArgumentTypeError("two or more node counts: 1,2")
    return counts


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def seconds(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, Target | None, LoadOptions]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_argument_group("where (one of --spawn, --ready-json, --ready-file, or the URLs)")
    where.add_argument("--spawn", action="store_true", help="start `inbox-actors serve --demo --port 0` itself")
    where.add_argument("--separate-simulator", action="store_true",
                       help="with --spawn: run the simulator as `inbox-actors simulator` in a process of its own "
                            "(as the real platform would be), so the service's figures are its own")
    where.add_argument("--ready-json", help="the ready line printed by `scripts/serve`")
    where.add_argument("--ready-file", help="a file holding that ready line")
    where.add_argument("--service", help="the service's base URL (for the end-of-run chat check)")
    where.add_argument("--simulator", help="the simulator's base URL (the ready line's `platform`)")
    where.add_argument("--phone-number-id", help="the workspace's business number id")
    where.add_argument("--key", help="a key with scope inbox (for the end-of-run chat check)")
    where.add_argument("--startup-timeout", type=seconds, default=120.0, help="--spawn: wait for ready (120 s)")
    where.add_argument("--sends-per-second", type=positive_int, default=DEFAULT_SENDS_PER_SECOND, metavar="N",
                       help="only with --spawn: the business number's send pace, the service's "
                            "WHATSAPP_SENDS_PER_SECOND and the simulator's throughput (80, the platform's default "
                            "tier; 1000 its top tier). Every bot answer goes through it: at 80 a 200x5 run cannot "
                            "exceed about 100 messages/s")
    nodes = parser.add_argument_group(
        "several nodes and workspaces (these start `serve` on a database made by the script)")
    nodes.add_argument("--nodes", type=node_count, metavar="N",
                       help="with --spawn: start `inbox-actors serve --nodes N` (N node processes behind one port)")
    nodes.add_argument("--workspaces", type=positive_int, metavar="W",
                       help="with --spawn: W workspaces, each with its own business number and the demo's bot "
                            "answers; customer i writes to workspace i mod W")
    nodes.add_argument("--compare-nodes", type=node_counts, metavar="N,N..",
                       help="the same load against `serve --nodes N` for each N in turn (implies --spawn "
                            "--separate-simulator), each on a fresh database; then the runs side by side")
    add_database_url(nodes, help="with --nodes, --workspaces or --compare-nodes: a PostgreSQL server to use "
                                 "instead of the embedded one (a database of its own is made there for each run "
                                 "and dropped; its CPU is then not measured)")
    load = parser.add_argument_group("load")
    load.add_argument("--customers", type=positive_int, default=200)
    load.add_argument("--messages-per-customer", type=positive_int, default=5)
    load.add_argument("--concurrency", type=positive_int, help="customers active at once (default: all)")
    load.add_argument("--think-time", type=seconds, default=0.0, help="seconds between a customer's messages")
    load.add_argument("--rate", type=positive_float, metavar="R",
                      help="paced (open loop): start R messages a second in all on a fixed schedule, each to a "
                           "customer that has its previous answer; slots with nobody ready are counted as missed "
                           "(default: closed loop, each customer goes on once answered)")
    load.add_argument("--start-phone", help="first customer number (default: random 1555xxxxxxx)")
    load.add_argument("--no-handoff", action="store_true", help="every message is an FAQ question")
    load.add_argument("--bot-timeout", type=seconds, default=30.0, help="wait for each bot answer (30 s)")
    load.add_argument("--poll-interval", type=seconds, default=0.1,
                      help="between reads of the simulator's sent list while anyone waits (0.1 s)")
    load.add_argument("--any-answer", action="store_true",
                      help="count any send to the customer as the answer (workspaces whose answers differ from "
                           "the demo's)")
    load.add_argument("--verify", type=int, default=50, help="chats whose detail is checked at the end (50)")
    args = parser.parse_args(argv)

    options = LoadOptions(customers=args.customers, messages_per_customer=args.messages_per_customer,
                          concurrency=args.concurrency, think_time=args.think_time, start_phone=args.start_phone,
                          handoff=not args.no_handoff, bot_timeout=args.bot_timeout,
                          poll_interval=max(0.005, args.poll_interval), any_answer=args.any_answer,
                          verify=max(0, args.verify), rate=args.rate)
    try:
        customer_phones(options.start_phone or random_start_phone(), options.customers)
        args.plan = nodes_plan(args)
        if args.separate_simulator and not args.spawn:
            raise ValueError("--separate-simulator goes with --spawn")
        if args.sends_per_second != DEFAULT_SENDS_PER_SECOND and not args.spawn:
            raise ValueError("--sends-per-second goes with --spawn (a running service keeps its own pace)")
        if args.spawn:
            if args.ready_json or args.ready_file or args.simulator or args.service:
                raise ValueError("--spawn starts its own service: give no URLs or ready line with it")
            return args, None, options
        ready: dict = {}
        if args.ready_json:
            ready = json.loads(args.ready_json)
        elif args.ready_file:
            ready = read_ready_file(args.ready_file)
        base = target_from_ready(ready) if ready else Target("", "")
        target = Target(simulator_url=args.simulator or base.simulator_url,
                        phone_number_id=args.phone_number_id or base.phone_number_id,
                        service_url=args.service or base.service_url, key=args.key or base.key)
        if not target.simulator_url or not target.phone_number_id:
            raise ValueError("give --spawn, --ready-json, --ready-file, or --simulator and --phone-number-id")
    except (ValueError, OSError) as err:
        parser.error(str(err))
    return args, target, options


def nodes_plan(args: argparse.Namespace) -> NodesPlan | None:
    """The runs of `serve --nodes N` that --nodes, --workspaces or --compare-nodes ask for (None: none asked)."""
    if args.compare_nodes is not None:
        if args.nodes is not None:
            raise ValueError("--nodes or --compare-nodes, not both")
        args.spawn = args.separate_simulator = True   # the simulator's CPU its own in every run
    elif args.nodes is None and args.workspaces is None:
        if args.database_url:
            raise ValueError("--database-url goes with --nodes, --workspaces or --compare-nodes")
        return None
    elif not args.spawn:
        raise ValueError("--nodes and --workspaces go with --spawn")
    return NodesPlan(counts=args.compare_nodes or (args.nodes or 1,), workspaces=args.workspaces or 1,
                     separate_simulator=args.separate_simulator, sends_per_second=args.sends_per_second,
                     startup_timeout=args.startup_timeout)


def main(argv: list[str] | None = None) -> int:
    args, target, options = parse_args(argv)
    reports: list[Report] = []
    problem = None
    try:
        if args.plan is not None:   # its own Ctrl-C message; its exit status says no more than `reports` does
            run_on_postgres("load", args.database_url, run_on_nodes, reports, options, args.plan)
        elif target is None:
            reports.append(trio.run(spawn_and_run, options, args.startup_timeout, args.separate_simulator,
                                    args.sends_per_second))
        else:
            reports.append(trio.run(run_load, target, options))
    except* CannotRun as failed:
        problem = str(failed.exceptions[0])
    except* KeyboardInterrupt:
        problem = "interrupted" + ("; what it started was stopped" if target is None else "")
    if not reports or (args.plan is not None and len(reports) < len(args.plan.counts)):
        if problem:
            print(problem, file=sys.stderr)
        return 1
    for report in reports:
        print(report.text())
    summaries = [report.summary() for report in reports]
    if len(reports) > 1:
        print(comparison(summaries))
        print(json.dumps({"runs": summaries, "throughput_ratios": throughput_ratios(summaries)}), flush=True)
    else:
        print(json.dumps(summaries[0]), flush=True)
    return 1 if any(report.error_count() for report in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
