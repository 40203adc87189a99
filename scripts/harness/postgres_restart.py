"""scripts/cluster_check.py --postgres-restart: PostgreSQL restarted under sends and customers' messages over the
nodes, and every answer the traffic got: how long after PostgreSQL's return a send is answered again, the 5xx
answered without Retry-After, customer messages acknowledged and not stored, nodes that exited."""

from __future__ import annotations

import argparse
import random
import secrets
from collections import Counter
from dataclasses import dataclass, field

import httpx
import trio

from harness import retried_sends
from harness.cluster import Cluster, retry_after
from harness.inbound import customer_writes
from harness.workspace import Workspace
from persistence.database import Database

# A send answered again within this of PostgreSQL's return (docs/nodes.md), on a quiet machine; --back-within sets it.
RESTART_BACK_BOUND = 2.0


@dataclass
class PostgresRestart:
    """--postgres-restart: the traffic, the restart, and every answer the traffic got."""

    args: argparse.Namespace
    cluster: Cluster
    ws: Workspace
    app_secret: str
    answers: Counter = field(default_factory=Counter)           # "send 503", "customer 200", "send ReadTimeout"...
    bare_5xx: Counter = field(default_factory=Counter)          # answered 5xx without Retry-After, by what and status
    bare_bodies: list[str] = field(default_factory=list)        # the first few of them
    acknowledged: list[str] = field(default_factory=list)       # customer messages answered 200
    unacknowledged: int = 0                                     # customer messages never answered 200
    what: str = ""
    down_at: float = 0.0
    back_at: float | None = None
    answered_after: float | None = None   # seconds from the return to the first send started after it answered 200
    exited: list[str] = field(default_factory=list)
    stored: int = 0

    async def drive(self, restart) -> None:
        run_tag = secrets.token_hex(3)
        first = retried_sends.PHONE_BASE + random.randrange(1000) * 10**6
        phones = [str(first + i * 10 + 1) for i in range(self.args.chats)]
        stop_at: list[float] = []
        # Each kind of traffic has --connections of its own: a send is timed from when it goes out, not from a
        # wait behind customers' retries for a connection.
        send_connections = trio.CapacityLimiter(self.args.connections)
        customer_connections = trio.CapacityLimiter(self.args.connections)
        started = 0.0

        async def steady(per_second: float, job) -> None:
            async with trio.open_nursery() as jobs:
                n = 0
                while not stop_at or trio.current_time() < stop_at[0]:
                    jobs.start_soon(job, n, phones[n % len(phones)])
                    n += 1
                    await trio.sleep_until(started + n / per_second)

        async def fault() -> None:
            await trio.sleep(self.args.kill_after)
            self.down_at = trio.current_time()
            print(f"PostgreSQL down {self.down_at - started:.2f} s in", flush=True)
            self.what = await restart()
            self.back_at = trio.current_time()
            stop_at.append(self.back_at + self.args.after)

        async def send(n: int, phone: str) -> None:
            body = {"to": phone, "type": "template", "template": {"name": retried_sends.TEMPLATE, "language": "en",
                                                                  "parameters": [f"restart {run_tag} #{n}"]}}
            async with send_connections:
                began = trio.current_time()
                answer = await self._asked("send", lambda: self.cluster.post(
                    "/api/send-message", json=body, headers={"Authorization": f"Bearer {self.ws.key}"}))
            if answer is not None and answer.status_code == 200 and self.back_at is not None \
                    and began >= self.back_at:
                after = trio.current_time() - self.back_at
                self.answered_after = after if self.answered_after is None else min(self.answered_after, after)

        async def customer(n: int, phone: str) -> None:
            message_id = f"wamid.restart.{run_tag}.{n}"          # n < 0: the chat's first, before the traffic
            deadline = trio.current_time() + self.args.settle_timeout
            while trio.current_time() < deadline:
                async with customer_connections:
                    answer = await self._asked("customer message", lambda: self.cluster.deliver(
                        lambda http: customer_writes(http, self.app_secret, self.ws.phone_number_id, phone,
                                                     message_id, f"still there? #{n}")))
                if answer is not None and answer.status_code == 200:
                    self.acknowledged.append(message_id)
                    return
                await trio.sleep(retry_after(answer))
            self.unacknowledged += 1

        # Every chat has written once before the traffic starts: its actor is live when the outage comes, as an
        # active chat's is, and the messages during the outage meet it rather than a chat starting.
        async with trio.open_nursery() as warm_up:
            for n, phone in enumerate(phones):
                warm_up.start_soon(customer, -1 - n, phone)
        started = trio.current_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(fault)
            nursery.start_soon(steady, self.args.sends_per_second, send)
            nursery.start_soon(steady, self.args.customers_per_second, customer)
        self.exited = [f"node {n + 1} (exit {node.process.returncode})" for n, node in enumerate(self.cluster.nodes)
                       if node.process.returncode is not None]

    async def _asked(self, what: str, ask) -> httpx.Response | None:
        try:
            answer = await ask()
        except httpx.HTTPError as err:
            self.answers[f"{what} {type(err).__name__}"] += 1
            return None
        self.answers[f"{what} {answer.status_code}"] += 1
        if answer.status_code >= 500 and "retry-after" not in answer.headers:
            self.bare_5xx[f"{what} {answer.status_code}"] += 1
            if len(self.bare_bodies) < 3:
                self.bare_bodies.append(f"{what}: {answer.status_code} {answer.text[:160]!r}")
        return answer

    async def measure(self, db: Database) -> None:
        for _ in range(3):   # the script's own connections met the restart too: the pool makes new ones
            try:
                self.stored = await db.fetchval(
                    "SELECT count(*) FROM messages WHERE workspace_id = $1 AND direction = 'inbound'"
                    " AND platform_message_id = ANY($2::text[])", self.ws.workspace_id, self.acknowledged)
                return
            except Exception:
                await trio.sleep(0.5)
        raise RuntimeError("the database did not answer after the restart")

    def report(self) -> int:
        assert self.back_at is not None
        print(f"PostgreSQL restart: {self.what}; out {self.back_at - self.down_at:.2f} s (--down-for "
              f"{self.args.down_for:g} s), from the stop to its accepting connections again")
        print("answers: " + ", ".join(f"{name} x{count:,}" for name, count in sorted(self.answers.items())))
        back = (f"{self.answered_after:.2f} s" if self.answered_after is not None
                else f"none within {self.args.after:g} s")
        print(f"the first send sent after PostgreSQL's return answered 200 after {back} "
              f"(bound {self.args.back_within:g} s)")
        bare = sum(self.bare_5xx.values())
        print(f"5xx without Retry-After: {bare:,} (bound 0)" + (
            f": {', '.join(f'{name} x{count:,}' for name, count in sorted(self.bare_5xx.items()))}; the first: "
            f"{'; '.join(self.bare_bodies)}" if bare else ""))
        lost = len(self.acknowledged) - self.stored
        print(f"customer messages: {len(self.acknowledged) + self.unacknowledged:,} posted, "
              f"{len(self.acknowledged):,} acknowledged, {self.unacknowledged} never; acknowledged and not stored: "
              f"{lost} (bound 0)")
        print(f"nodes that exited: {len(self.exited)}{' (' + ', '.join(self.exited) + ')' if self.exited else ''}"
              " (bound 0)")
        failed = (self.answered_after is None or self.answered_after > self.args.back_within or bare or lost
                  or self.unacknowledged or self.exited)
        return 1 if failed else 0

