"""Many simulated WhatsApp customers chatting at once: webhook latency, bot round trip, throughput, and what the
AI agent's model calls cost.

Drives a RUNNING service through its WhatsApp simulator (the built-in one of `serve`), or starts one itself
(`--spawn`: `inbox-actors serve --demo --port 0` on a fresh embedded PostgreSQL in a temporary directory).
The built-in simulator shares the service's process, and so its CPU core: `--spawn --separate-simulator` runs
it in a process of its own instead, as the real platform would be (two free local ports, made-up secrets; the
service gets WHATSAPP_API_URL and its secrets, and its CPU is then its own). The
report names the mode, and with --spawn shows the CPU time of each process started. With --spawn,
`--sends-per-second N` (default 80, the platform's default tier) is the business number's send pace: the service's
WHATSAPP_SENDS_PER_SECOND and the simulator's throughput (`--throughput` of a separate one, INBOX_SIMULATOR_THROUGHPUT
of the built-in one). With the one business number of the demo every bot answer goes through that pace: at 80/s and
4 answers per 5 messages, a run of 200x5 cannot exceed about 100 customer messages per second whatever the
service's speed; `--sends-per-second 1000` (the platform's top tier) takes that bound away. A running service keeps
its own pace (the option is then an error, unless left at 80).

    .venv/bin/python scripts/load_chats.py --spawn [--customers 200] [--messages-per-customer 5]
    .venv/bin/python scripts/load_chats.py --spawn --separate-simulator [--customers 200] ...
    .venv/bin/python scripts/load_chats.py --spawn --separate-simulator --sends-per-second 1000 [--rate 100] ...
    .venv/bin/python scripts/load_chats.py --spawn --separate-simulator --rate 60 --compare-model-latency 0,1 ...
    .venv/bin/python scripts/load_chats.py --spawn --responder faq ...        # the keyword FAQ bot, no model
    .venv/bin/python scripts/load_chats.py --spawn --nodes 2 --workspaces 8 [--separate-simulator] ...
    .venv/bin/python scripts/load_chats.py --compare-nodes 1,2 --workspaces 8 --sends-per-second 1000 ...
    .venv/bin/python scripts/load_chats.py --compare-nodes 1,2 --workspaces 8 --balancer ...   # HAProxy in front
    .venv/bin/python scripts/load_chats.py --ready-file serve.out        # holding the ready line of scripts/serve
    .venv/bin/python scripts/load_chats.py --simulator URL --phone-number-id ID [--service URL --key KEY]
    .venv/bin/python scripts/load_chats.py --assignment-burst [--handovers 200 --members 5 --capacity 10 --nodes 2]

`--assignment-burst` runs the automatic-assignment burst instead (scripts/assignment_burst.py, which documents it and
takes the options after the flag): hand-overs in a burst on several nodes, every chat given once, nobody past the
capacity, freed room refilled within a second, an offline member given nothing.

The bot (`--responder`). `agent` (the default, as the service's): the AI agent, which a spawned service has ask
the model simulator; `--model-latency S` is the seconds each model call takes (INBOX_MODEL_SIMULATOR_LATENCY;
with the simulator apart, its own setting, since `inbox-actors simulator` serves no model: the script then starts
harness/simulator_with_model.py, which plays the platform and the model, and points the service at it with
INBOX_MODEL_URL), `--model-concurrency N` the model calls of a workspace in flight at once (INBOX_MODEL_CONCURRENCY;
default: the service's). `faq`: the keyword FAQ bot (a spawned service gets INBOX_MODEL_URL=none). The questions
are the demo workspace's (inbox_actors/access/demo_workspace.py), each answer's exact text read from its data: with
the agent the price of express shipping (from DEMO_PRICES, as the model states what its quote_price tool
returned: two model calls), the opening hours and the refund time (DEMO_ANSWERS); with the FAQ bot the hours and
the refund only, since no FAQ answer holds a price. A running service must run the bot asked for.

Several nodes and workspaces (harness/spawned_service.py). `--spawn --nodes N` starts `inbox-actors serve --nodes N`
(N node processes behind one port; 1: the service alone) and `--workspaces W` spreads the customers over W
workspaces, customer i writing to workspace i mod W. Either makes the database itself, as the other benchmarks do:
a fresh database on harness PostgreSQL (embedded, durability off; `--database-url`: that server's, whose CPU is then
not measured), holding W Scale workspaces, each with its own business number, a full-access key and what the
demo's bot knows (its FAQ answers, article and pricing sheet); the service runs on it without `--demo`. Every
business number has the `--sends-per-second` pace, and the poller reads each number's sent list. With the AI agent
and N > 1, `--separate-simulator` is implied: the simulator the nodes' parent runs for them plays no model. The
report adds the CPU time of every process started (the parent `serve` and
each node, PostgreSQL with its backends, the simulator), the CPU per message delivered of each, the requests the
nodes relayed to the workspace's node out of those their apps answered (from each node's /metrics) and the
workspaces each node holds; beside how busy the machine was, the share of its cores these processes took (on a
shared machine, what else ran took the rest). `--compare-nodes 1,2` runs the same load (the same customers) against
`serve --nodes 1`, then `serve --nodes 2`, each on a fresh database, with `--separate-simulator` implied so that the
simulator's CPU is its own, and prints each run's report, then the runs side by side with each one's throughput
over the first's, and each one's CPU per message (all processes) over the first's (a list such as 1,2,2,1
interleaves the runs, for a machine whose speed drifts). `--balancer` puts HAProxy in front of two nodes or more,
sending each workspace's requests to the node holding it as docs/nodes.md sets it up (harness/balancer.py), so few are
relayed: the platform posts to it, the end-of-run reads go through it, and its CPU counts with the rest; a run of
one node has none.
`--compare-model-latency 0,1` does the same with the model's latency (implies --spawn): the same customers against
a fresh service and database at each latency in turn. Compare paced runs (`--rate`): closed loop, each customer
waits for its answer, so throughput falls with the model's latency whatever the service does.

Each customer (at most `--concurrency` at once) sends M messages in sequence through the simulator's
`POST /simulator/customers/{phone}/messages`, which returns once the service has answered the webhook, i.e.
committed the message: that is the webhook latency. Messages 1..M-1 ask the demo's questions (above, in turn) and
the customer waits for the bot's answer before going on; the last of M >= 2 asks something nothing in the
demo's knowledge answers, which hands the chat to a person, after which the bot must stay quiet (`--no-handoff`:
every message is a question; the AI agent hands over after `max_bot_turns`, 6 by default, replies in a row). The
answer is seen by one poller for all customers, reading the number's sent list
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

With a service URL and a key (each workspace's), at the end every chat (`--verify K`: K of them, spread over the
run) is read back (`GET /api/reporting/v1/conversations`, 200 a page), once the service has settled (every chat
as planned, or 15 s), and the exactness figures counted: messages answered or handed over exactly once (a chat
whose every question got its one expected answer, the platform's sends and the chat's `from_bot` agreeing, whose
`from_customer` is what the service acknowledged and whose state is as planned: all its messages count), duplicate
and missing answers, and messages lost (acknowledged, yet not in the chat's `from_customer`). The AI agent's usage
over the run is read from `GET /api/bot/usage?from=<the run's start>` with each workspace's key (scope
ai_audit_view): model calls, replies, failures, prompt and completion tokens, cost in USD, average model latency.

Errors by kind: `webhook_no_answer` (the simulator got no answer from the service in its 5 s timeout, or
could not connect; the service may still store the message), `webhook_http_N` (the service answered N),
`customer_call_X` / `simulator_http_N` (the call to the simulator failed), `bot_no_answer` (nothing within
`--bot-timeout`), `bot_unexpected_send` (a send to a customer with no question pending and no earlier error:
e.g. the bot speaking after the hand-off), `chat_mismatch` (a chat with no earlier error not as planned),
`messages_lost`, `poll_*`, `verify_*`. Sends that answer no pending question after an earlier error are counted as
stray answers, not errors.

Prints a report, then one JSON line with the same figures (`rate` null and `slots_missed` null when not paced;
`sends_per_second` null for a running service; `usage` and `exactness` null without a key; with --compare-nodes or
--compare-model-latency, `{"runs": [...], "throughput_ratios": [...]}`). Exit status 0 without errors, 1 with any
(or when the service could not be started, or on Ctrl-C), 2 on bad arguments.
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
from datetime import datetime, timezone
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
from harness.spawned_service import ModelSetup, NodeFigures, NodesPlan, SpawnedService, each_run, spawned_demo

from inbox_actors.access.demo_workspace import DEMO_ANSWERS, DEMO_PRICES, seed_demo_knowledge
from inbox_actors.model_simulator.grounded import price_sentence

RESPONDERS = {"agent": "the AI agent", "faq": "the keyword FAQ bot"}
QUESTIONS = {   # a question on each topic of the demo's knowledge, as a customer writes it
    "price": "How much is express shipping?",
    "hours": "What are your opening hours?",
    "refund": "How long does a refund take?",
}
TOPICS = {"agent": ("price", "hours", "refund"), "faq": ("hours", "refund")}   # no FAQ answer holds a price
PRICED_ITEM = "Express shipping"        # the demo's pricing sheet item the price question asks about
# Nothing in the demo's knowledge, no FAQ keyword, no hand-off phrase: the agent calls hand_off (bot_handed_off),
# the FAQ bot has no answer (bot_has_no_answer).
NO_ANSWER_TEXT = "Do you sell spaceships?"
PROGRESS_SECONDS = 5.0
SETTLE_SECONDS = 1.0                                   # after the last customer, before the chats are read back
READ_BACK_SECONDS = 15.0                               # at most, for every chat to be as planned
READ_BACK_PAGE = 200                                   # chats a page of the list (its largest)
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
    verify: int | None = None        # chats read back at the end (needs the service URL and a key); None: all
    rate: float | None = None        # messages started a second in all (open loop); None: closed loop
    responder: str = "agent"         # a key of RESPONDERS: whose questions are asked


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
    balancer_cpu_seconds: float | None = None                # --balancer: HAProxy in front of the nodes
    node_figures: NodeFigures | None = None                  # --nodes: requests relayed, workspaces held
    measured_seconds: float | None = None                    # --spawn: the wall time the CPU figures cover
    model_latency: float | None = None                       # --spawn with the agent: seconds a model call takes
    model_concurrency: int | None = None                     # --model-concurrency (None: the service's default)
    usage: dict[str, Any] | None = None                      # the agent's model calls over the run (usage_totals)
    exactness: dict[str, Any] | None = None                  # what the chats read back prove (exactness())

    def cpu_per_message(self) -> dict[str, float]:
        """Milliseconds of CPU per customer message delivered, by who spent it; `all`: their sum."""
        spent = {"service": self.service_cpu_seconds, "postgres": self.postgres_cpu_seconds,
                 "simulator": self.simulator_cpu_seconds, "balancer": self.balancer_cpu_seconds,
                 "client": self.client_cpu_seconds}
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
            "balancer_cpu_seconds": None if self.balancer_cpu_seconds is None
            else round(self.balancer_cpu_seconds, 2),
            "cpu_ms_per_message": self.cpu_per_message(),
            "requests_relayed": self.node_figures.relayed if self.node_figures else None,
            "requests_answered": self.node_figures.answered if self.node_figures else None,
            "workspaces_held": list(self.node_figures.held) if self.node_figures else None,
            "responder": o.responder, "model_latency": self.model_latency,
            "model_concurrency": self.model_concurrency, "usage": self.usage, "exactness": self.exactness,
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
        lines.append(f"  bot                {self.bot_line()}")
        if self.usage is not None:
            lines.append(f"  model usage        {usage_line(self.usage)}")
        if self.exactness is not None:
            lines.extend(exactness_lines(self.exactness))
        lines.append(f"  chats verified     {s['chats_verified']}")
        lines.extend(f"    mismatch: {m}" for m in self.mismatches)
        if self.simulator:
            lines.append(f"  simulator          {self.simulator}")
        return "\n".join(lines)

    def bot_line(self) -> str:
        """Who answered, and with the agent of a spawned service, how its model was set."""
        line = RESPONDERS[self.options.responder]
        if self.model_latency is not None:
            line += f", the model simulator taking {self.model_latency:g} s a call"
            line += (", the service's default model concurrency" if self.model_concurrency is None
                     else f", {self.model_concurrency} model calls of a workspace at once")
        return line


def usage_line(usage: dict[str, Any]) -> str:
    latency = usage["average_latency_ms"]
    return (f"{usage['calls']:,} model calls ({usage['replies']:,} replies, {usage['failures']:,} failures), "
            f"tokens {usage['prompt_tokens']:,} prompt + {usage['completion_tokens']:,} completion, "
            f"cost {usage['cost_usd']:.6f} USD, average model latency "
            + ("-" if latency is None else f"{latency:,} ms"))


def exactness_lines(figures: dict[str, Any]) -> list[str]:
    f = figures
    return [
        f"  exactly once       {f['exactly_once']:,} of {f['messages']:,} customer messages answered or handed "
        f"over exactly once ({f['chats_exact']} of {f['chats']} chats read back as planned)",
        f"  answers            {f['answered']:,} answered, {f['handed_over']} handed over; duplicate answers "
        f"{f['duplicate_answers']}, missing {f['missing_answers']}, unexpected hand-overs "
        f"{f['unexpected_handoffs']}; hand-over reasons {f['handover_reasons']}",
        f"  read back          from_customer {f['stored_from_customer']:,} of {f['messages']:,} acknowledged, "
        f"lost {f['lost']}; from_bot {f['stored_from_bot']:,}; chats not found {f['chats'] - f['chats_found']}",
    ]


def p95_ms(seconds: list[float]) -> float | None:
    """The 95th percentile in milliseconds, nearest rank as harness.figures ranks its p50, p90 and p99."""
    if not seconds:
        return None
    ordered = sorted(seconds)
    return round(ordered[max(0, math.ceil(len(ordered) * 0.95) - 1)] * 1e3, 2)


def demo_answers(responder: str) -> dict[str, str]:
    """The exact answer to each topic the responder is asked, from the demo workspace's own data: an FAQ answer by
    its keyword (the agent states the FAQ answer the question matches), the price as the model simulator states
    what quote_price returned for the item."""
    by_keyword = {keyword: answer for keywords, answer in DEMO_ANSWERS for keyword in keywords}
    answers = {topic: by_keyword[topic] for topic in TOPICS[responder] if topic != "price"}
    if "price" in TOPICS[responder]:
        item = next(item for item in DEMO_PRICES if item.name == PRICED_ITEM)
        answers["price"] = price_sentence([{"name": item.name, "price": str(item.price), "currency": item.currency,
                                            "unit": item.unit}])
    return answers


@dataclass
class Customer:
    index: int
    phone: str
    number: Number                  # the workspace's number it writes to
    delivered: int = 0              # messages the service acknowledged
    questions: int = 0              # of those, questions (the rest: the hand-off)
    answered: int = 0               # questions whose expected answer came in time
    sends_seen: int = 0             # sends to the customer in the simulator's sent list, whatever they said
    sent: int = 0                   # messages written, acknowledged or not
    asked: int = 0                  # of those, questions
    handed_off: bool = False        # the hand-off message was acknowledged
    handoff_sent: bool = False      # ... was written
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
        self.target, self.options, self.answers = target, options, answers   # answers None: any send counts
        self.topics = TOPICS[options.responder]
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
            topic = None if no_answer else self.topics[(customer.index + n) % len(self.topics)]
            if topic is not None:   # waiting from before the send: an answer may come before the call returns
                self.start_waiting(customer, self.answers[topic] if self.answers is not None else None)
            customer.sent += 1
            customer.asked += topic is not None
            customer.handoff_sent |= no_answer
            wall_started, started = time.time(), time.perf_counter()
            if not await self.customer_writes(customer, NO_ANSWER_TEXT if no_answer else QUESTIONS[topic], started):
                customer.troubled = True
                self.stop_waiting(customer)
                continue
            customer.delivered += 1
            if no_answer:
                report.handoffs += 1
                customer.handed_off = True
                continue
            customer.questions += 1
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
        customer.sends_seen += 1
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

    # -- the end of the run: every chat read back, and the agent's usage ---------------------------------------

    async def finish(self, since: datetime) -> None:
        """Once the customers are done: the chats read back as soon as they are as planned, the last sends swept
        (answers after a timeout, a duplicate, a bot that spoke after the hand-off), then what the chats prove and
        the agent's usage since `since`. Without a service URL, the sweep alone."""
        if not self.target.service_url:
            await self.sweep()
            return
        async with httpx.AsyncClient(base_url=self.target.service_url, timeout=self.options.request_timeout) as service:
            chats = self.chats_to_read()
            listed = await self.settled_chats(service, chats) if chats else None
            await self.sweep()
            if listed is not None:
                self.check_chats(chats, listed)
            self.report.usage = await self.usage(service, since)

    def chats_to_read(self) -> list[Customer]:
        """Every chat there is a key to read with, or `verify` of them spread over the run."""
        o = self.options
        chats = [c for c in self.customers.values() if c.number.key]
        if o.verify is None or o.verify >= len(chats):
            return chats
        return chats[::max(1, len(chats) // o.verify)][:o.verify] if o.verify > 0 else []

    async def settled_chats(self, service: httpx.AsyncClient, chats: list[Customer]) -> dict[str, dict] | None:
        """The chats as the service holds them once every one is as planned, or as they are after
        READ_BACK_SECONDS (a turn of the model may still be under way when the last customer is done); None when a
        read failed."""
        deadline = trio.current_time() + READ_BACK_SECONDS
        while True:
            listed = await self.list_chats(service, chats)
            if listed is None or trio.current_time() >= deadline or all(
                    as_planned(c, listed.get(c.phone)) for c in chats):
                return listed
            await trio.sleep(0.5)

    async def list_chats(self, service: httpx.AsyncClient, chats: list[Customer]) -> dict[str, dict] | None:
        """`chats` by phone, as the Reporting API lists them, each workspace's read with its key; None when a read
        failed. One request a page, where reading each chat's detail would take the key's whole minute."""
        phones_by_key: dict[str, set[str]] = {}
        for chat in chats:
            phones_by_key.setdefault(chat.number.key, set()).add(chat.phone)
        listed: dict[str, dict] = {}
        for key, phones in phones_by_key.items():
            found = await self.list_workspace(service, key, phones)
            if found is None:
                return None
            listed.update(found)
        return listed

    async def list_workspace(self, service: httpx.AsyncClient, key: str, phones: set[str]) -> dict[str, dict] | None:
        """The chats of `phones` among the workspace's (newest first), paging until all are found or none is left."""
        found: dict[str, dict] = {}
        cursor = None
        while True:
            params = {"limit": READ_BACK_PAGE, **({"cursor": cursor} if cursor else {})}
            try:
                response = await service.get("/api/reporting/v1/conversations", params=params, headers=bearer(key))
            except httpx.HTTPError as err:
                self.report.errors[f"verify_{type(err).__name__}"] += 1
                return None
            if response.status_code != 200:
                self.report.errors[f"verify_http_{response.status_code}"] += 1
                return None
            page = response.json()
            found.update((chat["phone"], chat) for chat in page["data"] if chat["phone"] in phones)
            cursor = page.get("next_cursor")
            if cursor is None or len(found) == len(phones):
                return found

    def check_chats(self, chats: list[Customer], listed: dict[str, dict]) -> None:
        """The exactness figures, and an error for each chat with no earlier error that is not as planned, and for
        each message lost."""
        report = self.report
        report.exactness = exactness(chats, listed)
        report.chats_verified = report.exactness["chats_exact"]
        if report.exactness["lost"]:
            report.errors["messages_lost"] += report.exactness["lost"]
        for chat in chats:
            if chat.troubled or chat_exact(chat, listed.get(chat.phone)):
                continue
            report.errors["chat_mismatch"] += 1
            got = listed.get(chat.phone)
            self.example(f"{chat.phone}: expected {planned_state(chat)} {planned_counts(chat)}, got "
                         + (f"{got['state']} {got['counts']} ({got['handover_reason']})" if got else "no chat")
                         + f"; {chat.sends_seen} sends seen, {chat.answered} expected answers")

    async def usage(self, service: httpx.AsyncClient, since: datetime) -> dict[str, Any] | None:
        """The AI agent's model calls since `since`, summed over the workspaces (each read with its key); None when
        one cannot be read (a key without ai_audit_view, say: said on stderr, not an error of the load)."""
        keys = list(dict.fromkeys(number.key for number in self.target.numbers if number.key))
        if not keys:
            return None
        days: list[dict[str, Any]] = []
        for key in keys:
            try:
                response = await service.get("/api/bot/usage", params={"from": since.isoformat()},
                                             headers=bearer(key))
            except httpx.HTTPError as err:
                print(f"the agent's usage was not read: {type(err).__name__}", file=sys.stderr)
                return None
            if response.status_code != 200:
                print(f"the agent's usage was not read: HTTP {response.status_code}", file=sys.stderr)
                return None
            days += response.json()["data"]
        return usage_totals(days)

    async def progress(self, started: float) -> None:
        while True:
            await trio.sleep(PROGRESS_SECONDS)
            r = self.report
            print(f"[{time.perf_counter() - started:6.1f} s] customers done {r.customers_done}/"
                  f"{self.options.customers}, messages {r.messages_sent}, bot answers {r.bot_answers}, "
                  f"errors {r.error_count()}"
                  + (f", slots missed {self.pace.missed}" if self.pace else ""), file=sys.stderr, flush=True)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


# -- what the chats read back prove --------------------------------------------------------------------------

EXACTNESS = ("chats", "chats_found", "chats_exact", "messages", "exactly_once", "answered", "handed_over",
             "duplicate_answers", "missing_answers", "unexpected_handoffs", "stored_from_customer", "stored_from_bot",
             "lost")


def planned_state(customer: Customer) -> str:
    return "HANDOFF_PENDING" if customer.handoff_sent else "AI_ONLY"


def planned_counts(customer: Customer) -> dict[str, int]:
    """The chat's counts had every message written been kept and every question answered once."""
    return {"messages": customer.sent + customer.asked, "from_customer": customer.sent, "from_bot": customer.asked}


def as_planned(customer: Customer, chat: dict | None) -> bool:
    """The service holds every message written and one answer to each question, and the state they lead to."""
    return chat is not None and chat["state"] == planned_state(customer) and chat["counts"] == planned_counts(customer)


def chat_exact(customer: Customer, chat: dict | None) -> bool:
    """Every message of the chat answered or handed over exactly once: as planned, every message acknowledged,
    every question's expected answer seen in time and no other send."""
    return (as_planned(customer, chat) and customer.delivered == customer.sent
            and customer.answered == customer.sends_seen == customer.asked)


def exactness(chats: list[Customer], listed: dict[str, dict]) -> dict[str, Any]:
    """What the chats read back prove, counted over `chats` (customer messages are those the service
    acknowledged): those answered or handed over exactly once (every message of an exact chat), duplicate answers
    (sends or bot messages beyond one a question), missing ones (a question with no expected answer in time),
    hand-overs planned and not, and messages lost (acknowledged, not in the chat's from_customer)."""
    figures: Counter = Counter()
    reasons: Counter = Counter()
    for customer in chats:
        chat = listed.get(customer.phone)
        counts = chat["counts"] if chat else {"from_customer": 0, "from_bot": 0}
        handed = chat is not None and chat["state"] == "HANDOFF_PENDING"
        if handed:
            reasons[chat["handover_reason"] or "none"] += 1
        exact = chat_exact(customer, chat)
        figures.update({
            "chats": 1, "chats_found": chat is not None, "chats_exact": exact, "messages": customer.delivered,
            "exactly_once": customer.delivered if exact else 0, "answered": customer.answered,
            "handed_over": handed and customer.handed_off, "unexpected_handoffs": handed and not customer.handoff_sent,
            "duplicate_answers": max(0, customer.sends_seen - customer.asked, counts["from_bot"] - customer.asked),
            "missing_answers": customer.questions - customer.answered,
            "stored_from_customer": counts["from_customer"], "stored_from_bot": counts["from_bot"],
            "lost": max(0, customer.delivered - counts["from_customer"]),
        })
    return {name: int(figures[name]) for name in EXACTNESS} | {"handover_reasons": dict(sorted(reasons.items()))}


def usage_totals(days: list[dict[str, Any]]) -> dict[str, Any]:
    """GET /api/bot/usage's rows (by day and model) summed; the average latency weighted by each row's calls."""
    calls = sum(day["calls"] for day in days)
    totals = {name: sum(day[name] for day in days)
              for name in ("calls", "replies", "failures", "prompt_tokens", "completion_tokens")}
    totals["cost_usd"] = round(sum(day["cost_usd"] for day in days), 6)
    totals["average_latency_ms"] = round(sum(day["average_latency_ms"] * day["calls"] for day in days) / calls) \
        if calls else None
    return totals


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
                      None if options.any_answer else demo_answers(options.responder))
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
        since = datetime.now(timezone.utc)   # the agent's usage is read from here
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
        await run.finish(since)
        run.report.machine_cpu_busy = busy_between(machine_started, machine_ended)
        after = await run.stats()
        run.report.simulator = counter_delta(before, after) if before and after else {}
        run.report.client_cpu_seconds = time.process_time() - cpu_started
    return run.report


def simulator_client(target: Target, options: LoadOptions, connections: int) -> httpx.AsyncClient:
    # Idle connections go before Hypercorn's 5 s keep-alive timeout can close one under a new request.
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections, keepalive_expiry=2.0)
    return httpx.AsyncClient(base_url=target.simulator_url, limits=limits, timeout=options.request_timeout)


# -- spawning the service (harness.spawned_service): `serve --demo` alone, or `serve --nodes N` -----------------


async def spawn_and_run(options: LoadOptions, startup_timeout: float, separate_simulator: bool = False,
                        sends_per_second: int = DEFAULT_SENDS_PER_SECOND, model: ModelSetup = ModelSetup()) -> Report:
    """The load against `serve --demo` on a fresh embedded PostgreSQL of its own, with its built-in simulator or
    one in a process of its own, and the bot `model` sets; everything stopped at the end."""
    async with spawned_demo(separate_simulator=separate_simulator, sends_per_second=sends_per_second,
                            startup_timeout=startup_timeout, model=model) as spawned:
        print(f"service {spawned.describe()}", file=sys.stderr, flush=True)
        return await measured_load(spawned, options, sends_per_second)


async def spawn_each(reports: list[Report], options: LoadOptions, models: tuple[ModelSetup, ...],
                     startup_timeout: float, separate_simulator: bool, sends_per_second: int) -> None:
    """spawn_and_run with each of `models` in turn, the same customers each time (each run has a fresh service,
    database and simulator), each run's report appended to `reports`."""
    options = replace(options, start_phone=options.start_phone or random_start_phone())
    for model in models:
        reports.append(await spawn_and_run(options, startup_timeout, separate_simulator, sends_per_second, model))


async def run_on_nodes(reports: list[Report], options: LoadOptions, plan: NodesPlan, server_url: str,
                       postgres: int | None, work_dir: Path) -> int:
    """The load against `serve --nodes N` for each run of the plan in turn, each on a fresh database whose
    workspaces know what the demo's does; each run's report appended to `reports`."""
    # The same customers in every run (each has a fresh database and simulator), so that the runs compare.
    options = replace(options, start_phone=options.start_phone or random_start_phone())

    async def load(spawned: SpawnedService) -> None:
        reports.append(await measured_load(spawned, options, plan.sends_per_second))

    await each_run(plan, seed_demo_knowledge, server_url, postgres, work_dir, load)
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
    report.simulator_cpu_seconds, report.balancer_cpu_seconds = spent.simulator, spent.balancer
    report.mode = "spawn-separate-simulator" if spawned.simulator else "spawn"
    report.nodes, report.sends_per_second = spawned.nodes, sends_per_second
    if spawned.model.agent:
        report.model_latency, report.model_concurrency = spawned.model.latency, spawned.model.concurrency
    return report


def cpu_ratios(summaries: list[dict[str, Any]]) -> list[float | None]:
    """Each run's CPU per customer message, all processes, over the first's (None where not measured)."""
    first = summaries[0]["cpu_ms_per_message"].get("all")
    return [None if not first or s["cpu_ms_per_message"].get("all") is None
            else round(s["cpu_ms_per_message"]["all"] / first, 2) for s in summaries]


def throughput_ratios(summaries: list[dict[str, Any]]) -> list[float]:
    """Each run's customer messages a second over the first run's."""
    first = summaries[0]["messages_per_second"] or 1e-9
    return [round(s["messages_per_second"] / first, 2) for s in summaries]


Row = tuple[str, Any]   # a label, and the cell of one run's summary


def comparison(summaries: list[dict[str, Any]]) -> str:
    """The runs side by side, and each one's throughput as a ratio to the first's."""
    summaries = [{**s, "ratio": ratio, "cpu_ratio": cpu} for s, ratio, cpu in zip(summaries,
                                                                                   throughput_ratios(summaries),
                                                                                   cpu_ratios(summaries))]
    rows = [*speed_rows(), *machine_rows(), *agent_rows(),
            ("errors", lambda s: str(s["error_count"])), ("throughput ratio", lambda s: f"{s['ratio']:.2f}"),
            ("CPU/message ratio (all)", lambda s: figure(s["cpu_ratio"], 2))]
    width = max(14, *(len(cell(s)) + 2 for _, cell in rows for s in summaries))
    heads = run_heads(summaries)
    lines = [f"{'':<26}" + "".join(f"{head:>{width}}" for head in heads)]
    lines += [f"{label:<26}" + "".join(f"{cell(s):>{width}}" for s in summaries) for label, cell in rows]
    return "\n".join(lines)


def run_heads(summaries: list[dict[str, Any]]) -> list[str]:
    """Each run named by what the comparison varies: its node count, or its model latency."""
    if len({s["nodes"] for s in summaries}) > 1:
        return [f"--nodes {s['nodes']}" for s in summaries]
    if len({s["model_latency"] for s in summaries}) > 1:
        return [f"latency {s['model_latency']:g} s" for s in summaries]
    return [f"run {index}" for index, _ in enumerate(summaries, start=1)]


def figure(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def speed_rows() -> list[Row]:
    return [
        ("messages/s (delivered)", lambda s: f"{s['messages_per_second']:,.1f}"),
        ("bot answers/s", lambda s: f"{s['bot_answers_per_second']:,.1f}"),
        ("pace offered / achieved", lambda s: "-" if s["rate"] is None
         else f"{s['rate']:g} / {s['achieved_rate']:g}"),
        ("slots missed", lambda s: "-" if s["slots_missed"] is None else str(s["slots_missed"])),
        ("bot round trip p50 ms", lambda s: figure(s["bot_round_trip_ms"]["p50"])),
        ("bot round trip p95 ms", lambda s: figure(s["bot_round_trip_p95_ms"])),
        ("webhook latency p50 ms", lambda s: figure(s["webhook_latency_ms"]["p50"])),
        ("webhook latency p95 ms", lambda s: figure(s["webhook_latency_p95_ms"])),
    ]


def machine_rows() -> list[Row]:
    def busy(s: dict[str, Any]) -> str:
        """The whole machine's busy share, and the run's own processes' (what else runs takes the rest)."""
        if s["machine_cpu_busy"] is None or s["own_cpu_share"] is None:
            return "-"
        return f"{s['machine_cpu_busy']:.0%} ({s['own_cpu_share']:.0%})"

    return [
        *((f"CPU/message {who} ms", lambda s, who=who: figure(s["cpu_ms_per_message"].get(who), 2))
          for who in ("service", "postgres", "simulator", "balancer", "client", "all")),
        ("machine busy (the run's)", busy),
        ("requests relayed", lambda s: "-" if s["requests_relayed"] is None
         else f"{s['requests_relayed']} of {s['requests_answered']}"),
        ("workspaces held", lambda s: "/".join(map(str, s["workspaces_held"] or [])) or "-"),
    ]


def agent_rows() -> list[Row]:
    """The model's usage and the exactness figures ("-" where not read)."""
    def usage(name: str, form: str = ",") -> Any:
        return lambda s: "-" if s["usage"] is None or s["usage"][name] is None else f"{s['usage'][name]:{form}}"

    def exact(cell: Any) -> Any:
        return lambda s: "-" if s["exactness"] is None else cell(s["exactness"])

    return [
        ("model calls", usage("calls")),
        ("model latency avg ms", usage("average_latency_ms")),
        ("prompt tokens", usage("prompt_tokens")),
        ("completion tokens", usage("completion_tokens")),
        ("model cost USD", usage("cost_usd", ".6f")),
        ("exactly once", exact(lambda f: f"{f['exactly_once']} of {f['messages']}")),
        ("duplicate / missing", exact(lambda f: f"{f['duplicate_answers']} / {f['missing_answers']}")),
        ("lost", exact(lambda f: str(f["lost"]))),
    ]


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
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def latencies(text: str) -> tuple[float, ...]:
    values = tuple(seconds(part) for part in text.split(","))
    if len(values) < 2:
        raise argparse.ArgumentTypeError("two or more latencies in seconds: 0,1")
    return values


def model_concurrency(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 1000:
        raise argparse.ArgumentTypeError("must be 1 to 1000, as INBOX_MODEL_CONCURRENCY")
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
                       help="with --spawn: W workspaces, each with its own business number and what the demo's "
                            "bot knows; customer i writes to workspace i mod W")
    nodes.add_argument("--compare-nodes", type=node_counts, metavar="N,N..",
                       help="the same load against `serve --nodes N` for each N in turn (implies --spawn "
                            "--separate-simulator), each on a fresh database; then the runs side by side")
    nodes.add_argument("--balancer", action="store_true",
                       help="with two nodes or more: HAProxy in front of them sending each workspace's requests to "
                            "its node (docs/nodes.md), the platform posting to it; its CPU is counted")
    add_database_url(nodes, help="with --nodes, --workspaces or --compare-nodes: a PostgreSQL server to use "
                                 "instead of the embedded one (a database of its own is made there for each run "
                                 "and dropped; its CPU is then not measured)")
    bot = parser.add_argument_group("the bot")
    bot.add_argument("--responder", choices=tuple(RESPONDERS), default="agent",
                     help="agent (default): the AI agent, a spawned service asking the model simulator; faq: the "
                          "keyword FAQ bot (a spawned service gets INBOX_MODEL_URL=none). Sets the questions asked")
    bot.add_argument("--model-latency", type=seconds, metavar="S",
                     help="spawned services only: seconds each model call takes (INBOX_MODEL_SIMULATOR_LATENCY; "
                          "default 0)")
    bot.add_argument("--model-concurrency", type=model_concurrency, metavar="N",
                     help="spawned services only: model calls of a workspace in flight at once "
                          "(INBOX_MODEL_CONCURRENCY; default: the service's)")
    bot.add_argument("--compare-model-latency", type=latencies, metavar="S,S..",
                     help="the same load at each model latency in turn (implies --spawn), each against a fresh "
                          "service and database; then the runs side by side. Pace it (--rate): closed loop, "
                          "throughput falls with the latency whatever the service does")
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
    load.add_argument("--no-handoff", action="store_true", help="every message is a question the bot answers")
    load.add_argument("--bot-timeout", type=seconds, default=30.0, help="wait for each bot answer (30 s)")
    load.add_argument("--poll-interval", type=seconds, default=0.1,
                      help="between reads of the simulator's sent list while anyone waits (0.1 s)")
    load.add_argument("--any-answer", action="store_true",
                      help="count any send to the customer as the answer (workspaces whose answers differ from "
                           "the demo's)")
    load.add_argument("--verify", type=int, metavar="K",
                      help="chats read back at the end, spread over the run (default: all; 0: none)")
    args = parser.parse_args(argv)

    options = LoadOptions(customers=args.customers, messages_per_customer=args.messages_per_customer,
                          concurrency=args.concurrency, think_time=args.think_time, start_phone=args.start_phone,
                          handoff=not args.no_handoff, bot_timeout=args.bot_timeout,
                          poll_interval=max(0.005, args.poll_interval), any_answer=args.any_answer,
                          verify=None if args.verify is None else max(0, args.verify), rate=args.rate,
                          responder=args.responder)
    try:
        customer_phones(options.start_phone or random_start_phone(), options.customers)
        args.models = model_setups(args)
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
        base = target_from_ready(ready, args.simulator) if ready else Target("", "")
        target = Target(simulator_url=args.simulator or base.simulator_url,
                        phone_number_id=args.phone_number_id or base.phone_number_id,
                        service_url=args.service or base.service_url, key=args.key or base.key)
        if not target.simulator_url or not target.phone_number_id:
            raise ValueError("give --spawn, --ready-json, --ready-file, or --simulator and --phone-number-id")
    except (ValueError, OSError) as err:
        parser.error(str(err))
    return args, target, options


def model_setups(args: argparse.Namespace) -> tuple[ModelSetup, ...]:
    """The spawned service's bot in each run: one, or one per latency of --compare-model-latency (which implies
    --spawn). The model's options go with a spawned service and the AI agent."""
    model_options = (args.model_latency, args.model_concurrency, args.compare_model_latency)
    if args.compare_model_latency is not None:
        if args.model_latency is not None:
            raise ValueError("--model-latency or --compare-model-latency, not both")
        if args.compare_nodes is not None:
            raise ValueError("--compare-nodes or --compare-model-latency, not both")
        args.spawn = True
    if any(option is not None for option in model_options):
        if not (args.spawn or args.compare_nodes):
            raise ValueError("--model-latency, --model-concurrency and --compare-model-latency go with --spawn")
        if args.responder != "agent":
            raise ValueError("--model-latency, --model-concurrency and --compare-model-latency go with the AI agent")
    if args.responder != "agent":
        return (ModelSetup(agent=False),)
    return tuple(ModelSetup(latency=latency, concurrency=args.model_concurrency)
                 for latency in args.compare_model_latency or (args.model_latency or 0.0,))


def nodes_plan(args: argparse.Namespace) -> NodesPlan | None:
    """The runs of `serve --nodes N` that --nodes, --workspaces or --compare-nodes ask for (None: none asked)."""
    if args.compare_nodes is not None:
        if args.nodes is not None:
            raise ValueError("--nodes or --compare-nodes, not both")
        args.spawn = args.separate_simulator = True   # the simulator's CPU its own in every run
    elif args.nodes is None and args.workspaces is None:
        if args.database_url or args.balancer:
            raise ValueError("--database-url and --balancer go with --nodes, --workspaces or --compare-nodes")
        return None
    elif not args.spawn:
        raise ValueError("--nodes and --workspaces go with --spawn")
    counts = args.compare_nodes or (args.nodes or 1,)
    if args.responder == "agent" and max(counts) > 1:
        args.separate_simulator = True   # the simulator the nodes' parent runs for them plays no model
    if args.balancer and max(counts) < 2:
        raise ValueError("--balancer goes with two nodes or more (--nodes or --compare-nodes)")
    if args.balancer:
        args.separate_simulator = True   # the balancer takes the port the simulator posts to
    return NodesPlan(counts=counts, workspaces=args.workspaces or 1, separate_simulator=args.separate_simulator,
                     sends_per_second=args.sends_per_second, startup_timeout=args.startup_timeout,
                     models=args.models, balancer=args.balancer)


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["--assignment-burst"]:
        import assignment_burst  # beside this script: the burst's own options, figures and verdict
        return assignment_burst.main(given[1:])
    args, target, options = parse_args(argv)
    reports: list[Report] = []
    problem = None
    try:
        if args.plan is not None:   # its own Ctrl-C message; its exit status says no more than `reports` does
            run_on_postgres("load", args.database_url, run_on_nodes, reports, options, args.plan)
        elif target is None:
            trio.run(spawn_each, reports, options, args.models, args.startup_timeout, args.separate_simulator,
                     args.sends_per_second)
        else:
            reports.append(trio.run(run_load, target, options))
    except* CannotRun as failed:
        problem = str(failed.exceptions[0])
    except* KeyboardInterrupt:
        problem = "interrupted" + ("; what it started was stopped" if target is None else "")
    runs = len(args.plan.runs()) if args.plan is not None else len(args.models) if target is None else 1
    if len(reports) < runs:
        if problem:
            print(problem, file=sys.stderr)
        return 1
    for report in reports:
        print(report.text())
    summaries = [report.summary() for report in reports]
    if len(reports) > 1:
        print(comparison(summaries))
        print(json.dumps({"runs": summaries, "throughput_ratios": throughput_ratios(summaries),
                          "cpu_ratios": cpu_ratios(summaries)}), flush=True)
    else:
        print(json.dumps(summaries[0]), flush=True)
    return 1 if any(report.error_count() for report in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
