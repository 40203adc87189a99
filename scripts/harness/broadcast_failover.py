"""scripts/cluster_check.py --broadcast: a broadcast whose node is killed mid-way (and started again with
--restart-after), and what the platform got of it: every recipient once, none twice, none never."""

from __future__ import annotations

import argparse
import random
from collections import Counter
from dataclasses import dataclass, field

import httpx
import trio

from harness import retried_sends
from harness.cluster import Cluster
from harness.simulator import platform_record
from harness.workspace import Workspace
from inbox_actors.platform import templates
from persistence.database import Database

BROADCAST_PHONE_BASE = 447_400_000_000


@dataclass
class BroadcastFailover:
    """--broadcast: a broadcast whose node is killed mid-way (and started again with --restart-after), and what the
    platform got of it."""

    args: argparse.Namespace
    cluster: Cluster
    ws: Workspace
    db: Database
    platform_url: str
    phones: list[str] = field(default_factory=list)
    broadcast_id: int = 0
    sent_at_kill: int = 0               # counts.sent of the last read before the kill
    accepted_at_kill: int = 0           # the platform's sends of the broadcast once the node was dead
    killed_at: float = 0.0
    restarted_after: float | None = None
    resumed_after: float | None = None  # the kill to the platform's first send of the broadcast after it
    completed_after: float | None = None
    settled: bool = False
    status: str = ""
    counts: dict = field(default_factory=dict)

    async def drive(self, victim: int, restart) -> None:
        await templates.add_template(self.db, workspace_id=self.ws.workspace_id, name=retried_sends.TEMPLATE,
                                     language="en", body="Note {{1}}", category_name="MARKETING")
        first = BROADCAST_PHONE_BASE + random.randrange(1000) * 10**6
        self.phones = [str(first + i + i // 9 + 1) for i in range(self.args.recipients)]   # none ending in 0
        http = self.cluster.clients[0]
        headers = {"Authorization": f"Bearer {self.ws.key}"}
        answer = await http.post("/api/bulk-send", headers=headers, json={
            "name": "Across a failover", "recipients": self.phones,
            "template": {"name": retried_sends.TEMPLATE, "language": "en", "parameters": ["failover"]}})
        if answer.status_code != 202:
            raise RuntimeError(f"bulk-send answered {answer.status_code}: {answer.text[:500]}")
        self.broadcast_id = answer.json()["id"]
        threshold = max(1, round(self.args.recipients * self.args.kill_at))
        while True:
            view = (await http.get(f"/api/broadcasts/{self.broadcast_id}", headers=headers)).json()
            self.sent_at_kill = view["counts"]["sent"]
            if view["status"] != "sending" or self.sent_at_kill >= threshold:
                break
            await trio.sleep(0.05)
        if view["status"] != "sending":
            raise RuntimeError(f"the broadcast was {view['status']} before {threshold:,} were sent: raise "
                               "--recipients or lower --rate")
        node = self.cluster.nodes[victim]
        node.process.kill()
        self.killed_at = trio.current_time()
        await node.process.wait()
        self.cluster.dead.add(victim)
        self.accepted_at_kill = len(await self._record())
        print(f"broadcast {self.broadcast_id}: {len(self.phones):,} recipients at WHATSAPP_SENDS_PER_SECOND "
              f"{self.args.rate}; SIGKILL of node {victim + 1} (pid {node.process.pid}) once {self.sent_at_kill:,} "
              f"were sent by the API's counts, {self.accepted_at_kill:,} accepted by the platform", flush=True)
        deadline = self.killed_at + self.args.settle_timeout
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._watch_resume, deadline)
            if self.args.restart_after is not None:
                await trio.sleep(self.args.restart_after)
                await restart()
                self.restarted_after = trio.current_time() - self.killed_at
                print(f"node {victim + 1} started again {self.restarted_after:.2f} s after the SIGKILL "
                      f"(--restart-after {self.args.restart_after:g})", flush=True)
            await self._wait_done(http, headers, deadline)
            nursery.cancel_scope.cancel()

    async def _record(self) -> list[dict]:
        phones = set(self.phones)
        return [send for send in await platform_record(self.platform_url, self.ws.phone_number_id)
                if send["to"] in phones]

    async def _watch_resume(self, deadline: float) -> None:
        with trio.move_on_at(deadline):
            while len(await self._record()) <= self.accepted_at_kill:
                await trio.sleep(0.05)
            self.resumed_after = trio.current_time() - self.killed_at

    async def _wait_done(self, http: httpx.AsyncClient, headers: dict, deadline: float) -> None:
        with trio.move_on_at(deadline):
            while True:
                try:
                    view = (await http.get(f"/api/broadcasts/{self.broadcast_id}", headers=headers)).json()
                    self.status, self.counts = view.get("status", ""), view.get("counts", {})
                except (httpx.HTTPError, ValueError):
                    self.status = ""
                if self.status == "completed":
                    if self.completed_after is None:
                        self.completed_after = trio.current_time() - self.killed_at
                    accepted = {str(send["callback_data"]) for send in await self._record()}
                    pending = {str(row["id"]) for row in await self.db.fetch(
                        "SELECT id FROM messages WHERE broadcast_id = $1 AND status = 'pending'", self.broadcast_id)}
                    if not accepted & pending:
                        self.settled = True
                        return
                await trio.sleep(0.2)

    async def report(self) -> int:
        got = Counter(send["to"] for send in await self._record())
        rows = await self.db.fetch(
            "SELECT r.phone, r.state, m.status FROM broadcast_recipients r LEFT JOIN messages m ON m.id = r.message_id"
            " WHERE r.broadcast_id = $1", self.broadcast_id)
        once = sum(1 for row in rows if got[row["phone"]] == 1)
        twice = sum(1 for row in rows if got[row["phone"]] > 1)
        never = [row for row in rows if got[row["phone"]] == 0]
        in_flight = sum(1 for row in never if row["state"] == "claimed" and row["status"] == "pending")
        print("the broadcast resumed " + (f"{self.resumed_after:.2f} s after the SIGKILL (the platform's first send "
                                          "of it after the kill)" if self.resumed_after is not None else "never"))
        print(f"the broadcast: {self.status or 'unknown'}"
              + (f" {self.completed_after:.1f} s after the SIGKILL" if self.completed_after is not None else "")
              + ("" if self.settled else "; NOT every accepted send settled before the deadline"))
        if self.counts:
            print("its counts: " + ", ".join(f"{name} {self.counts.get(name, 0):,}" for name in
                                              ("recipients", "queued", "in_flight", "sent", "failed", "skipped")))
        print(f"recipients sent once: {once:,}, twice: {twice} (bound 0), never: {len(never)} (bound 0; left in "
              f"flight {in_flight})")
        return 1 if twice or never or not self.settled else 0

