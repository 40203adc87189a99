"""Spreading the workspaces over the nodes: a node that holds more than its fair share hands some to the node holding
the fewest, so a node that joins takes its part over time.

A workspace stays where it was first taken; without this, a node started later would serve only workspaces first
needed after it started. Every period (INBOX_REBALANCE_SECONDS, 10 s on a node of a cluster, 0 to turn it off;
give or take a fifth, so that nodes do not all look at once) each node reads how many workspaces every live node
holds (leases.py's registry, a node that holds none included), and if it holds more than its share (the total
over the nodes, rounded up) it hands the excess over, at most HAND_OVERS_PER_ROUND a round, each to the node then
holding the fewest, and only while that node would still hold fewer than this one. Handing one over
(placement.hand_over): new requests for it wait, those under way here finish, its actors stop, and the lease passes
straight to the chosen node, under the next epoch; the waiting requests are relayed there. No request is refused
for it, and nothing is written twice: the chosen node starts the workspace's actors only once they have stopped
here.

The actors stop only once the work already begun is done: the requests under way here, then the messages their
actors still have queued or in hand, while every actor of the workspace can still be reached (a customer's message
acknowledged, its chat's actor then sends the bot's answer through the number's send pacer). Stopping the pacer under
that send would fail the answer and hand the chat to a person. Work an actor does in a task of its own (a webhook
endpoint delivering its outbox, a broadcast's run) is not waited for: it is kept in PostgreSQL, and the next node
takes it up. Each wait is bounded (SETTLE_SECONDS): a workspace busy past it is handed over all the same, and the
bound's passing logged with the actors still busy.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable
from datetime import timedelta
from functools import partial

import trio

from inbox_actors.cluster.placement import WorkspacePlacement
from inbox_actors.runtime import ActorSystem
from inbox_actors.runtime.outage_log import OutageLog
from persistence.database import DatabaseUnavailable
from persistence.queries import workspace_leases

log = logging.getLogger("inbox_actors.cluster.rebalancing")

REBALANCE_SECONDS = 10.0
HAND_OVERS_PER_ROUND = 16
# How long a hand-over waits for the workspace's requests under way, then for its actors to have no work, then
# for them to stop, before going on. New requests for it wait meanwhile, so the bound is below the platform's
# webhook timeout.
SETTLE_SECONDS = 3.0
_POLL_SECONDS = 0.02


class Rebalancer:
    """`requests_under_way(workspace_id)`: how many requests for the workspace this node is serving now."""

    def __init__(self, placement: WorkspacePlacement, actors: ActorSystem,
                 requests_under_way: Callable[[int], int], *, period: float | None = None,
                 per_round: int = HAND_OVERS_PER_ROUND) -> None:
        self.placement, self.actors = placement, actors
        self.requests_under_way = requests_under_way
        self.period = period if period is not None else REBALANCE_SECONDS
        self.per_round = per_round

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        # A round is advisory: one that fails (the database out, a statement PostgreSQL cancelled) leaves each
        # workspace where it is, and must not stop the node; the next round looks again.
        outage = OutageLog(log, "rebalancing (each workspace stays where it is meanwhile)", (DatabaseUnavailable,))
        while True:
            await trio.sleep(self.period * random.uniform(0.8, 1.2))
            try:
                await self.rebalance()
            except Exception as err:
                outage.failed(err)
            else:
                outage.succeeded()

    async def rebalance(self) -> int:
        """One round: how many workspaces were handed over."""
        keeper = self.placement.keeper
        if not keeper.node_id:
            return 0                             # not named yet: it holds nothing
        # Shielded and bounded: a read cut off mid-query when the node stops would leave its connection so.
        with trio.CancelScope(shield=True, deadline=trio.current_time() + 5.0):
            shares = await workspace_leases.shares(keeper.db, timedelta(seconds=keeper.ttl))
        # A node seen dead (crash_watch.py) is still among those seen lately for a lease's length: handed nothing.
        shares = {node: held for node, held in shares.items() if node not in keeper.dead_nodes}
        mine = list(keeper.held())
        me = keeper.node_id
        shares[me] = len(mine)
        if len(shares) < 2:
            return 0
        fair = math.ceil(sum(shares.values()) / len(shares))
        handed = 0
        for workspace in mine[:max(0, min(len(mine) - fair, self.per_round))]:
            target = min((node for node in shares if node != me), key=lambda node: (shares[node], node))
            if shares[target] + 1 >= shares[me]:
                break                            # evened out: one more would only move the imbalance
            if await self.placement.hand_over(workspace, target, partial(self._work_finished, workspace),
                                              partial(self._actors_stopped, workspace)):
                shares[target] += 1
                shares[me] -= 1
                handed += 1
                log.info("handed workspace %d to node %s (this node now holds %d, that one %d)", workspace, target,
                         shares[me], shares[target])
        return handed

    async def _work_finished(self, workspace_id: int) -> None:
        await _settled(workspace_id, "requests under way", partial(self.requests_under_way, workspace_id))
        await _settled(workspace_id, "actors with messages", partial(self.actors.busy_in_workspace, workspace_id))

    async def _actors_stopped(self, workspace_id: int) -> None:
        self.actors.evict_workspace(workspace_id)
        await _settled(workspace_id, "actors stopping", partial(self.actors.live_in_workspace, workspace_id))


async def _settled(workspace_id: int, what: str, left: Callable[[], int | list[str]]) -> None:
    """Until nothing is `left()` (a count, or names), for SETTLE_SECONDS at most."""
    with trio.move_on_after(SETTLE_SECONDS):
        while left():
            await trio.sleep(_POLL_SECONDS)
        return
    still = left()
    named = f" ({', '.join(still[:5])}{', ...' if len(still) > 5 else ''})" if isinstance(still, list) else ""
    log.warning("handing workspace %d over: %d %s after %.1f s%s; going on", workspace_id,
                len(still) if isinstance(still, list) else still, what, SETTLE_SECONDS, named)
