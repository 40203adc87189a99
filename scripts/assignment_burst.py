"""Automatic assignment under a burst of hand-overs, on several nodes: every chat given once, nobody past the
capacity, the rest queued and given as room frees, and a member who goes offline given nothing more.

    .venv/bin/python scripts/assignment_burst.py                         # 200 hand-overs in 10 s, 5 x 10, 2 nodes
    .venv/bin/python scripts/assignment_burst.py --handovers 60 --members 3 --capacity 5 --nodes 1
    .venv/bin/python scripts/assignment_burst.py --database-url postgresql://postgres@127.0.0.1:5432/postgres

What it does (harness/spawned_service.py starts and stops everything):
1. A fresh database on harness PostgreSQL (embedded, durability off; or --database-url's server) with one Scale
   workspace and --members agents (`inbox`), each with a key; `inbox-actors serve --nodes N` on it, its built-in
   platform simulator, the FAQ bot. Every call below goes to the port `serve` listens on, which spreads
   connections over the nodes: a call that lands on the node not holding the workspace is relayed to it.
2. Each agent says it is online (`PUT /api/team/me/availability`); automatic assignment is turned on
   (`PUT /api/team/assignment`, least busy, --capacity).
3. --handovers customers each write "I want to talk to a person" through the simulator, spread evenly over
   --seconds: the bot hands each chat over, and the desk gives it to an agent with room.
4. Once members x capacity chats are held: each chat's assignment history (every automatic gift, `by` null) and
   the roster's open chats per member. The seconds from each hand-over to its gift (p50, p99, most).
5. Room frees: the first agent resolves --free of their chats; the desk must fill them from the queue, all with
   that agent, within a second. Then the second agent goes offline and resolves as many: nothing is given to them.

Prints the figures and a verdict; exit 0 when every chat was given at most once, nobody held more than the
capacity through automatic assignment, the freed room was refilled within 1 s and the offline agent got nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx
import trio
from harness.options import add_database_url
from harness.run import run_on_postgres
from harness.spawned_service import ModelSetup, NodesPlan, SpawnedService, each_run

from inbox_actors.access import accounts
from persistence.database import Database

PERSON = "I want to talk to a person"
STARTUP_TIMEOUT = 120.0


@dataclass
class Agents:
    """The agents the seed made: (member id, key), in order."""

    made: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class Verdict:
    lines: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def seeding(agents: Agents, count: int):
    async def seed(db: Database, workspace_id: int) -> None:
        for n in range(1, count + 1):
            member = await accounts.add_member(db, workspace_id=workspace_id, name=f"Agent {n}", role="agent",
                                               email=f"agent{n}@burst.example.com", permissions=["inbox"])
            issued = await accounts.create_key(db, workspace_id=workspace_id, member_id=member, name=f"agent {n}",
                                               scopes=["inbox"], rate_limit_per_minute=100_000)
            agents.made.append((member, issued.key))
    return seed


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def phone(n: int) -> str:
    return f"91977{n:07d}"


async def burst(args: argparse.Namespace, agents: Agents, spawned: SpawnedService) -> Verdict:
    verdict = Verdict()
    workspace = spawned.workspaces[0]
    admin = bearer(workspace.key)
    async with httpx.AsyncClient(base_url=spawned.url, timeout=30) as api, \
            httpx.AsyncClient(base_url=spawned.simulator_url, timeout=30) as simulator:
        for _, key in agents.made:
            (await api.put("/api/team/me/availability", headers=bearer(key), json={"status": "online"})
             ).raise_for_status()
        (await api.put("/api/team/assignment", headers=admin,
                       json={"mode": "least_busy", "capacity": args.capacity})).raise_for_status()

        started = trio.current_time()
        gap = args.seconds / args.handovers
        async with trio.open_nursery() as nursery:
            for n in range(args.handovers):
                await trio.sleep_until(started + n * gap)
                nursery.start_soon(_writes, simulator, workspace.phone_number_id, phone(n))
        posted = trio.current_time() - started
        room = args.members * args.capacity
        verdict.lines.append(f"{args.handovers} hand-overs posted in {posted:.1f} s to `serve --nodes {args.nodes}`; "
                             f"{args.members} agents online, capacity {args.capacity} ({room} places)")

        held = await _until_held(api, admin, min(room, args.handovers), deadline=time.monotonic() + 30)
        gifts = await _gifts(api, admin, args.handovers)
        _judge_gifts(verdict, gifts, held, args, agents)

        # Room frees: the first agent resolves some of theirs; the desk refills them from the queue, with them.
        first_id, first_key = agents.made[0]
        theirs = [p for p, (member, _) in gifts.items() if member == first_id][:args.free]
        freed_at = time.monotonic()
        for chat in theirs:
            (await api.post(f"/api/inbox/conversations/{chat}/resolve", headers=bearer(first_key))).raise_for_status()
        refilled = await _until_open(api, admin, first_id, args.capacity, deadline=freed_at + 5)
        seconds = time.monotonic() - freed_at
        verdict.lines.append(f"agent 1 resolved {len(theirs)}: holding {refilled} again after {seconds:.2f} s "
                             f"(bound 1 s after the last resolve)")
        if refilled != args.capacity or seconds > 1.0 + 0.2 * len(theirs):
            verdict.failures.append(f"freed room refilled to {refilled} of {args.capacity} in {seconds:.2f} s")

        # A member going offline is given nothing more, even with room.
        second_id, second_key = agents.made[1]
        (await api.put("/api/team/me/availability", headers=bearer(second_key), json={"status": "offline"})
         ).raise_for_status()
        gone = [p for p, (member, _) in (await _gifts(api, admin, args.handovers)).items() if member == second_id]
        for chat in gone[:args.free]:
            (await api.post(f"/api/inbox/conversations/{chat}/resolve", headers=bearer(second_key))
             ).raise_for_status()
        await trio.sleep(1.5)
        open_now = await _open_chats(api, admin)
        verdict.lines.append(f"agent 2 went offline and resolved {min(len(gone), args.free)}: holds "
                             f"{open_now.get(second_id, 0)} 1.5 s later")
        if open_now.get(second_id, 0) != args.capacity - min(len(gone), args.free):
            verdict.failures.append(f"the offline agent holds {open_now.get(second_id, 0)}")
    return verdict


async def _writes(simulator: httpx.AsyncClient, number: str, chat: str) -> None:
    answer = await simulator.post(f"/simulator/customers/{chat}/messages",
                                  json={"phone_number_id": number, "text": PERSON, "name": "Burst"})
    answer.raise_for_status()


async def _open_chats(api: httpx.AsyncClient, admin: dict) -> dict[int, int]:
    roster = (await api.get("/api/team/members", headers=admin)).json()["data"]
    return {m["user_id"]: m["load"]["open_chats"] for m in roster}


async def _until_held(api: httpx.AsyncClient, admin: dict, count: int, deadline: float) -> dict[int, int]:
    while True:
        held = await _open_chats(api, admin)
        if sum(held.values()) >= count or time.monotonic() > deadline:
            return held
        await trio.sleep(0.2)


async def _until_open(api: httpx.AsyncClient, admin: dict, member: int, count: int, deadline: float) -> int:
    while True:
        held = (await _open_chats(api, admin)).get(member, 0)
        if held >= count or time.monotonic() > deadline:
            return held
        await trio.sleep(0.05)


async def _gifts(api: httpx.AsyncClient, admin: dict, handovers: int) -> dict[str, tuple[int, float]]:
    """Each chat given automatically: (the member, seconds from its hand-over to the gift); a chat given twice is
    named twice with a suffix, for the verdict to find."""
    gifts: dict[str, tuple[int, float]] = {}
    for n in range(handovers):
        chat = phone(n)
        detail = (await api.get(f"/api/reporting/v1/conversations/{chat}", headers=admin)).json()
        history = (await api.get(f"/api/reporting/v1/conversations/{chat}/assignment-history", headers=admin)
                   ).json()["data"]
        given = [e for e in history if e["event"] == "claimed" and e["reason"] == "auto_assigned"]
        for index, event in enumerate(given):
            waited = (_at(event["at"]) - _at(detail["handover_at"])).total_seconds() if detail["handover_at"] else -1
            gifts[chat if index == 0 else f"{chat}#{index}"] = (event["to"]["user_id"], waited)
    return gifts


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _judge_gifts(verdict: Verdict, gifts: dict, held: dict[int, int], args: argparse.Namespace,
                 agents: Agents) -> None:
    twice = [chat for chat in gifts if "#" in chat]
    waits = sorted(waited for _, waited in gifts.values() if waited >= 0)
    over = {member: count for member, count in held.items() if count > args.capacity}
    expected = min(args.members * args.capacity, args.handovers)
    verdict.lines.append(f"given: {len(gifts) - len(twice)} chats ({len(twice)} twice), expected {expected}; "
                         f"queued {args.handovers - (len(gifts) - len(twice))}")
    verdict.lines.append("held: " + ", ".join(f"agent {i} {held.get(member, 0)}"
                                               for i, (member, _) in enumerate(agents.made, start=1)))
    if waits:
        p99 = waits[min(len(waits) - 1, int(len(waits) * 0.99))]
        verdict.lines.append(f"hand-over to gift: p50 {statistics.median(waits):.3f} s, p99 {p99:.3f} s, "
                             f"most {waits[-1]:.3f} s")
    if twice:
        verdict.failures.append(f"{len(twice)} chats given twice")
    if over:
        verdict.failures.append(f"over capacity: {over}")
    if len(gifts) - len(twice) != expected:
        verdict.failures.append(f"{len(gifts) - len(twice)} chats given, {expected} expected")


async def run(args: argparse.Namespace, server_url: str, postgres: int | None, work_dir: Path) -> int:
    agents = Agents()
    plan = NodesPlan(counts=(args.nodes,), workspaces=1, separate_simulator=False, sends_per_second=1000,
                     startup_timeout=STARTUP_TIMEOUT, models=(ModelSetup(agent=False),))
    [verdict] = await each_run(plan, seeding(agents, args.members), server_url, postgres, work_dir,
                               lambda spawned: burst(args, agents, spawned))
    for line in verdict.lines:
        print(line)
    print("verdict: " + ("OK" if not verdict.failures else "FAILED: " + "; ".join(verdict.failures)), flush=True)
    return 0 if not verdict.failures else 1


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2, help="`serve --nodes N` (default 2)")
    parser.add_argument("--handovers", type=int, default=200, help="customers handed over (default 200)")
    parser.add_argument("--seconds", type=float, default=10.0, help="spread over this long (default 10)")
    parser.add_argument("--members", type=int, default=5, help="agents online (default 5, at least 2)")
    parser.add_argument("--capacity", type=int, default=10, help="open chats each (default 10)")
    parser.add_argument("--free", type=int, default=3, help="chats each of the first two agents resolves (3)")
    add_database_url(parser)
    args = parser.parse_args(argv)
    if args.members < 2 or args.nodes < 1 or args.handovers < args.members * args.capacity or \
            not 1 <= args.capacity <= 1000 or args.seconds <= 0 or not 1 <= args.free <= args.capacity:
        parser.error("needs 2 members or more, a node, at least members x capacity hand-overs, a capacity of 1 to "
                     "1,000, a time, and 1 to capacity chats to free")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_on_postgres("assignment-burst", args.database_url, run, args)


if __name__ == "__main__":
    sys.exit(main())
