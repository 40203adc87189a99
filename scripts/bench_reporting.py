"""The Reporting API's reads at scale: one Scale workspace with 10,000 chats and 1,000,000 messages, every read
timed over HTTP against the real service, and the agent inbox's pages as an admin's browser loads them.

    .venv/bin/python scripts/bench_reporting.py [--conversations 10000] [--messages 1000000] [--repeat 100]
    .venv/bin/python scripts/bench_reporting.py --database-url postgresql://postgres@127.0.0.1:5432/postgres
    .venv/bin/python scripts/bench_reporting.py --small --repeat 3          # a smoke run in seconds

1. PostgreSQL: the embedded server (durability off) in a temporary directory, or the server of --database-url
   (its role needs CREATEDB); a fresh database `inbox_bench_<pid>` there, migrated, dropped at the end
   (--keep leaves it, and --reuse NAME benchmarks such a kept database again without seeding).
2. Seed, straight into PostgreSQL with COPY: contacts, chats that lived through the conversation actor's rules
   (bot turns, hand-offs, claims, transfers, releases, resolutions, members opening chats), their messages
   over ~120 days with delivery statuses and receipts, replies' `waited_from` and `answers_message_id`,
   conversation_views and assignment_events; every derived column (unread_count, waiting_since,
   waiting_for_person_since, sla_deadline_at, counts, last message) as the actor would have left it. The
   secondary indexes are dropped for the COPY and rebuilt from their own definitions after it; foreign keys
   are not checked row by row (superuser only), but checked in one pass afterwards. Then VACUUM ANALYZE.
3. The service: `inbox-actors serve --port 0` in a process of its own on that database (its CPU is not the
   client's), a full-access key with a limit of 100,000 a minute and the per-IP ceiling raised, so nothing
   is answered 429.
4. Every read, after a warm-up, `--repeat` times in a row from one client: p50, p99 and rows returned; the
   baseline is GET whoami (authentication, rate buckets and the activity log, no read). A p99 over 50 ms is
   flagged; for the agent inbox's pages (`page: …`, read with the first admin's session cookie: each view's
   first page, a search, the list its script reloads, the busiest chat, the style sheet and script), over 200 ms.
5. EXPLAIN (ANALYZE, BUFFERS) of the slowest read's slowest statement, captured by running the same read
   in-process with the same parameters (`--explain N`: the N slowest).

Exit status 0 when every read answered 200 (targets missed are reported, not failures), 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from bisect import bisect
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from itertools import accumulate
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable
from urllib.parse import urlsplit

import asyncpg
import httpx
import trio
import trio_asyncio
from harness.meters import psutil_cpu_seconds
from harness.postgres import create_database, database_url, drop_database
from harness.processes import cli_command
from trio_asyncio import aio_as_trio

from inbox_actors.access import accounts, sessions
from inbox_actors.reporting import (
    assignment_history,
    attention,
    contact_list,
    conversation_detail,
    conversation_lists,
    csat_responses,
    outbound_messages,
    replies,
    team_report,
    thread,
)
from inbox_actors.team import sla
from persistence.database import Database
from persistence.migrations import migrate

ROOT = Path(__file__).resolve().parent.parent
TARGET_P99_MS = 50.0
# The agent inbox's first load: the page's HTML, answered by the service.
PAGE_TARGET_MS = 200.0
REPORTS_PAGE_TARGET_MS = 300.0
"""The reports page's target (issue 39): a week's charts and tables at 10,000 chats and 1,000,000 messages."""
# Which customer messages opened a conversation (`messages.opens_wait`), as migration 035 marks the messages stored
# before it: the seed writes messages as the actor would, less that flag.
OPENINGS = """
UPDATE messages m SET opens_wait = true
FROM (SELECT id, lag(direction) OVER (PARTITION BY conversation_id ORDER BY sent_at, id) AS before
      FROM messages WHERE conversation_id IS NOT NULL) t
WHERE m.id = t.id AND m.direction = 'inbound' AND m.sender_type = 'customer'
  AND (t.before IS NULL OR t.before = 'outbound')"""
SMALL = (500, 20_000)
FULL = (10_000, 1_000_000)
DAY = 86_400.0
HISTORY_DAYS = 120
SLA_SECONDS = 3600
KEY_LIMIT_PER_MINUTE = 100_000
WORKSPACE_NAME = "Reporting bench"

# -- the vocabulary ------------------------------------------------------------------------------------------

FIRST_NAMES = (
    "Aarav Aditi Akash Ananya Arjun Asha Bhavna Chetan Deepa Dev Divya Farah Gaurav Geeta Harish Isha Jatin Kavya "
    "Kiran Lakshmi Manoj Meera Mohit Neha Nikhil Pooja Pradeep Priya Rahul Ravi Rekha Rohan Sanjay Sara Shreya "
    "Sunil Tanvi Uma Varun Vikram Yash Zoya Maria John Ahmed Fatima Li Chen Olga Pedro Lucia Tom Emma Noah Aisha "
    "Omar Hana Kenji Ines Marco").split()
LAST_NAMES = (
    "Sharma Verma Gupta Patel Reddy Nair Iyer Menon Singh Kaur Das Bose Ghosh Mehta Shah Joshi Kulkarni Desai "
    "Rao Pillai Chopra Kapoor Malhotra Bhat Saxena Agarwal Banerjee Mukherjee Chatterjee Pandey Mishra Tiwari "
    "Yadav Khan Ali Fernandes DSouza Pereira Silva Santos Garcia Lopez Muller Schmidt Rossi Novak Kim Park Tanaka "
    "Wang Zhang Smith Jones Brown Wilson Taylor Martin Dubois Costa Haddad").split()
# Zipf-weighted: the first are talked about most. The text search word sits in the middle of the pack.
PRODUCTS = (
    "phone charger earbuds headphones kettle blender toaster mixer laptop tablet speaker watch backpack wallet "
    "saree kurta shoes sandals jacket umbrella mattress pillow curtains lamp bottle lunchbox cooker fan heater "
    "dehumidifier purifier vacuum iron trimmer dryer camera tripod keyboard mouse monitor router printer cartridge "
    "notebook pen diary perfume lipstick shampoo sunscreen serum moisturiser vitamins protein yoga mat dumbbells "
    "bicycle helmet stroller diapers toys puzzle candles frame vase planter seeds fertiliser ghee tea coffee "
    "spices honey almonds dates chocolate biscuits").split()
TEXT_QUERY = "dehumidifier"
NAME_QUERY = "sharm"
COLOURS = "black white blue red green grey silver gold pink".split()
CITIES = "Mumbai Delhi Bengaluru Chennai Pune Hyderabad Kolkata Jaipur Lucknow Kochi Dubai London".split()
DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
CUSTOMER_LINES = (
    "Hi, what is the price of the {p}?", "Is the {p} available in {c}?", "Where is my order #{o}?",
    "My order #{o} was supposed to arrive on {d}, any update?", "I want to return the {p}, it stopped working.",
    "Can I get a refund for order #{o}?", "Do you deliver to {city}?", "What are your opening hours on {d}?",
    "The {p} arrived damaged, the box was open.", "Do you have a discount code for the {p}?", "Thanks!", "ok",
    "Hello", "Hi", "Is cash on delivery possible for the {p}?", "How long is the warranty on the {p}?",
    "Can you send me the invoice for order #{o}?", "I paid twice for order #{o}, please check.",
    "Which {p} would you recommend for a gift?", "Still waiting for an answer about the {p}",
)
PERSON_LINES = ("Can I talk to a person please?", "I want to speak to a human", "Please connect me to an agent")
BOT_LINES = (
    "The {p} costs {a} rupees, with free delivery above 499.", "We are open 9:00 to 18:00, Monday to Saturday.",
    "Refunds are made within 5 working days of the request.", "Order #{o} is on its way and should arrive by {d}.",
    "Yes, we deliver to {city} in 2 to 4 days.", "The {p} comes with a one year warranty.",
    "You can return the {p} within 10 days of delivery.", "Here is your invoice for order #{o}.",
)
AGENT_LINES = (
    "Hi {f}, this is {agent} from support. Let me check order #{o} for you.",
    "I have issued a refund of {a} rupees for order #{o}.", "The replacement {p} will be dispatched on {d}.",
    "Sorry about the damaged {p}, a pickup is booked for {d}.", "Sure {f}, the {p} is in stock in {c}.",
    "Is there anything else I can help you with?", "Your order #{o} has been delivered to the courier in {city}.",
    "I have applied a discount of 10% on the {p}.",
)
SYSTEM_LINES = (
    ("order_update", "Your order #{o} has been shipped. Track it on our website."),
    ("payment_reminder", "A payment of {a} rupees for order #{o} is due on {d}."),
    (None, "Festive sale: 20% off on every {p} this {d}!"),
    (None, "How did we do? Rate your chat with us from 1 to 5."),
)
ERRORS = ((131026, "Message undeliverable"), (131047, "Re-engagement message"),
          (130429, "Rate limit hit"), (131000, "Something went wrong"))
TAGS = "vip wholesale newsletter b2b returning priority india export".split()
LABELS = "billing delivery returns vip complaint lead".split()
STATUSES = ("New", "Lead", "Customer", "VIP", "Churned")


# -- one chat's life -----------------------------------------------------------------------------------------

AI, PENDING, HUMAN = "AI_ONLY", "HANDOFF_PENDING", "HUMAN_ACTIVE"


@dataclass
class Contact:
    phone: str
    first: str
    name: str
    read_receipts: bool
    created: float


class Chat:
    """One conversation played through the conversation actor's rules; times are epoch seconds.

    A message is a list: [sent_at, sender_type, actor_id, sender_label, type, text, template_name, media_url,
    status, status_at, error_code, error_text, answers (local index), waited_from, receipts, has platform id].
    """

    GAP = 15.0     # at least this between two messages: a reply is delivered before the customer writes again

    def __init__(self, sim: Simulation, contact: Contact, start: float) -> None:
        self.sim, self.rng, self.contact = sim, sim.rng, contact
        self.t = start
        self.msgs: list[list] = []
        self.views: list[tuple] = []          # (member, via, opened_at, marked_read)
        self.events: list[tuple] = []         # (event, at, from, to, by, reason)
        self.state, self.assigned, self.claimed_by = AI, None, None
        self.claimed_at = self.handover_at = self.handover_reason = self.resolved_at = None
        self.waiting_since = self.waiting_for_person_since = None
        self.unread = 0
        self.unread_since: float | None = None
        self.last_customer: int | None = None
        self.last_view: dict[int, float] = {}
        self.never_skimmed = self.rng.random() < 0.3   # nobody opens it while the bot handles it
        self.shift = 0.0
        self.ids: list[int] = []

    # -- the clock: every step moves forward, never closer than GAP to the previous message
    def after(self, low: float, high: float) -> float:
        self.t = max(self.t + self.rng.uniform(low, high), self.msgs[-1][0] + self.GAP if self.msgs else self.t)
        return self.t

    def customer(self, text: str | None = None) -> None:
        rng, sim = self.rng, self.sim
        t = self.after(5, 90)
        kind, media = ("image", f"https://media.example.com/{rng.getrandbits(40):x}.jpg") \
            if rng.random() < 0.03 else ("text", None)
        body = text or (None if kind == "image" and rng.random() < 0.5 else sim.line(CUSTOMER_LINES, self.contact))
        self.msgs.append([t, "customer", None, None, kind, body, None, media, "received", t, None, None, None, None,
                          (), True])
        if not self.unread:
            self.unread_since = t
        self.unread += 1
        self.last_customer = len(self.msgs) - 1
        if self.waiting_since is None:
            self.waiting_since = t
        if self.state != AI and self.waiting_for_person_since is None:
            self.waiting_for_person_since = t

    def reply(self, sender: str, actor: int | None = None, low: float = 2, high: float = 8) -> None:
        rng, sim = self.rng, self.sim
        t = self.after(low, high)
        template = None
        if sender == "bot":
            text, label = sim.line(BOT_LINES, self.contact), "bot"
        elif sender == "agent":
            text, label = sim.line(AGENT_LINES, self.contact, sim.member_names[actor]), sim.member_names[actor]
        else:
            template, line = rng.choice(SYSTEM_LINES)
            text, label = sim.line((line,), self.contact), rng.choice(("campaign", "automation", "Shop key"))
        waited_from = self.waiting_since
        if sender == "agent" and self.waiting_for_person_since is not None:
            waited_from = self.waiting_for_person_since
        answers = self.last_customer if self.waiting_since is not None else None
        status, status_at, error, receipts, has_id = self.delivery(t)
        self.msgs.append([t, sender, actor, label, "template" if template else "text", text, template, None, status,
                          status_at, *(error or (None, None)), answers, waited_from, receipts, has_id])
        if status in ("delivered", "read"):        # it reached the phone before the customer wrote again
            self.waiting_since = None
            if sender == "agent":
                self.waiting_for_person_since = None

    def delivery(self, t: float) -> tuple:
        """(status, status_at, error, receipts, has a platform id) of a send at `t`."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.015:                                     # refused by the platform: never sent
            return "failed", t, rng.choice(ERRORS), (), False
        sent = t + rng.uniform(0.2, 1.5)
        if roll < 0.03:                                      # failed later, by status
            failed = sent + rng.uniform(1, 30)
            return "failed", failed, rng.choice(ERRORS), (("sent", sent), ("failed", failed)), True
        if roll < 0.04:                                      # never got further than sent
            return "sent", sent, None, (("sent", sent),), True
        delivered = sent + rng.uniform(0.5, 8)
        if self.contact.read_receipts and rng.random() < 0.85:
            read = delivered + rng.expovariate(1 / 1800)
            return "read", read, None, (("sent", sent), ("delivered", delivered), ("read", read)), True
        return "delivered", delivered, None, (("sent", sent), ("delivered", delivered)), True

    def view(self, member: int, low: float = 5, high: float = 120) -> None:
        t = self.after(low, high)
        last = self.last_view.get(member)
        if self.unread or last is None or t - last >= 60:
            via = "panel" if self.rng.random() < 0.1 else "inbox"
            self.views.append((member, via, t, self.unread))
            self.last_view[member] = t
            self.unread = 0
            self.unread_since = None

    def event(self, event: str, to: int | None, by: int | None, reason: str | None = None,
              low: float = 5, high: float = 60) -> float:
        t = self.after(low, high)
        self.events.append((event, t, self.assigned, to, by, reason))
        return t

    def hand_off(self, reason: str) -> None:
        self.state, self.handover_reason, self.handover_at = PENDING, reason, self.after(1, 4)
        if self.waiting_since is not None and self.waiting_for_person_since is None:
            self.waiting_for_person_since = self.handover_at

    def claim(self, member: int, low: float = 60, high: float = 3 * 3600) -> None:
        t = self.event("claimed", member, member, low=low, high=high)
        if self.state == AI:
            self.handover_reason, self.handover_at = "claimed_from_bot", t
            if self.waiting_since is not None and self.waiting_for_person_since is None:
                self.waiting_for_person_since = t
        self.state, self.assigned, self.claimed_by, self.claimed_at = HUMAN, member, member, t

    def transfer(self) -> None:
        to = self.sim.pick_member(exclude=self.assigned)
        by = self.assigned if self.rng.random() < 0.7 else self.sim.admins[0]
        t = self.event("transferred", to, by, self.rng.choice(("shift change", "needs billing", None)))
        self.assigned, self.claimed_by, self.claimed_at = to, to, t

    def release(self) -> None:
        self.event("released", None, self.assigned)
        self.state, self.assigned, self.claimed_by = PENDING, None, None

    def resolve(self) -> None:
        by = self.assigned or self.sim.pick_member()
        self.resolved_at = self.event("resolved", None, by, low=30, high=600)
        self.state, self.assigned, self.claimed_by = AI, None, None
        self.waiting_for_person_since = None

    # -- a turn: the customer writes, the bot or the team answers (or not)
    def turn(self, cap: int) -> None:
        rng, sim = self.rng, self.sim
        start = len(self.msgs)
        if rng.random() < 0.06 and cap > 2:
            self.reply("system", low=0, high=60)
        for _ in range(min(1 + (rng.random() < 0.35) + (rng.random() < 0.1), cap - (len(self.msgs) - start) - 1)):
            self.customer()
        room = cap - (len(self.msgs) - start)
        if self.state == AI:
            roll = rng.random()
            if roll < 0.10:
                reason = rng.choice(("customer_asked_for_person", "bot_has_no_answer"))
                if reason == "customer_asked_for_person" and room > 2:
                    self.customer(rng.choice(PERSON_LINES))
                    room -= 1
                self.hand_off(reason)
                if rng.random() < 0.6 and room >= 2:
                    self.human_answer(sim.pick_member(), room)
            elif roll < 0.12 and room >= 2:
                self.human_answer(sim.pick_member(), room)
            elif room >= 1:
                self.reply("bot")
                if rng.random() < 0.3 and room >= 3:
                    self.customer()
                    self.reply("bot")
            if self.state == AI and not self.never_skimmed and rng.random() < 0.4:
                self.view(sim.pick_member(), 60, 6 * 3600)
        elif self.state == PENDING:
            if rng.random() < 0.75 and room >= 1:
                self.human_answer(sim.pick_member(), room)
        elif room >= 1:
            if rng.random() < 0.08:
                self.transfer()
            self.human_answer(self.assigned, room)

    def human_answer(self, member: int, room: int) -> None:
        """A member claims the chat if it is not theirs, opens it and replies; then perhaps resolves it."""
        if self.state != HUMAN:
            self.claim(member)
        self.view(self.assigned)
        self.reply("agent", self.assigned, 30, 1800)
        if self.rng.random() < 0.3 and room >= 2:
            self.reply("agent", self.assigned, 20, 300)
        roll = self.rng.random()
        if roll < 0.35:
            self.resolve()
        elif roll < 0.39:
            self.release()

    def tail(self, remaining: int, final: str, waits: bool, end: float) -> None:
        """The last `remaining` messages, leaving the chat in state `final`, the customer waiting or not."""
        rng, sim = self.rng, self.sim
        self.t = max(self.t, end - rng.uniform(0, 600))
        if final == AI and self.state != AI or final == PENDING and self.state == HUMAN:
            self.resolve()
        if final == PENDING:
            waits = True
        if waits:
            for _ in range(remaining):
                self.customer()
            if final == PENDING and self.state == AI:
                self.hand_off(rng.choice(("customer_asked_for_person", "bot_has_no_answer")))
            elif final == HUMAN and self.state != HUMAN:
                self.claim(sim.pick_member(), 60, 1800)
            if final == HUMAN and rng.random() < 0.3:
                self.view(self.assigned)       # seen, not answered yet
            return
        for _ in range(remaining - 1):
            self.customer()
        if final == AI:
            self.reply("bot")
            if not self.never_skimmed and rng.random() < 0.6:
                self.view(sim.pick_member(), 60, 6 * 3600)
        else:
            if self.state != HUMAN:
                self.claim(sim.pick_member(), 60, 1800)
            self.view(self.assigned)
            self.reply("agent", self.assigned, 30, 900)


class Simulation:
    """Every chat of the workspace, played out; then numbered in time order and laid out as table rows."""

    def __init__(self, conversations: int, messages: int, members: list[tuple[int, str, str]], workspace_id: int,
                 now: float, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.now, self.workspace_id = now, workspace_id
        self.member_names = {member_id: name for member_id, name, _ in members}
        self.admins = [member_id for member_id, _, role in members if role == "admin"]
        agents = [member_id for member_id, _, role in members if role == "agent"]
        # Some agents carry far more chats than others.
        self.agents, self.agent_weights = agents, list(accumulate(1 / (i + 1) ** 0.8 for i in range(len(agents))))
        self.product_weights = list(accumulate(1 / (i + 1) for i in range(len(PRODUCTS))))
        self.conversations, self.messages = conversations, messages

    def pick_member(self, exclude: int | None = None) -> int:
        while True:
            member = self.agents[bisect(self.agent_weights, self.rng.random() * self.agent_weights[-1])]
            if member != exclude or len(self.agents) == 1:
                return member

    def product(self) -> str:
        return PRODUCTS[bisect(self.product_weights, self.rng.random() * self.product_weights[-1])]

    def line(self, lines: tuple, contact: Contact, agent: str = "") -> str:
        rng = self.rng
        template = rng.choice(lines)
        if "{" not in template:
            return template
        return template.format(p=self.product(), c=rng.choice(COLOURS), o=rng.randint(100000, 999999),
                               d=rng.choice(DAYS), city=rng.choice(CITIES), a=rng.randint(199, 9999),
                               f=contact.first or "there", agent=agent.split(" ")[0])

    def contacts(self, count: int) -> list[Contact]:
        rng, phones = self.rng, set()
        made = []
        while len(made) < count:
            phone = f"91{rng.randint(6_000_000_000, 9_999_999_999)}"
            if phone in phones:
                continue
            phones.add(phone)
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            name = "" if rng.random() < 0.04 else (first if rng.random() < 0.15 else f"{first} {last}")
            made.append(Contact(phone, first if name else "", name, rng.random() > 0.15, 0.0))
        return made

    def sizes(self) -> list[int]:
        """Messages per chat: skewed (most chats short, a few long), at least 2, summing to the total."""
        rng, n = self.rng, self.conversations
        raw = [rng.lognormvariate(0, 1.1) for _ in range(n)]
        scale = (self.messages - 2 * n) / sum(raw)
        sizes = [2 + int(value * scale) for value in raw]
        for i in rng.sample(range(n), k=min(n, self.messages - sum(sizes))):
            sizes[i] += 1
        return sizes

    def play(self) -> list[Chat]:
        rng, now = self.rng, self.now
        contacts = self.contacts(self.conversations)
        chats = []
        for contact, size in zip(contacts, self.sizes()):
            end_age = min(HISTORY_DAYS - 1, rng.expovariate(1 / 25)) * DAY
            end = now - end_age - rng.uniform(120, 3600)
            span = min(HISTORY_DAYS * DAY - end_age, size * rng.uniform(0.2, 2.0) * DAY)
            chat = Chat(self, contact, end - span * rng.random() ** 0.5)
            contact.created = chat.t - rng.uniform(0, 60)
            final = rng.choices((AI, PENDING, HUMAN), (0.55, 0.15, 0.30))[0]
            waits = rng.random() < {AI: 0.1, PENDING: 1.0, HUMAN: 0.4}[final]
            turns = max(1, size // 3)
            mean_gap = max(120.0, (end - chat.t) / turns / 1.3)
            while size - len(chat.msgs) > 8:
                chat.turn(min(8, size - len(chat.msgs) - 1))
                chat.t += rng.expovariate(1 / mean_gap) + 60
            chat.tail(size - len(chat.msgs), final, waits, end)
            latest = max([chat.msgs[-1][0], *(v[2] for v in chat.views), *(e[1] for e in chat.events)])
            chat.shift = max(0.0, latest - (now - 60))
            chats.append(chat)
        return chats


# -- rows ----------------------------------------------------------------------------------------------------

CONTACT_COLUMNS = ("id", "workspace_id", "phone", "name", "email", "company", "status", "tags", "notes",
                   "custom_attributes", "opted_out", "opted_out_at", "read_receipts", "version", "created_at",
                   "updated_at")
CONVERSATION_COLUMNS = (
    "id", "workspace_id", "phone", "contact_id", "state", "channel", "handover_reason", "handover_at",
    "assigned_to", "claimed_by", "claimed_at", "resolved_at", "last_customer_message_at", "waiting_since",
    "waiting_for_person_since", "sla_deadline_at", "unread_count", "unread_since", "labels", "count_messages",
    "count_from_customer", "count_from_bot", "last_message_id", "last_activity_at", "version", "created_at",
    "updated_at", "last_customer_message_id")
MESSAGE_COLUMNS = (
    "id", "workspace_id", "conversation_id", "platform_message_id", "direction", "sender_type", "actor_id",
    "sender_label", "type", "text", "template_name", "template_language", "media_url", "status", "source",
    "error_code", "error_text", "answers_message_id", "waited_from", "sent_at", "status_at")
RECEIPT_COLUMNS = ("message_id", "status", "at")
VIEW_COLUMNS = ("id", "conversation_id", "member_id", "via", "opened_at", "marked_read", "seen_through_message_id")
# What each member has read of each chat: as their opens left it (an open reads every message stored by then).
READ_COLUMNS = ("conversation_id", "member_id", "read_through_message_id", "read_at")
EVENT_COLUMNS = ("id", "conversation_id", "event", "at", "from_member", "to_member", "by_member", "reason", "source")
SURVEY_COLUMNS = ("id", "workspace_id", "conversation_id", "member_id", "resolved_at", "status", "created_at", "rating",
                  "rated_at", "comment_invited_at", "comment", "commented_at")
# A satisfaction survey after a resolve: how often one is answered, and the ratings' weights (5 down to 1).
SURVEY_ANSWERED = 0.35
RATING_WEIGHTS = (50, 25, 12, 7, 6)


def _surveys(rng: random.Random, ws: int, events: list[tuple]) -> list[tuple]:
    """A survey after every resolve by a member, a third of them rated a few minutes later, a quarter of those with a
    comment (what the team report's satisfaction and the reports page read)."""
    surveys = []
    for t, cid, event, _, to, by, _ in events:
        if event != "resolved" or by is None:
            continue
        rated = rng.random() < SURVEY_ANSWERED
        rating = rng.choices((5, 4, 3, 2, 1), RATING_WEIGHTS)[0] if rated else None
        rated_at = t + rng.uniform(20, 900) if rated else None
        comment = rated and rng.random() < 0.25
        surveys.append((len(surveys) + 1, ws, cid, by, _at(t), "sent", _at(t + 1), rating, _at(rated_at),
                        _at(rated_at + 1) if rated else None, "Thanks, quick and clear." if comment else None,
                        _at(rated_at + 60) if comment else None))
    return surveys


def _at(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, timezone.utc)


def table_rows(sim: Simulation, chats: list[Chat]) -> dict[str, tuple[tuple[str, ...], list[tuple]]]:
    """Every table's rows, ids given in time order (as the writers would have: a chat's messages interleave
    with every other chat's in the heap, not side by side)."""
    rng, ws, now = sim.rng, sim.workspace_id, sim.now
    chats.sort(key=lambda chat: chat.msgs[0][0] - chat.shift)
    extra = sim.contacts(len(chats) // 20)          # contacts made by API, with no chat yet
    for contact in extra:
        contact.created = now - rng.uniform(0, HISTORY_DAYS * DAY)
    known = {chat.contact.phone for chat in chats}
    extra = [contact for contact in extra if contact.phone not in known]
    everyone = sorted([chat.contact for chat in chats] + extra, key=lambda contact: contact.created)
    contact_ids = {}
    contacts = []
    for contact_id, contact in enumerate(everyone, 1):
        contact_ids[contact.phone] = contact_id
        attributes = {} if rng.random() < 0.5 else {"plan": rng.choice(("basic", "plus", "pro")),
                                                    "city": rng.choice(CITIES), "orders": rng.randint(0, 40)}
        opted_out = rng.random() < 0.02
        slug = contact.name.lower().replace(" ", ".") or f"c{contact_id}"
        contacts.append((
            contact_id, ws, contact.phone, contact.name,
            f"{slug}@example.com" if rng.random() < 0.4 else None,
            rng.choice(("Acme Traders", "Sunrise Foods", "Blue Ocean Exports", "Metro Retail")) if rng.random() < 0.3
            else None,
            rng.choice(STATUSES), rng.sample(TAGS, rng.randint(1, 3)) if rng.random() < 0.4 else [],
            "Prefers calls after 6 pm" if rng.random() < 0.1 else None, json.dumps(attributes), opted_out,
            _at(contact.created + DAY) if opted_out else None, contact.read_receipts, 1 + rng.randint(0, 3),
            _at(contact.created), _at(contact.created + rng.uniform(0, 30 * DAY) if rng.random() < 0.3
                                     else contact.created)))

    order = sorted((message[0] - chat.shift, chat_index, local)
                   for chat_index, chat in enumerate(chats) for local, message in enumerate(chat.msgs))
    for chat in chats:
        chat.ids = [0] * len(chat.msgs)
    for message_id, (_, chat_index, local) in enumerate(order, 1):
        chats[chat_index].ids[local] = message_id
    messages, receipts = [], []
    for message_id, (_, chat_index, local) in enumerate(order, 1):
        chat = chats[chat_index]
        m, shift = chat.msgs[local], chat.shift
        sender = m[1]
        status, status_at, kept = m[8], m[9], m[14]
        if status == "read" and status_at - shift > now:       # not read yet, as of now
            kept = kept[:2]
            status, status_at = "delivered", kept[-1][1]
        for receipt_status, at in kept:
            receipts.append((message_id, receipt_status, _at(at - shift)))
        messages.append((
            message_id, ws, chat_index + 1,
            (f"wamid.{'in' if sender == 'customer' else 'out'}.{message_id:09d}" if m[15] else None),
            "inbound" if sender == "customer" else "outbound", sender, m[2], m[3], m[4], m[5], m[6],
            "en" if m[6] else None, m[7], status, "whatsapp", m[10], m[11],
            chat.ids[m[12]] if m[12] is not None else None, _at(m[13] - shift if m[13] is not None else None),
            _at(m[0] - shift), _at(status_at - shift)))

    conversations, views, events = [], [], []
    for chat_index, chat in enumerate(chats):
        conversation_id, shift = chat_index + 1, chat.shift

        def at(seconds, shift=shift):
            return _at(None if seconds is None else seconds - shift)

        last = chat.msgs[-1]
        counts = [0, 0]
        for m in chat.msgs:
            counts[0] += m[1] == "customer"
            counts[1] += m[1] == "bot"
        customer_last = chat.msgs[chat.last_customer][0] if chat.last_customer is not None else None
        person_since = chat.waiting_for_person_since
        conversations.append((
            conversation_id, ws, chat.contact.phone, contact_ids[chat.contact.phone], chat.state,
            "web_client" if rng.random() < 0.01 else "whatsapp", chat.handover_reason, at(chat.handover_at),
            chat.assigned, chat.claimed_by, at(chat.claimed_at), at(chat.resolved_at), at(customer_last),
            at(chat.waiting_since), at(person_since), at(person_since + SLA_SECONDS if person_since else None),
            chat.unread, at(chat.unread_since),
            rng.sample(LABELS, rng.randint(1, 2)) if rng.random() < 0.2 else [], len(chat.msgs),
            counts[0], counts[1], chat.ids[-1], at(last[0]), len(chat.msgs) * 2 + len(chat.events),
            at(chat.msgs[0][0]),
            at(max([last[0], *(e[1] for e in chat.events[-1:]), *(v[2] for v in chat.views[-1:])])),
            chat.ids[chat.last_customer] if chat.last_customer is not None else None))
        times = [m[0] for m in chat.msgs]     # an open has seen every message of the chat stored by then
        views += [(t - shift, conversation_id, member, via, marked, chat.ids[i - 1] if (i := bisect(times, t)) else 0)
                  for member, via, t, marked in chat.views]
        events += [(t - shift, conversation_id, event, src, to, by, reason)
                   for event, t, src, to, by, reason in chat.events]
    views.sort(key=lambda view: view[:2])
    reads: dict[tuple[int, int], tuple[int, float]] = {}
    for t, cid, member, _, _, seen in views:   # oldest first: each member's last open of a chat wins
        if member is not None:
            reads[(cid, member)] = (seen, t)
    events.sort(key=lambda event: event[:2])
    return {
        "csat_surveys": (SURVEY_COLUMNS, _surveys(rng, ws, events)),
        "contacts": (CONTACT_COLUMNS, contacts),
        "conversations": (CONVERSATION_COLUMNS, conversations),
        "messages": (MESSAGE_COLUMNS, messages),
        "receipts": (RECEIPT_COLUMNS, receipts),
        "conversation_views": (VIEW_COLUMNS, [(i, cid, member, via, _at(t), marked, seen)
                                              for i, (t, cid, member, via, marked, seen) in enumerate(views, 1)]),
        "assignment_events": (EVENT_COLUMNS, [(i, cid, event, _at(t), src, to, by, reason, "events")
                                              for i, (t, cid, event, src, to, by, reason) in enumerate(events, 1)]),
        "member_chat_reads": (READ_COLUMNS, [(cid, member, seen, _at(t))
                                             for (cid, member), (seen, t) in sorted(reads.items())]),
    }


# -- the database --------------------------------------------------------------------------------------------

SEEDED_TABLES = ("contacts", "conversations", "messages", "receipts", "conversation_views", "assignment_events",
                 "member_chat_reads", "csat_surveys")
SEQUENCED = ("contacts", "conversations", "messages", "conversation_views", "assignment_events", "csat_surveys")
FOREIGN_KEYS_CHECK = """
SELECT (SELECT count(*) FROM conversations c LEFT JOIN contacts k ON k.id = c.contact_id WHERE k.id IS NULL)
     + (SELECT count(*) FROM messages m LEFT JOIN conversations c ON c.id = m.conversation_id WHERE c.id IS NULL)
     + (SELECT count(*) FROM messages m LEFT JOIN messages a ON a.id = m.answers_message_id
        WHERE m.answers_message_id IS NOT NULL AND a.id IS NULL)
     + (SELECT count(*) FROM messages m LEFT JOIN members a ON a.id = m.actor_id
        WHERE m.actor_id IS NOT NULL AND a.id IS NULL)
     + (SELECT count(*) FROM receipts r LEFT JOIN messages m ON m.id = r.message_id WHERE m.id IS NULL)
     + (SELECT count(*) FROM conversation_views v LEFT JOIN conversations c ON c.id = v.conversation_id
        WHERE c.id IS NULL)
     + (SELECT count(*) FROM assignment_events e LEFT JOIN conversations c ON c.id = e.conversation_id
        WHERE c.id IS NULL)
"""


@dataclass
class Workspace:
    workspace_id: int
    key: str
    session: str              # the first admin's dashboard session: the agent inbox's pages read with it
    members: list[tuple[int, str, str]]


async def make_workspace(db: Database, now: datetime) -> Workspace:
    created = await accounts.create_workspace(db, name=WORKSPACE_NAME, plan="scale")
    workspace_id = created.workspace_id
    await sla.set_target(db, workspace_id, SLA_SECONDS)
    # Recording began before the oldest message.
    await db.execute("UPDATE workspaces SET created_at = $2 WHERE id = $1", workspace_id,
                     now - timedelta(days=HISTORY_DAYS + 1))
    members = []
    for i in range(20):
        role = "admin" if i < 2 else "agent"
        name = f"{FIRST_NAMES[(i * 7) % len(FIRST_NAMES)]} {LAST_NAMES[(i * 11 + 3) % len(LAST_NAMES)]}"
        member_id = await accounts.add_member(db, workspace_id=workspace_id, name=name, role=role,
                                              email=f"member{i + 1}@bench.example.com")
        members.append((member_id, name, role))
    return Workspace(workspace_id, await issue_key(db, workspace_id, members[0][0]),
                     await open_session(db, members[0][0]), members)


async def open_session(db: Database, member_id: int) -> str:
    token, _ = await sessions.create_session(db, member_id=member_id, hours=2)
    return token


async def issue_key(db: Database, workspace_id: int, admin_id: int) -> str:
    issued = await accounts.create_key(db, workspace_id=workspace_id, member_id=admin_id,
                                       name=f"bench {os.getpid()}", scopes=["all"],
                                       rate_limit_per_minute=KEY_LIMIT_PER_MINUTE)
    return issued.key


async def existing_workspace(db: Database) -> Workspace:
    row = await db.fetchrow("SELECT id FROM workspaces WHERE name = $1 ORDER BY id LIMIT 1", WORKSPACE_NAME)
    if row is None:
        raise SystemExit(f"no workspace named {WORKSPACE_NAME!r} in that database: seed it first (--keep)")
    members = [(r["id"], r["name"], r["role"]) for r in await db.fetch(
        "SELECT id, name, role FROM members WHERE workspace_id = $1 ORDER BY id", row["id"])]
    return Workspace(row["id"], await issue_key(db, row["id"], members[0][0]), await open_session(db, members[0][0]),
                     members)


async def load(url: str, tables: dict[str, tuple[tuple[str, ...], list[tuple]]]) -> list[tuple[str, int, float]]:
    """COPY every table in; secondary indexes dropped first and rebuilt after. (table, rows, seconds)."""
    conn = await aio_as_trio(asyncpg.connect)(url)
    run = aio_as_trio
    try:
        superuser = await run(conn.fetchval)("SELECT current_setting('is_superuser') = 'on'")
        indexes = await run(conn.fetch)(
            """SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS definition
               FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
               WHERE t.relname = ANY($1::text[]) AND t.relnamespace = 'public'::regnamespace
                 AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)""",
            list(SEEDED_TABLES))
        for index in indexes:
            await run(conn.execute)(f"DROP INDEX {index['name']}")
        if superuser:   # foreign keys are checked in one pass below, not row by row
            await run(conn.execute)("SET session_replication_role = replica")
        timings = []
        for table in SEEDED_TABLES:
            columns, rows = tables[table]
            started = time.perf_counter()
            for first in range(0, len(rows), 100_000):
                await run(conn.copy_records_to_table)(table, records=rows[first:first + 100_000],
                                                      columns=list(columns))
            timings.append((table, len(rows), time.perf_counter() - started))
        await run(conn.execute)("SET session_replication_role = DEFAULT")
        started = time.perf_counter()
        await run(conn.execute)(OPENINGS)
        timings.append(("messages that opened a conversation marked", 0, time.perf_counter() - started))
        await run(conn.execute)("SET maintenance_work_mem = '512MB'")
        started = time.perf_counter()
        for index in indexes:
            await run(conn.execute)(index["definition"])
        timings.append((f"{len(indexes)} secondary indexes rebuilt", 0, time.perf_counter() - started))
        if superuser:
            broken = await run(conn.fetchval)(FOREIGN_KEYS_CHECK)
            if broken:
                raise RuntimeError(f"the seed broke {broken} foreign keys")
        for table in SEQUENCED:
            await run(conn.execute)(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
        started = time.perf_counter()
        await run(conn.execute)("VACUUM ANALYZE")
        timings.append(("VACUUM ANALYZE", 0, time.perf_counter() - started))
    finally:
        await run(conn.close)()
    return timings


# -- the reads -----------------------------------------------------------------------------------------------

Read = Callable[[Any, datetime, dict[str, str]], Awaitable[Any]]   # (db, now, params)


@dataclass
class Call:
    name: str
    path: str
    params: dict[str, str] = field(default_factory=dict)
    read: Read | None = None          # the same read in-process, for EXPLAIN
    times: list[float] = field(default_factory=list)
    rows: int = 0
    errors: list[str] = field(default_factory=list)
    service_cpu_ms: float = float("nan")     # the service process's CPU time a call
    target_ms: float = TARGET_P99_MS

    def percentile(self, fraction: float) -> float:
        ordered = sorted(self.times)
        return ordered[max(0, math.ceil(len(ordered) * fraction) - 1)] * 1e3 if ordered else float("nan")


def rows_in_page(html: str) -> int:
    """The rows an agent inbox page shows: chats in a list, messages in a chat."""
    return html.count('<li class="chat-row') or html.count('<li class="msg')


def rows_in(body: Any) -> int:
    if not isinstance(body, dict):
        return 0
    for name in ("data", "contacts", "replies", "seen_by", "by_assignee"):
        if isinstance(body.get(name), list):
            return len(body[name])
    return 1


@dataclass
class Targets:
    phone: str               # the busiest chat
    chat_messages: int
    assignee: int            # the member holding the most chats
    digits: str              # part of a phone number in the default window
    recent_phone: str        # a chat active lately
    chats: int


async def find_targets(db: Database, workspace_id: int) -> Targets:
    busiest = await db.fetchrow("SELECT phone, count_messages FROM conversations WHERE workspace_id = $1"
                                " ORDER BY count_messages DESC, id LIMIT 1", workspace_id)
    assignee = await db.fetchval("SELECT assigned_to FROM conversations WHERE workspace_id = $1"
                                 " AND assigned_to IS NOT NULL GROUP BY assigned_to ORDER BY count(*) DESC,"
                                 " assigned_to LIMIT 1", workspace_id)
    recent = await db.fetchval("SELECT phone FROM conversations WHERE workspace_id = $1"
                               " ORDER BY last_activity_at DESC LIMIT 1 OFFSET 10", workspace_id)
    chats = await db.fetchval("SELECT count(*) FROM conversations WHERE workspace_id = $1", workspace_id)
    return Targets(busiest["phone"], busiest["count_messages"], assignee, recent[4:9], recent, chats)


def build_calls(ws: int, t: Targets, history_since: str) -> list[Call]:
    v1, chat = "/api/reporting/v1", f"/api/reporting/v1/conversations/{t.phone}"

    def listed(name, params):
        return Call(name, f"{v1}/conversations", params,
                    lambda db, now, p: conversation_lists.conversations(db, ws, p, now, None))

    def wrap(name, path, params, read):
        return Call(name, path, params, read)

    calls = [
        Call("whoami (baseline)", f"{v1}/whoami"),
        listed("conversations", {}),
        listed("conversations unread=true", {"unread": "true"}),
        listed("conversations needs_reply=true", {"needs_reply": "true"}),
        listed("conversations state=HANDOFF_PENDING", {"state": "HANDOFF_PENDING"}),
        listed(f"conversations assigned_to={t.assignee}", {"assigned_to": str(t.assignee)}),
        listed("conversations sla_breached=true", {"sla_breached": "true"}),
        listed(f"conversations q={NAME_QUERY}", {"q": NAME_QUERY}),
        listed(f"conversations q={t.digits}", {"q": t.digits}),
        listed("conversations sort=waiting_longest", {"sort": "waiting_longest"}),
        listed("conversations deep page", {"limit": "200", "since": history_since}),
        wrap("unread-summary", f"{v1}/conversations/unread-summary", {},
             lambda db, now, p: conversation_lists.unread_summary(db, ws, p, now, None)),
        wrap("unanswered older_than=1h", f"{v1}/conversations/unanswered", {"older_than": "1h"},
             lambda db, now, p: conversation_lists.unanswered(db, ws, p, now, None)),
        wrap("chat detail", chat, {},
             lambda db, now, p: conversation_detail.find_detail_by_raw_phone(db, ws, t.phone, now, None)),
        wrap("messages asc", f"{chat}/messages", {},
             lambda db, now, p: thread.messages(db, ws, t.phone, p, None)),
        wrap("messages desc", f"{chat}/messages", {"order": "desc"},
             lambda db, now, p: thread.messages(db, ws, t.phone, p, None)),
        wrap("messages expand=receipts", f"{chat}/messages", {"expand": "receipts"},
             lambda db, now, p: thread.messages(db, ws, t.phone, p, None)),
        wrap("messages deep page", f"{chat}/messages", {"limit": "200"},
             lambda db, now, p: thread.messages(db, ws, t.phone, p, None)),
        wrap("receipts", f"{chat}/receipts", {}, lambda db, now, p: thread.receipts(db, ws, t.phone, p, None)),
        wrap("seen-by", f"{chat}/seen-by", {}, lambda db, now, p: attention.seen_by(db, ws, t.phone, None)),
        wrap("views", f"{chat}/views", {}, lambda db, now, p: attention.views(db, ws, t.phone, p, None)),
        wrap("replies (chat)", f"{chat}/replies", {},
             lambda db, now, p: replies.chat_replies(db, ws, t.phone, p, None)),
        wrap("assignment-history", f"{chat}/assignment-history", {},
             lambda db, now, p: assignment_history.assignment_history(db, ws, t.phone, None)),
    ]
    for name, params in (("replies", {}), (f"replies agent_id={t.assignee}", {"agent_id": str(t.assignee)}),
                         ("replies sender_type=bot", {"sender_type": "bot"}),
                         ("replies phone=<recent chat>", {"phone": t.recent_phone})):
        calls.append(wrap(name, f"{v1}/replies", params,
                          lambda db, now, p: replies.workspace_replies(db, ws, p, now, None)))
    for status in ("failed", "delivered"):
        calls.append(wrap(f"messages status={status}", f"{v1}/messages", {"status": status},
                          lambda db, now, p: outbound_messages.outbound_messages(db, ws, p, now, None)))
    for name, params in (("contacts/paginated", {}), ("contacts/paginated page=50", {"page": "50"}),
                         (f"contacts/paginated search={NAME_QUERY}", {"search": NAME_QUERY}),
                         (f"contacts/paginated search={TEXT_QUERY}", {"search": TEXT_QUERY})):
        calls.append(wrap(name, "/api/contacts/paginated", params,
                          lambda db, now, p: contact_list.contact_page(db, ws, p, None)))
    calls.append(wrap("contacts/{phone}", f"/api/contacts/{t.phone}", {},
                      lambda db, now, p: contact_list.one_contact(db, ws, t.phone, None)))
    # The agent inbox, as an admin's browser loads it (the session cookie; the whole HTML page).
    for view in ("queue", "mine", "unassigned", "open", "resolved"):
        calls.append(Call(f"page: inbox view={view}", "/app/inbox", {"view": view}, target_ms=PAGE_TARGET_MS))
    calls.append(Call(f"page: inbox q={NAME_QUERY}", "/app/inbox", {"q": NAME_QUERY}, target_ms=PAGE_TARGET_MS))
    calls.append(Call("page: inbox list (live refresh)", "/app/inbox/list", {"view": "open"},
                      target_ms=PAGE_TARGET_MS))
    calls.append(Call("page: busiest chat (opens it)", f"/app/chats/{t.phone}", {}, target_ms=PAGE_TARGET_MS))
    calls.append(wrap("team report (7 days)", "/api/team/report", {},
                      lambda db, now, p: team_report.team_report(db, ws, None, p, now)))
    calls.append(wrap("team report (30 days)", "/api/team/report",
                      {"since": (datetime.now(timezone.utc) - timedelta(days=30)).isoformat()},
                      lambda db, now, p: team_report.team_report(db, ws, None, p, now)))
    calls.append(wrap("csat responses (30 days)", "/api/team/csat/responses",
                      {"since": (datetime.now(timezone.utc) - timedelta(days=30)).isoformat()},
                      lambda db, now, p: csat_responses.responses(db, ws, p, now)))
    for period in ("this_week", "last_30_days"):
        calls.append(Call(f"page: reports range={period}", "/app/reports", {"range": period},
                          target_ms=REPORTS_PAGE_TARGET_MS))
    calls.append(Call("page: app.css", "/app/static/app.css", {}, target_ms=PAGE_TARGET_MS))
    calls.append(Call("page: app.js", "/app/static/app.js", {}, target_ms=PAGE_TARGET_MS))
    return calls


def walk(client: httpx.Client, path: str, params: dict[str, str], pages: int) -> str | None:
    """The cursor of page `pages + 1`, walking from the first (None when the list is shorter)."""
    cursor = None
    for _ in range(pages):
        answer = client.get(path, params={**params, **({"cursor": cursor} if cursor else {})})
        answer.raise_for_status()
        cursor = answer.json()["next_cursor"]
        if cursor is None:
            return None
    return cursor


def deepen(client: httpx.Client, call: Call, pages: int, name: str) -> None:
    """Point `call` at page `pages + 1` of its list (page 1 when the list is shorter)."""
    cursor = walk(client, call.path, call.params, pages)
    call.name = name.format(pages + 1 if cursor else 1)
    if cursor:
        call.params = {**call.params, "cursor": cursor}


def run_calls(client: httpx.Client, calls: list[Call], warmup: int, repeat: int, service: Service) -> None:
    for call in calls:
        cpu_before = None
        for round_ in range(warmup + repeat):
            if round_ == warmup:
                cpu_before = service.cpu_seconds()
            started = time.perf_counter()
            answer = client.get(call.path, params=call.params)
            elapsed = time.perf_counter() - started
            if answer.status_code != 200:
                call.errors.append(f"{answer.status_code} {answer.text[:200]}")
                break
            if round_ >= warmup:
                call.times.append(elapsed)
        else:
            json_body = answer.headers.get("content-type", "").startswith("application/json")
            call.rows = rows_in(answer.json()) if json_body else rows_in_page(answer.text)
            cpu = service.cpu_seconds()
            if cpu is not None and cpu_before is not None:
                call.service_cpu_ms = (cpu - cpu_before) / repeat * 1e3


def report(calls: list[Call]) -> list[Call]:
    """The table; the calls over target, slowest first."""
    width = max(len(call.name) for call in calls) + 2
    print(f"\n{'call':<{width}}{'p50 ms':>9}{'p99 ms':>9}{'rows':>7}{'svc CPU ms':>12}")
    over = []
    for call in calls:
        if call.errors:
            print(f"{call.name:<{width}}  ERROR {call.errors[0]}")
            continue
        p50, p99 = call.percentile(0.5), call.percentile(0.99)
        flag = ""
        if p99 > call.target_ms and not call.name.startswith("whoami"):
            flag = f"   <-- p99 over {call.target_ms:g} ms"
            over.append(call)
        print(f"{call.name:<{width}}{p50:>9.1f}{p99:>9.1f}{call.rows:>7}{call.service_cpu_ms:>12.1f}{flag}")
    over.sort(key=lambda call: -call.percentile(0.99))
    print(f"\n{len(over)} of {len(calls) - 1} reads over their p99 target ({TARGET_P99_MS:g} ms for the API, "
          f"{PAGE_TARGET_MS:g} ms for a page)"
          + (": " + ", ".join(call.name for call in over) if over else ""))
    return over


# -- EXPLAIN -------------------------------------------------------------------------------------------------


class RecordingDatabase:
    """A Database that remembers every statement it ran, with its arguments and how long it took."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.statements: list[tuple[float, str, tuple]] = []

    async def _timed(self, method, sql: str, args: tuple) -> Any:
        started = time.perf_counter()
        result = await method(sql, *args)
        self.statements.append((time.perf_counter() - started, sql, args))
        return result

    async def fetch(self, sql: str, *args: Any) -> Any:
        return await self._timed(self.db.fetch, sql, args)

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        return await self._timed(self.db.fetchrow, sql, args)

    async def fetchval(self, sql: str, *args: Any) -> Any:
        return await self._timed(self.db.fetchval, sql, args)

    async def execute(self, sql: str, *args: Any) -> Any:
        return await self._timed(self.db.execute, sql, args)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[RecordingDatabase]:
        """A read's transaction (the team report's one snapshot), its statements recorded as the others."""
        async with self.db.transaction() as tx:
            inner = RecordingDatabase(tx)
            inner.statements = self.statements
            yield inner


async def explain(url: str, calls: list[Call]) -> None:
    db = await Database.connect(url, min_size=1, max_size=1)
    try:
        for call in calls:
            if call.read is None:
                continue
            recorder = RecordingDatabase(db)
            await call.read(recorder, datetime.now(timezone.utc), call.params)     # warm, as in the benchmark
            recorder.statements.clear()
            await call.read(recorder, datetime.now(timezone.utc), call.params)
            _, sql, args = max(recorder.statements, key=lambda statement: statement[0])
            plan = await db.fetch(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", *args)
            shown = ", ".join(repr(arg.isoformat() if isinstance(arg, datetime) else arg) for arg in args)
            print(f"\nEXPLAIN (ANALYZE, BUFFERS) of {call.name!r} (p99 {call.percentile(0.99):.1f} ms),"
                  f" its slowest statement of {len(recorder.statements)}:")
            print("  " + "\n  ".join(line.strip() for line in sql.strip().splitlines() if line.strip()))
            print(f"  -- with {shown}")
            print("\n".join(row[0] for row in plan))
    finally:
        await db.close()


# -- the service ---------------------------------------------------------------------------------------------


class Service:
    """`inbox-actors serve --port 0` on the bench database; stopped with SIGINT."""

    def __init__(self, url: str, work_dir: Path) -> None:
        env = {**os.environ, "DATABASE_URL": url, "INBOX_DATA_DIR": str(work_dir / "service"),
               "INBOX_LOG_LEVEL": "WARNING", "INBOX_IP_LIMIT_PER_MINUTE": "1000000"}
        env.pop("INBOX_PORT", None)
        env.pop("WHATSAPP_API_URL", None)
        self.log_path = work_dir / "serve.log"
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen([*cli_command(), "serve", "--port", "0"], stdout=subprocess.PIPE,
                                            stderr=log, env=env, cwd=ROOT)
        self.url = self._ready(60.0)["url"]

    def _ready(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            readable, _, _ = select.select([self.process.stdout], [], [], 0.5)
            if readable:
                line = self.process.stdout.readline()
                if not line:
                    break
                try:
                    ready = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(ready, dict) and ready.get("status") == "ready":
                    return ready
            elif self.process.poll() is not None:
                break
        self.stop()
        raise RuntimeError(f"the service did not start; its log:\n{self.log_path.read_text()[-3000:]}")

    def cpu_seconds(self) -> float | None:
        return psutil_cpu_seconds(self.process.pid)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# -- the run -------------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, help=f"chats to seed (default {FULL[0]:,})")
    parser.add_argument("--messages", type=int, help=f"messages to seed (default {FULL[1]:,})")
    parser.add_argument("--small", action="store_true", help=f"{SMALL[0]} chats, {SMALL[1]:,} messages")
    parser.add_argument("--repeat", type=int, default=100, help="timed calls of each read (100)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls of each read first (5)")
    parser.add_argument("--database-url", help="a PostgreSQL server to use instead of the embedded one "
                                               "(a database of its own is made there)")
    parser.add_argument("--keep", action="store_true", help="leave the bench database in place (with "
                                                            "--database-url)")
    parser.add_argument("--reuse", metavar="DATABASE", help="benchmark a database an earlier --keep run left, "
                                                            "without seeding (with --database-url)")
    parser.add_argument("--explain", type=int, default=1, help="EXPLAIN this many of the slowest reads (1)")
    parser.add_argument("--only", action="append", metavar="TEXT",
                        help="time only the reads whose name holds TEXT (repeatable; whoami always runs)")
    args = parser.parse_args(argv)
    conversations, messages = SMALL if args.small else FULL
    args.conversations = args.conversations or conversations
    args.messages = args.messages or messages
    if args.conversations < 1 or args.messages < 2 * args.conversations:
        parser.error("give at least one chat and two messages a chat")
    if args.repeat < 1 or args.warmup < 0:
        parser.error("--repeat must be at least 1, --warmup at least 0")
    if (args.keep or args.reuse) and not args.database_url:
        parser.error("--keep and --reuse go with --database-url")
    return args


async def prepare(server_url: str, name: str, args: argparse.Namespace) -> tuple[Workspace, Targets, str]:
    async with trio_asyncio.open_loop():
        if not args.reuse:
            await create_database(server_url, name)
        url = database_url(server_url, name)
        db = await Database.connect(url, min_size=1, max_size=2)
        try:
            await migrate(db)
            version = await db.fetchval("SELECT version()")
            trigram = await db.fetchval("SELECT count(*) FROM pg_extension WHERE extname = 'pg_trgm'")
            print(f"server: {version.split(' on ')[0]}, pg_trgm {'installed' if trigram else 'NOT installed'}")
            now = datetime.now(timezone.utc)
            if args.reuse:
                workspace = await existing_workspace(db)
            else:
                workspace = await make_workspace(db, now)
                await seed(url, workspace, args, now)
            targets = await find_targets(db, workspace.workspace_id)
        finally:
            await db.close()
    return workspace, targets, url


async def seed(url: str, workspace: Workspace, args: argparse.Namespace, now: datetime) -> None:
    started = time.perf_counter()
    sim = Simulation(args.conversations, args.messages, workspace.members, workspace.workspace_id,
                     now.timestamp())
    chats = sim.play()
    tables = table_rows(sim, chats)
    made = time.perf_counter() - started
    print(f"seed: {args.conversations:,} chats, {len(tables['messages'][1]):,} messages generated in {made:.1f} s")
    for table, rows, seconds in await load(url, tables):
        rate = f"{rows / seconds:>12,.0f} rows/s" if rows else ""
        print(f"  {table:<34}{rows:>10,} rows {seconds:>7.1f} s {rate}")


def bench(url: str, workspace: Workspace, targets: Targets, args: argparse.Namespace, work_dir: Path) -> list[Call]:
    history_since = (datetime.now(timezone.utc) - timedelta(days=HISTORY_DAYS + 10)).date().isoformat()
    calls = build_calls(workspace.workspace_id, targets, history_since)
    if args.only:
        calls = [call for call in calls if call.read is None or any(text in call.name for text in args.only)]
    service = Service(url, work_dir)
    try:
        headers = {"Authorization": f"Bearer {workspace.key}"}
        with httpx.Client(base_url=service.url, headers=headers, cookies={"inbox_session": workspace.session},
                          timeout=60) as client:
            for call in calls:      # deep pages: walk there first (fewer rows: the last page there is)
                if call.name == "conversations deep page":
                    deepen(client, call, min(20, max(1, (targets.chats - 1) // 200)),
                           f"conversations page {{}} (limit=200, since {call.params['since']})")
                elif call.name == "messages deep page":
                    deepen(client, call, max(1, min(10, targets.chat_messages // 200 - 1)),
                           "messages page {} (limit=200)")
            print(f"\nservice: {service.url} (pid {service.process.pid}); chat {targets.phone} has "
                  f"{targets.chat_messages:,} messages; {args.warmup} warm-up + {args.repeat} timed calls each")
            cpu_before = service.cpu_seconds()
            started = time.perf_counter()
            run_calls(client, calls, args.warmup, args.repeat, service)
            elapsed = time.perf_counter() - started
            cpu = service.cpu_seconds()
            requests = len(calls) * (args.warmup + args.repeat)
            if cpu is not None and cpu_before is not None:
                print(f"{requests:,} requests in {elapsed:.1f} s; service CPU {(cpu - cpu_before) / requests * 1e3:.1f}"
                      " ms a request")
    finally:
        service.stop()
    return calls


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    work_dir = Path(tempfile.mkdtemp(prefix="inbox-bench-reporting-"))
    embedded = None
    name = args.reuse or f"inbox_bench_{os.getpid()}"
    try:
        if args.database_url:
            server_url = args.database_url
            print(f"PostgreSQL: {urlsplit(server_url).hostname}:{urlsplit(server_url).port or 5432} "
                  f"(--database-url), database {name}")
        else:
            from persistence.embedded import EmbeddedPostgres
            embedded = EmbeddedPostgres(work_dir / "data", durable=False)
            server_url = embedded.start().url("postgres")
            print(f"PostgreSQL: embedded (durability off) in {work_dir / 'data'}")
        workspace, targets, url = trio.run(prepare, server_url, name, args)
        calls = bench(url, workspace, targets, args, work_dir)
        over = report(calls)
        slowest = sorted((call for call in calls if call.read is not None and not call.errors),
                         key=lambda call: -call.percentile(0.99))[:args.explain]
        trio.run(_explain_in_loop, url, slowest)
        if over:
            print(f"\n{len(over)} reads missed the target")
        return 1 if any(call.errors for call in calls) else 0
    finally:
        if embedded is not None:
            embedded.stop()
        elif args.database_url and not args.keep and not args.reuse:
            trio.run(_drop_in_loop, args.database_url, name)
        elif args.database_url:
            print(f"\nkept database {name} (rerun with --reuse {name})")
        shutil.rmtree(work_dir, ignore_errors=True)


async def _explain_in_loop(url: str, calls: list[Call]) -> None:
    async with trio_asyncio.open_loop():
        await explain(url, calls)


async def _drop_in_loop(server_url: str, name: str) -> None:
    async with trio_asyncio.open_loop():
        await drop_database(server_url, name)


if __name__ == "__main__":
    sys.exit(main())
