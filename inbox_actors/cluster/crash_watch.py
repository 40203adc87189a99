"""Noticing a node's death within a second or two, by its liveness lock (liveness.py), and taking its workspaces.

Every PROBE_SECONDS a node of a cluster reads, in one statement, which live nodes' liveness locks are held
(`workspace_leases.liveness`, a look at pg_locks). A node whose lock it saw held, and then saw free for
CONFIRM_SECONDS, is dead: its process ended, or its sessions did (an operator ended them; the node then gives up its
leases itself as soon as it learns it, which CONFIRM_SECONDS leaves it time to). Never across a PostgreSQL restart,
which frees every lock at once: only a lock seen held and then free under the same server start counts.

The nodes seen dead go to the lease keeper (`LeaseKeeper.saw_dead`), so that whatever needs one of their workspaces
on this node (a request, a sweep) takes it at once instead of waiting for the lease to expire; the take checks again,
in its statement, that the lock is still free. And, with no traffic at all, this watch takes the dead node's
workspaces itself: those this node wins by rendezvous hashing among the nodes alive (so that survivors share them
out), and after TAKE_ANY_AFTER_SECONDS whichever are left, at most TAKES_PER_ROUND a round. A taken workspace's
former work (a broadcast sending, webhook events pending) resumes through the keeper's `on_taken`.

Cost: one statement every half second per node, 0.2 to 0.3 ms of round trip on a quiet machine; measured in
docs/nodes.md.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime, timedelta

import trio

from inbox_actors.cluster.leases import LeaseKeeper
from inbox_actors.runtime.outage_log import OutageLog
from persistence.database import DatabaseUnavailable
from persistence.queries import workspace_leases

log = logging.getLogger("inbox_actors.cluster.crash_watch")

PROBE_SECONDS = 0.5
# A lock seen free this long (two probes) is a dead node's: time for a live node whose session alone ended to hear so
# and give up its leases first (liveness.py).
CONFIRM_SECONDS = 0.5
# A dead node's workspaces that the node winning them has not taken by then are taken by whoever looks.
TAKE_ANY_AFTER_SECONDS = 1.0
TAKES_PER_ROUND = 64
READ_BOUND_SECONDS = 5.0


class CrashWatch:
    def __init__(self, keeper: LeaseKeeper, *, probe_seconds: float = PROBE_SECONDS,
                 confirm_seconds: float = CONFIRM_SECONDS) -> None:
        self.keeper = keeper
        self.probe_seconds, self.confirm_seconds = probe_seconds, confirm_seconds
        self._server_started: datetime | None = None
        self._seen_held: set[str] = set()         # under `_server_started`
        self._free_since: dict[str, float] = {}   # nodes seen held, now seen free: since when (trio time)
        self._alive: tuple[str, ...] = ()
        self._outage = OutageLog(log, "watching the nodes' liveness locks (dead nodes' leases expire meanwhile)",
                                 (DatabaseUnavailable,))

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            await trio.sleep(self.probe_seconds)
            # Advisory: whatever a round meets, the next one looks again, and a dead node's leases still expire.
            with trio.CancelScope(shield=True, deadline=trio.current_time() + READ_BOUND_SECONDS) as bound:
                try:
                    await self.look()
                except Exception as err:
                    self._outage.failed(err)
                else:
                    self._outage.succeeded()
            if bound.cancelled_caught:
                self._outage.failed(DatabaseUnavailable(f"a round took more than {READ_BOUND_SECONDS:g} s"))

    async def look(self) -> list[str]:
        """One probe, and the takes it calls for: the nodes dead now."""
        keeper = self.keeper
        if not keeper.node_id:
            return []
        seen = await workspace_leases.liveness(keeper.db, timedelta(seconds=keeper.ttl))
        now = trio.current_time()
        if seen.server_started != self._server_started:
            # A restart freed every lock: nobody is dead until seen holding its lock again and losing it.
            self._server_started = seen.server_started
            self._seen_held.clear()
            self._free_since.clear()
        for node, alive in seen.alive.items():
            if node == keeper.node_id:
                continue
            if alive:
                self._seen_held.add(node)
                self._free_since.pop(node, None)
            elif node in self._seen_held:
                self._free_since.setdefault(node, now)
        for node in list(self._free_since):
            if node not in seen.alive:            # aged out of cluster_nodes: its leases have expired by now
                del self._free_since[node]
                self._seen_held.discard(node)
        dead = [node for node, since in self._free_since.items() if now - since >= self.confirm_seconds]
        newly = set(dead) - set(keeper.dead_nodes)
        keeper.saw_dead(dead, self._server_started)
        for node in sorted(newly):
            log.warning("node %s is dead (its liveness lock is free, %.1f s after it was first seen so): its "
                        "workspaces are taken at once", node, now - self._free_since[node])
        self._alive = tuple(sorted({node for node, alive in seen.alive.items() if alive} | {keeper.node_id}))
        if dead:
            await self._take_from(dead, now)
        return dead

    async def _take_from(self, dead: list[str], now: float) -> None:
        keeper = self.keeper
        left = TAKES_PER_ROUND
        for node in dead:
            anyone = now - self._free_since[node] >= self.confirm_seconds + TAKE_ANY_AFTER_SECONDS
            for workspace_id in await workspace_leases.held_by(keeper.db, node, TAKES_PER_ROUND):
                if left <= 0:
                    return
                if not anyone and _winner(self._alive, workspace_id) != keeper.node_id:
                    continue
                left -= 1
                if await keeper.acquire(workspace_id) is not None:
                    log.info("took workspace %d from dead node %s", workspace_id, node)


def _winner(nodes: tuple[str, ...], workspace_id: int) -> str | None:
    """The node among `nodes` that takes a dead node's workspace first (rendezvous hashing)."""
    return max(nodes, key=lambda node: hashlib.blake2b(f"{node}\nworkspace {workspace_id}".encode(),
                                                      digest_size=8).digest(), default=None)
