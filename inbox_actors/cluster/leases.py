"""The workspace leases one node holds (persistence/queries/workspace_leases.py), kept alive by one task.

PostgreSQL is the coordinator: a lease row per workspace, with an expiry on PostgreSQL's clock and an epoch that
grows at each change of owner. Not a session advisory lock: PostgreSQL releases one only when the holder's
connection dies, and the connection of a paused process (SIGSTOP, a long stall) stays open, its kernel still
answering for it, so nobody could ever take over from it. A lease expires by itself.

A node holds a lease, as it sees it, until `ttl - margin` after it *sent* the statement that granted or last
renewed it: PostgreSQL set the expiry from its own `now()`, which is later, so the node stops using a lease before
any other node may take it, whatever the statement's delay (`margin` covers the two clocks' rates). A node that
stalls past that and wakes finds the lease gone (`epoch` answers None) and tells `on_lost` at once; writes it had
under way are refused by the fence (`workspace_leases.fence`), which a takeover waits for.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Awaitable, Callable, NamedTuple, TypeVar

import trio

from persistence.database import Database, DatabaseUnavailable
from persistence.queries import workspace_leases

log = logging.getLogger("inbox_actors.cluster.leases")

T = TypeVar("T")

# A dead node's workspaces wait at most this long for another node (its last renewal's lease running out).
LEASE_SECONDS = 8.0
# How much sooner than the lease's expiry a node stops counting on it.
MARGIN_SECONDS = 2.0
# Renewals per lease period (one every 1.3 s): a node keeps its leases through a stall or a database blip of up to
# 4.7 s (its hold, 6 s, less one period), which a loaded machine can cause, and a lease lost on a node alone costs
# its actors and the requests under way.
RENEWALS_PER_LEASE = 6


# The longest a lease statement may take before it is given up as failed (the database's own look at it).
STATEMENT_SECONDS = 5.0
# How long a take waits for an expired lease's row before ending the sessions that hold it (a fenced write takes
# milliseconds; one held longer was left open by a node that stopped).
FENCE_OUT_AFTER_SECONDS = 1.0


async def _whole(statement: Awaitable[T]) -> T:
    """Run a lease statement to its end, even when the task is cancelled meanwhile (a node stopping): one cut off
    would leave its connection mid-query for whoever closes the pool. Bounded: DatabaseUnavailable past
    STATEMENT_SECONDS."""
    with trio.CancelScope(shield=True, deadline=trio.current_time() + STATEMENT_SECONDS) as scope:
        return await statement
    assert scope.cancelled_caught
    raise DatabaseUnavailable(f"a lease statement took more than {STATEMENT_SECONDS:g}s")


class _Hold(NamedTuple):
    epoch: int
    until: float        # trio time after which this node no longer counts on the lease


class LeaseKeeper:
    """The leases of node `node_id`. `run` renews them and watches their deadlines; `on_lost(workspace_id)` is told,
    once, of each lease lost (not renewed in time, or taken over after a stall): the node must stop that workspace's
    actors, which the fence refuses to write for already."""

    def __init__(self, db: Database, node_id: str | None, *, on_lost: Callable[[int], object],
                 ttl: float = LEASE_SECONDS, margin: float = MARGIN_SECONDS,
                 fence_out_after: float = FENCE_OUT_AFTER_SECONDS, announce: bool = False) -> None:
        if not 0 < margin < ttl:
            raise ValueError("the margin must be positive and shorter than the lease")
        self.db = db
        # A node named by the address it serves on learns it once listening: leases wait for the name.
        self.node_id = node_id or ""
        self._named = trio.Event()
        if node_id:
            self._named.set()
        self.ttl, self.margin = ttl, margin
        self.fence_out_after = fence_out_after
        # Whether the node says it is alive at every renewal (cluster_nodes), so that nodes rebalancing count it
        # and nodes choosing an address's owner choose among it (membership.py).
        self.announce = announce
        self.on_lost = on_lost
        self._held: dict[int, _Hold] = {}
        self._changed = trio.Event()     # a lease taken: the watch looks at the deadlines again
        # One statement per workspace at a time: the senders that need it meanwhile wait for its answer.
        self._taking: dict[int, trio.Event] = {}

    def name(self, node_id: str) -> None:
        """Name the node (once), letting `acquire` take leases."""
        if self._named.is_set():
            raise RuntimeError(f"the node is named {self.node_id!r} already")
        self.node_id = node_id
        self._named.set()

    def epoch(self, workspace_id: int) -> int | None:
        """The epoch this node holds the workspace under, while it may count on it; None otherwise."""
        hold = self._held.get(workspace_id)
        if hold is None or trio.current_time() >= hold.until:
            return None
        return hold.epoch

    def held(self) -> dict[int, int]:
        """Every lease this node may count on now: workspace id -> epoch."""
        now = trio.current_time()
        return {workspace: hold.epoch for workspace, hold in self._held.items() if now < hold.until}

    async def acquire(self, workspace_id: int) -> int | None:
        """Take the workspace's lease unless another node holds it: the epoch to write under, or None. A lease this
        node holds already is answered as it is; one it held past its deadline is told lost first (after a stall,
        before the deadlines' watch has run), so whatever ran under the old epoch stops."""
        await self._named.wait()
        while (taking := self._taking.get(workspace_id)) is not None:
            await taking.wait()
        epoch = self.epoch(workspace_id)
        if epoch is not None:
            return epoch
        if workspace_id in self._held:
            self._lose(workspace_id, "not renewed in time")
        self._taking[workspace_id] = taking = trio.Event()
        try:
            sent = trio.current_time()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._fence_out_while_taking, workspace_id)
                epoch = await _whole(workspace_leases.take(self.db, workspace_id, self.node_id,
                                                           timedelta(seconds=self.ttl)))
                nursery.cancel_scope.cancel()
        finally:
            del self._taking[workspace_id]
            taking.set()
        if epoch is not None:
            self._held[workspace_id] = _Hold(epoch, sent + self.ttl - self.margin)
            self._changed.set()
        return epoch

    async def _fence_out_while_taking(self, workspace_id: int) -> None:
        """A take waits while the old holder's fenced writes are under way: a moment, unless that node stopped in the
        middle of one, when it would wait for as long as the node stays stopped. After `fence_out_after` seconds of
        waiting, such sessions are ended (workspace_leases.fence_out), and again as often while the take waits."""
        while True:
            await trio.sleep(self.fence_out_after)
            try:
                ended = await _whole(workspace_leases.fence_out(self.db, workspace_id))
            except DatabaseUnavailable as err:
                log.warning("node %s: ending the sessions that hold workspace %d back failed: %s", self.node_id,
                            workspace_id, err)
                continue
            if ended:
                log.warning("node %s: ended %d database sessions of workspace %d's former holder, which held its "
                            "lease row past the lease", self.node_id, ended, workspace_id)

    async def release(self, workspace_id: int) -> None:
        """Hand the workspace over: its actors must have stopped. Another node may take it at once."""
        hold = self._held.pop(workspace_id, None)
        if hold is not None:
            await workspace_leases.release(self.db, self.node_id, workspace_id, hold.epoch)

    async def hand_to(self, workspace_id: int, target: str) -> bool:
        """Give the workspace to the node `target` (its actors here must have stopped): the lease passes to it under
        the next epoch, and this node no longer holds it either way. Whether it passed (False: it was lost
        meanwhile)."""
        hold = self._held.pop(workspace_id, None)
        if hold is None:
            return False
        return await _whole(workspace_leases.hand_to(self.db, workspace_id, self.node_id, hold.epoch, target,
                                                     timedelta(seconds=self.ttl)))

    async def release_all(self) -> int:
        """Hand every workspace over (a node leaving once its actors have stopped), and stop counting as one of the
        cluster's nodes: how many were released."""
        held = list(self._held)
        for workspace in held:
            await self.release(workspace)
        if self.announce and self._named.is_set():
            await _whole(workspace_leases.leaving(self.db, self.node_id))
        return len(held)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Renew every lease `RENEWALS_PER_LEASE` times a lease period and give up those past their deadline, until
        cancelled."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._renew_forever)
            nursery.start_soon(self._watch_deadlines)
            task_status.started()

    async def _renew_forever(self) -> None:
        await self._named.wait()
        if self.announce:
            # At once, not a renewal period later: the other nodes count it from their next look.
            try:
                await _whole(workspace_leases.seen(self.db, self.node_id))
            except DatabaseUnavailable as err:
                log.warning("node %s: saying it is alive failed (%s); it says so at the next renewal", self.node_id,
                            err)
        while True:
            await trio.sleep(self.ttl / RENEWALS_PER_LEASE)
            held = self.held()
            sent = trio.current_time()
            try:
                if self.announce:
                    await _whole(workspace_leases.seen(self.db, self.node_id))
                renewed = await _whole(workspace_leases.renew(self.db, self.node_id, held,
                                                              timedelta(seconds=self.ttl)))
            except DatabaseUnavailable as err:
                log.warning("node %s: renewing %d leases failed (%s); they lapse at their deadlines",
                            self.node_id, len(held), err)
                continue
            for workspace, epoch in held.items():
                hold = self._held.get(workspace)
                if hold is None or hold.epoch != epoch:
                    continue                     # released or lost meanwhile
                if workspace in renewed:
                    self._held[workspace] = _Hold(epoch, sent + self.ttl - self.margin)
                else:
                    self._lose(workspace, "no longer this node's in PostgreSQL")

    async def _watch_deadlines(self) -> None:
        while True:
            now = trio.current_time()
            for workspace, hold in list(self._held.items()):
                if now >= hold.until:
                    self._lose(workspace, "not renewed in time")
            self._changed = trio.Event()
            earliest = min((hold.until for hold in self._held.values()), default=float("inf"))
            with trio.move_on_at(earliest):
                await self._changed.wait()

    def _lose(self, workspace_id: int, why: str) -> None:
        hold = self._held.pop(workspace_id)
        log.warning("node %s lost the lease of workspace %d (epoch %d): %s", self.node_id, workspace_id, hold.epoch,
                    why)
        self.on_lost(workspace_id)
