"""The nodes of the cluster seen alive lately, and which of them owns a key that belongs to no workspace (a client
address's rate bucket).

Every node of a cluster says it is alive in `cluster_nodes` with each lease renewal (leases.py), and deletes its row
when it leaves. This view reads the rows seen within a lease period again every REFRESH_SECONDS. A key's owner is
chosen by rendezvous hashing (highest random weight) over the nodes in view: every node with the same view picks
the same owner without asking anyone, and a node joining or leaving moves only the keys it wins or held.

Views agree once every node has read the table since the last change, within REFRESH_SECONDS plus a renewal
period. Until then two nodes may pick different owners for a key. A node that could not be reached is left out of
this node's choice for AWAY_SECONDS, so a dead node costs one failed ask, not one per request until its row ages
out.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import timedelta

import trio

from inbox_actors.runtime.outage_log import OutageLog
from persistence.database import Database, DatabaseUnavailable
from persistence.queries import workspace_leases

log = logging.getLogger("inbox_actors.cluster.membership")

REFRESH_SECONDS = 2.0
AWAY_SECONDS = 5.0
# A read cut off mid-query when the node stops would leave its connection so: shielded, and bounded by this.
READ_BOUND_SECONDS = 5.0


class ClusterMembership:
    """`own_id()`: this node's id, None until it is named (it listens); the node is always in its own view."""

    def __init__(self, db: Database, own_id: Callable[[], str | None], *, within: float) -> None:
        self.db = db
        self.own_id = own_id
        self.within = timedelta(seconds=within)
        self._seen: tuple[str, ...] = ()
        self._away: dict[str, float] = {}
        self._outage = OutageLog(log, "reading the live nodes (the last view stands meanwhile)", (DatabaseUnavailable,))

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Read the live nodes now, then every REFRESH_SECONDS, until cancelled."""
        await self.refresh()
        task_status.started()
        while True:
            await trio.sleep(REFRESH_SECONDS)
            await self.refresh()

    async def refresh(self) -> None:
        # The view only advises where to count an address: whatever keeps it from being read (an outage, a
        # statement cancelled, a read past its bound) leaves the last view standing, and never stops the node.
        with trio.CancelScope(shield=True, deadline=trio.current_time() + READ_BOUND_SECONDS) as bound:
            try:
                self._seen = tuple(sorted(await workspace_leases.live_nodes(self.db, self.within)))
            except Exception as err:
                self._outage.failed(err)
            else:
                self._outage.succeeded()
        if bound.cancelled_caught:
            self._outage.failed(DatabaseUnavailable(f"the read took more than {READ_BOUND_SECONDS:g} s"))

    def nodes(self) -> tuple[str, ...]:
        """The nodes this node would choose among now: those seen, less those away, with itself."""
        now = trio.current_time()
        own = self.own_id()
        chosen = {node for node in self._seen if self._away.get(node, 0.0) <= now}
        if own is not None:
            chosen.add(own)
        return tuple(sorted(chosen))

    def owner_of(self, key: str) -> str | None:
        """The node that owns `key` in this node's view; None while this node is not named yet."""
        return max(self.nodes(), key=lambda node: _weight(node, key), default=None)

    def away(self, node: str) -> None:
        """`node` did not answer: leave it out of the choice for AWAY_SECONDS."""
        self._away[node] = trio.current_time() + AWAY_SECONDS
        if len(self._away) > 4 * len(self._seen) + 16:          # forget those long back, so the dict stays small
            now = trio.current_time()
            self._away = {node: until for node, until in self._away.items() if until > now}


def _weight(node: str, key: str) -> bytes:
    return hashlib.blake2b(f"{node}\n{key}".encode(), digest_size=8).digest()
