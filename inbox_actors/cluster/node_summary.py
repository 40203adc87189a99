"""A node of a cluster tells the operators about itself: every PUBLISH_EVERY_SECONDS it writes its own figures
(monitoring/node_figures.py: live actors per kind, requests relayed, its clock's skew) to its row of
`node_summaries` (migration 033), which any node reads when GET /ops/cluster shows the whole cluster.

Why published, rather than each node asked by the one answering the page over the node-to-node channel: the node an
operator most needs to see is the one that cannot answer (dead, paused, cut off), and its last figures, with when it
said them, are still here; the page's look is one statement on whichever node answers, however many nodes there are
and however many pages are open, with no fan-out to bound and no new signed path between nodes to guard. What it
costs is one small statement per node per second (measured in docs/nodes.md), and figures up to a second old. A
node's loss is not read from here: its liveness lock tells it at once (pg_locks), and a node silent for a few
seconds while its lock stays held is shown as such.

A node stopping marks its row stopped; a row no node has published for KEEP_FOR is deleted, by whichever node prunes
next (every PRUNE_EVERY_SECONDS). Like every background loop of a node, this one outlives a database outage: a round
that fails is logged once per outage, and the next one publishes again.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from datetime import timedelta

import trio

from inbox_actors.monitoring.node_figures import NodeFigures, encode
from inbox_actors.runtime.outage_log import OutageLog
from persistence.database import Database, DatabaseUnavailable
from persistence.queries import node_summaries

log = logging.getLogger("inbox_actors.cluster.node_summary")

PUBLISH_EVERY_SECONDS = 1.0
# A round is one statement (two, when it prunes): one that takes longer is given up, and the next round tries again.
ROUND_BOUND_SECONDS = 2.0
KEEP_FOR = timedelta(days=1)
PRUNE_EVERY_SECONDS = 3600.0


class NodeSummaryPublisher:
    """Publishes `figures()` as the node `node_id()` once `named()` returns (a node named by the address it serves
    on learns it once listening)."""

    def __init__(self, db: Database, node_id: Callable[[], str], named: Callable[[], Awaitable[None]],
                 figures: Callable[[], NodeFigures], *, every: float = PUBLISH_EVERY_SECONDS) -> None:
        self.db = db
        self._node_id, self._named, self._figures = node_id, named, figures
        self.every = every
        self.incarnation = secrets.token_hex(8)
        self.published = 0

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Publish now and every `every` seconds until cancelled; then mark the node stopped."""
        task_status.started()
        await self._named()
        node = self._node_id()
        outage = OutageLog(log, f"node {node}: publishing its figures for the operators (others show its last "
                                "ones meanwhile)", (DatabaseUnavailable,))
        prune_at = trio.current_time()
        try:
            while True:
                with trio.CancelScope(shield=True, deadline=trio.current_time() + ROUND_BOUND_SECONDS) as bound:
                    try:
                        await self._publish(node)
                        if trio.current_time() >= prune_at:
                            prune_at = trio.current_time() + PRUNE_EVERY_SECONDS
                            if forgotten := await node_summaries.prune(self.db, KEEP_FOR):
                                log.info("forgot %d nodes that published nothing for %s", forgotten, KEEP_FOR)
                    except Exception as err:     # whatever a round meets, the next one publishes again
                        outage.failed(err)
                    else:
                        outage.succeeded()
                if bound.cancelled_caught:
                    outage.failed(DatabaseUnavailable(f"a round took more than {ROUND_BOUND_SECONDS:g} s"))
                await trio.sleep(self.every)
        finally:
            with trio.CancelScope(shield=True, deadline=trio.current_time() + ROUND_BOUND_SECONDS):
                try:
                    await node_summaries.stopped(self.db, node, self.incarnation)
                except Exception as err:         # the node stops all the same; its lock tells the others
                    log.info("node %s: its summary was not marked stopped (%s)", node, err)

    async def _publish(self, node: str) -> None:
        figures = self._figures()
        await node_summaries.publish(self.db, node, self.incarnation, figures.pid, figures.uptime_seconds,
                                     encode(figures))
        self.published += 1
