"""A working hour in the agent workspace, issue 38's quality bar: agents in Chromium (Playwright, each in a browser
context of its own under emulated network latency) work the inbox while simulated customers write, and afterwards
the records say whether anything was sent twice or lost, whether every draft left unsent is still there, and
whether a live update ever took the focus from an agent.

- `scripts/working_hour.py` runs it with its own defaults (3 agents, 50 customers, 5 minutes, 300 ms) against the
  service it starts; `tests/e2e/test_working_hour.py` runs the same code for about a minute with fewer customers
  against the service in the test's process. Both seat the team in the database first (`seat_team`), then call
  `work_the_hour` from Trio.
- The customers (harness/working_customers.py) each ask for a person first, so their chats wait in the queue, then
  write at random (about once every `gap_seconds` each) and on cue while an agent types in their chat.
- The agents (harness/working_agent.py) claim, reply (one click, a double click, two clicks, Ctrl+Enter, a click and
  Ctrl+Enter), note, label, snooze, resolve, transfer, leave drafts and move with the keyboard.
- The verdict (`judge`) reads the platform's record of what each customer received and the service's threads
  (harness/working_customers.py's `read_records`) and counts: replies the page said were sent that arrived exactly
  once, twice (must be 0) or never (lost, must be 0), refused replies that arrived (0); customer messages the
  service took that are not in their thread once (0); notes kept once and never sent; drafts found in their box
  when their chat is opened again, after a reload, and sent by mistake (0); focus lost while an agent typed or read
  (0); script errors and Content-Security-Policy reports (0).
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import random
import secrets
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import trio
from playwright.async_api import async_playwright

from harness.simulator import customer_phones
from harness.working_agent import Agent
from harness.working_customers import Customers, Records, read_records
from harness.working_page import AgentPage
from inbox_actors.access import accounts
from persistence.database import Database

NAMES = ("Ann", "Raj", "Mei", "Ola", "Tomas", "Zara", "Kofi", "Lina")
LABELS = ("billing", "delivery", "returns", "vip")
LATE_SENDS_SECONDS = 2.0       # after the last action, before the records are read: a late second send would show


@dataclass(frozen=True)
class Plan:
    agents: int = 3
    customers: int = 50
    seconds: float = 300.0
    latency_ms: int = 300
    gap_seconds: float = 60.0          # each customer writes about this often, besides on cue
    seed: int | None = None
    first_phone: str = "919870000001"


@dataclass(frozen=True)
class Member:
    email: str
    name: str
    password: str


@dataclass(frozen=True)
class Seats:
    """The workspace the hour is worked in: its business number, a full-access key, the members who sign in."""

    number: str
    key: str
    members: tuple[Member, ...]


@dataclass(frozen=True)
class Stage:
    url: str                           # the service
    simulator_url: str                 # its platform simulator
    seats: Seats


async def seat_team(db: Database, agents: int) -> Seats:
    """A Scale workspace with `agents` members (the first an admin), each with a password of the run's own."""
    created = await accounts.create_workspace(db, name="Working hour", plan="scale")
    members, first = [], None
    for i in range(agents):
        name = NAMES[i % len(NAMES)] + (f" {i // len(NAMES) + 1}" if i >= len(NAMES) else "")
        email = f"{name.lower().replace(' ', '.')}@working-hour.example"
        member_id = await accounts.add_member(db, workspace_id=created.workspace_id, name=name, email=email,
                                              role="admin" if i == 0 else "agent")
        first = first or member_id
        password = secrets.token_urlsafe(15)
        await accounts.set_member_password(db, member_id=member_id, password=password)
        members.append(Member(email, name, password))
    issued = await accounts.create_key(db, workspace_id=created.workspace_id, member_id=first, name="working hour",
                                       scopes=["all"], rate_limit_per_minute=100_000)
    return Seats(created.phone_number_id, issued.key, tuple(members))


async def work_the_hour(stage: Stage, plan: Plan, chromium: str, say: Callable[[str], None] = print) -> Verdict:
    """The hour, from Trio: Playwright's asyncio API in a worker thread of its own (outside this context, whose
    copy would carry trio-asyncio's loop, and under asyncio's own loop policy there, as tests/browser.py does)."""

    def in_asyncio() -> Verdict:
        asyncio.set_event_loop_policy(asyncio.DefaultEventLoopPolicy())
        try:
            return asyncio.run(_hour(stage, plan, chromium, say))
        finally:
            asyncio.set_event_loop_policy(None)

    return await trio.to_thread.run_sync(contextvars.Context().run, in_asyncio)


async def _hour(stage: Stage, plan: Plan, chromium: str, say: Callable[[str], None]) -> Verdict:
    rng = random.Random(plan.seed)
    seats = stage.seats
    phones = customer_phones(plan.first_phone, plan.customers)
    async with httpx.AsyncClient(timeout=30) as http:
        labels = []
        for name in LABELS:
            made = await http.post(f"{stage.url}/api/labels", json={"name": name},
                                   headers={"Authorization": f"Bearer {seats.key}"})
            if made.status_code != 201:
                raise RuntimeError(f"could not make the label {name}: {made.status_code} {made.text[:200]}")
            labels.append(name)
        customers = Customers(http, stage.simulator_url, seats.number, phones, rng, plan.gap_seconds)
        started = time.monotonic()
        await customers.ask_for_people()
        say(f"{len(phones)} customers asked for a person ({time.monotonic() - started:.0f} s)")
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=chromium)
            try:
                agents = []
                for i, member in enumerate(seats.members):
                    own = random.Random(rng.random())
                    agents.append(Agent(number=i + 1, email=member.email, name=member.name,
                                        password=member.password, labels=labels, customers=customers, rng=own,
                                        at=AgentPage(stage.url, own)))
                await asyncio.gather(*(agent.start(browser, plan.latency_ms) for agent in agents))
                say(f"{len(agents)} agents signed in under {plan.latency_ms} ms of latency "
                    f"({time.monotonic() - started:.0f} s from the start); working {plan.seconds:g} s")
                loop = asyncio.get_running_loop()
                requests_before = sum(agent.at.requests for agent in agents)
                begun = loop.time()
                await asyncio.gather(customers.chat_until(begun + plan.seconds),
                                     *(agent.work_until(begun + plan.seconds) for agent in agents))
                worked = loop.time() - begun
                requests = sum(agent.at.requests for agent in agents) - requests_before
                await customers.settle()
                say(f"worked {worked:.0f} s; opening every chat left with a draft again")
                checking = loop.time()
                await asyncio.gather(*(agent.check_drafts() for agent in agents))
                say(f"drafts checked in {loop.time() - checking:.0f} s")
            finally:
                await browser.close()
        await asyncio.sleep(LATE_SENDS_SECONDS)
        records = await read_records(http, stage.url, stage.simulator_url, seats.number, seats.key, phones)
    return judge(plan, agents, customers, records, worked, requests)


@dataclass
class Verdict:
    figures: dict[str, Any]
    failures: list[str] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


def _sent_ok(status: int | None) -> bool:
    return status is not None and status < 300


def judge(plan: Plan, agents: list[Agent], customers: Customers, records: Records, worked: float,
          requests: int) -> Verdict:
    sent, kept = records.sent, records.kept
    failures: list[str] = [f"could not read the records: {problem}" for problem in records.problems]

    replies = [reply for agent in agents for reply in agent.replies]
    said_sent = [r for r in replies if _sent_ok(r.status)]
    refused = [r for r in replies if r.status is not None and r.status >= 300]
    unanswered = [r for r in replies if r.status is None]
    twice = [r for r in replies if sent[r.token] > 1]
    lost = [r for r in said_sent if sent[r.token] == 0]
    once = [r for r in said_sent if sent[r.token] == 1]
    refused_arrived = [r for r in refused if sent[r.token]]
    disagree = [r for r in replies if kept[r.token] != sent[r.token]]
    failures += [f"reply {r.token} ({r.how}) reached the customer {sent[r.token]} times" for r in twice]
    failures += [f"reply {r.token} ({r.how}) was said to be sent and never reached the customer" for r in lost]
    failures += [f"reply {r.token} was refused ({r.status}) yet reached the customer" for r in refused_arrived]
    failures += [f"reply {r.token}: the service's thread has it {kept[r.token]} times, the customer got it "
                 f"{sent[r.token]} times" for r in disagree]
    failures += [f"reply {r.token} ({r.how}) got no answer in 30 s" for r in unanswered]

    # A message the simulator saw no answer to in time may still have been stored: its thread says.
    taken = [w for w in customers.written if w.delivered]
    late = [w for w in customers.written if not w.delivered and kept[w.token] == 1]
    customer_lost = [w for w in customers.written if kept[w.token] == 0]
    customer_twice = [w for w in customers.written if kept[w.token] > 1]
    failures += [f"customer message {w.token} is not in its thread (the service "
                 f"{'took' if w.delivered else 'did not answer'} it)" for w in customer_lost]
    failures += [f"customer message {w.token} is in its thread {kept[w.token]} times" for w in customer_twice]

    notes = [note for agent in agents for note in agent.notes]
    notes_added = [n for n in notes if _sent_ok(n.status)]
    notes_wrong = [n for n in notes_added if kept[n.token] != 1 or sent[n.token]]
    failures += [f"note {n.token}: kept {kept[n.token]} times, sent to the customer {sent[n.token]} times"
                 for n in notes_wrong]
    failures += [f"note {n.token} was refused ({n.status})" for n in notes if not _sent_ok(n.status)]

    draft_tokens = [token for agent in agents for token in agent.draft_tokens]
    drafts_sent = [token for token in draft_tokens if sent[token] or kept[token]]
    back = [found for agent in agents for _, found in agent.drafts_back]
    at_end = [entry for agent in agents for entry in agent.drafts_at_end]
    opened_ok = [e for e in at_end if e[1] == e[3]]
    reloaded_ok = [e for e in at_end if e[2] == e[3]]
    failures += [f"draft {token} was sent" for token in drafts_sent]
    failures += [f"a draft was not in its box when its chat was opened again to reply: {phone}"
                 for agent in agents for phone, found in agent.drafts_back if not found]
    failures += [f"draft in {phone} when opened again: {opened!r}, after a reload: {reloaded!r} (typed {text!r})"
                 for phone, opened, reloaded, text in at_end if opened != text or reloaded != text]

    watched = sum((agent.at.watched for agent in agents), Counter())
    focus_lost = [loss for agent in agents for loss in agent.at.focus_lost if not loss["gone"]]
    failures += [f"focus lost from #{loss['holding']} to {loss['to']} ({loss['cause']}, {loss['ms_since_live']} ms "
                 "after a live event)" for loss in focus_lost]
    failures += [problem for agent in agents for problem in agent.at.typing]
    failures += [f"agent {agent.number}: {error}" for agent in agents for error in agent.at.errors]

    actions = sum((agent.actions for agent in agents), Counter())
    hows = Counter(r.how for r in said_sent)
    stumbles = [f"agent {agent.number}: {stumble}" for agent in agents
                for stumble in (*agent.stumbles, *agent.at.slow)]
    figures = {
        "agents": len(agents), "customers": plan.customers, "seconds": round(worked, 1),
        "latency_ms": plan.latency_ms,
        "replies": {"said_sent": len(said_sent), "arrived_once": len(once), "sent_twice": len(twice),
                    "lost": len(lost), "refused": len(refused), "refused_yet_arrived": len(refused_arrived),
                    "unanswered": len(unanswered), "by_how": dict(hows)},
        "customer_messages": {"written": len(customers.written), "taken": len(taken), "lost": len(customer_lost),
                              "twice": len(customer_twice), "answered_late_but_kept": len(late)},
        "notes": {"added": len(notes_added), "wrong": len(notes_wrong)},
        "drafts": {"left": len(at_end), "typed": len(draft_tokens), "there_when_opened": len(opened_ok),
                   "there_after_reload": len(reloaded_ok), "found_coming_back": sum(back),
                   "came_back": len(back), "sent": len(drafts_sent)},
        "focus": {"bouts": watched["bouts"], "live_events_meanwhile": watched["live"],
                  "parts_swapped_meanwhile": watched["swaps"], "lost": len(focus_lost)},
        "actions": dict(sorted(actions.items())),
        "requests_per_minute": round(requests / max(worked, 1) * 60),
        "stumbles": len(stumbles),
    }
    verdict = Verdict(figures, failures, stumbles)
    verdict.lines = _lines(figures, failures, stumbles)
    return verdict


def _lines(f: dict[str, Any], failures: list[str], stumbles: list[str]) -> list[str]:
    r, c, n, d, w = f["replies"], f["customer_messages"], f["notes"], f["drafts"], f["focus"]
    hows = ", ".join(f"{how} {count}" for how, count in sorted(r["by_how"].items()))
    lines = [
        f"working hour: {f['agents']} agents, {f['customers']} customers, {f['seconds']:g} s, "
        f"{f['latency_ms']} ms of latency",
        f"replies: {r['said_sent']} sent ({hows}): {r['arrived_once']} arrived once, {r['sent_twice']} sent twice, "
        f"{r['lost']} lost; {r['refused']} refused ({r['refused_yet_arrived']} of them arrived), "
        f"{r['unanswered']} unanswered",
        f"customers: {c['written']} messages, {c['taken']} taken by the service at once "
        f"({c['answered_late_but_kept']} more kept though the simulator saw no answer in time), {c['lost']} lost, "
        f"{c['twice']} twice in a thread",
        f"notes: {n['added']} added, {n['wrong']} not kept exactly once or sent to a customer",
        f"drafts: {d['left']} left unsent at the end: {d['there_when_opened']} in their box when opened again, "
        f"{d['there_after_reload']} after a reload; {d['found_coming_back']} of {d['came_back']} found when coming "
        f"back to reply; {d['sent']} of {d['typed']} typed were sent",
        f"focus: {w['bouts']} times typing or reading, {w['live_events_meanwhile']} live events and "
        f"{w['parts_swapped_meanwhile']} parts swapped meanwhile, focus lost {w['lost']} times",
        "actions: " + ", ".join(f"{name} {count}" for name, count in f["actions"].items()),
        f"requests: {f['requests_per_minute']} a minute from the {f['agents']} browsers together",
    ]
    if stumbles:
        lines.append(f"stumbles ({len(stumbles)}: an action that did not find what it expected, then went on):")
        lines += [f"  {stumble}" for stumble in stumbles[:10]]
    lines.append("verdict: " + ("0 sent twice, 0 lost, every draft there, focus never lost" if not failures
                                else f"FAILED ({len(failures)})"))
    lines += [f"  {failure}" for failure in failures[:20]]
    return lines


def find_chromium() -> str | None:
    """INBOX_TEST_CHROMIUM, else a Chromium on PATH (Debian's), else the newest Playwright downloaded: the browser
    tests' choice (tests/browser.py)."""
    chosen = os.environ.get("INBOX_TEST_CHROMIUM")
    if chosen:
        return chosen
    for name in ("chromium", "chromium-browser"):
        if found := shutil.which(name):
            return found
    cache = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or Path.home() / ".cache" / "ms-playwright")
    builds = sorted(cache.glob("chromium-*/chrome-linux*/chrome"), key=lambda path: path.parent.parent.name)
    return str(builds[-1]) if builds else None

