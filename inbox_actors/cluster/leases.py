"""The workspace leases one node holds (persistence/queries/workspace_leases.py), kept alive by one task.

PostgreSQL is the coordinator: a lease row per workspace, with an expiry on PostgreSQL's clock and an epoch that
grows at each change of owner. A lease expires by itself: that is what ends a paused node's hold (SIGSTOP, a long
stall), whose connections stay open, its kernel still answering for them. A node that died is seen sooner: each node
of a cluster also holds a session-level advisory lock (liveness.py), which PostgreSQL frees when the node's sessions
end, and a node that saw it freed (crash_watch.py) may take the dead node's leases at once, under a new epoch
(`dead_nodes`). A node whose own lock's session ends gives up every lease at once and takes none until it holds
the lock again.

A node holds a lease, as it sees it, until `ttl - margin` after it *sent* the statement that granted or last
renewed it: PostgreSQL set the expiry from its own `now()`, which is later, so the node stops using a lease before
any other node may take it, whatever the statement's delay (`margin` covers the two clocks' rates). Past that
deadline the hold has *lapsed*: `epoch` answers None, so the fence refuses every write and effect of the workspace
(`workspace_leases.fence`, which a takeover waits for), and the node asks PostgreSQL for it back at once. A lease
row still this node's under the same epoch was taken by nobody meanwhile (every take writes a new epoch), so the
hold is *reclaimed* under that epoch and the workspace's actors carry on: a stall or a database blip that no other
node used costs the writes it refused, not the chats' actors (the CI machine at a load of 8 lost every lease of a
lone node this way). A lease another node took is told lost (`on_lost`: the node stops the workspace's actors); one
that cannot be asked about for `ttl` after its deadline (PostgreSQL out of reach) is told lost too.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from datetime import datetime, timedelta
from functools import partial
from typing import Awaitable, Callable, NamedTuple, TypeVar

import trio

from inbox_actors.cluster.liveness import NodeLiveness
from inbox_actors.runtime.outage_log import OutageLog
from persistence.database import Database, DatabaseUnavailable
from persistence.queries import workspace_leases
from persistence.statement_fence import fencing_statements

log = logging.getLogger("inbox_actors.cluster.leases")

T = TypeVar("T")

# A dead node's workspaces wait at most this long for another node (its last renewal's lease running out).
LEASE_SECONDS = 8.0
# How much sooner than the lease's expiry a node stops counting on it.
MARGIN_SECONDS = 2.0
# Renewals per lease period (one every 1.3 s): a node keeps its leases through a stall of up to 4.7 s (its hold,
# 6 s, less one period), which a loaded machine can cause, and a lease lost on a node alone costs its actors and the
# requests under way.
RENEWALS_PER_LEASE = 6
# After a renewal that failed, the next try comes sooner, doubling from the first to the most: leases survive a
# database outage that ends within 5.5 s of their last renewal (the hold, 6 s, less the most), not 4.7 s.
RETRY_FIRST_SECONDS = 0.1
RETRY_MOST_SECONDS = 0.5


# The longest a lease statement may take before it is given up as failed (the database's own look at it).
STATEMENT_SECONDS = 5.0
# How long a take waits for the node's liveness lock (being taken at start, or again after a loss): past it, the
# database is most likely out, and the take is refused as such.
LIVENESS_WAIT_SECONDS = 1.0
# How long a take waits for an expired lease's fence lock before ending the sessions that hold it (a fenced write
# takes milliseconds; one held longer was left open by a node that stopped).
FENCE_OUT_AFTER_SECONDS = 1.0


async def _whole(statement: Awaitable[T]) -> T:
    """Run a lease statement to its end, even when the task is cancelled meanwhile (a node stopping): one cut off
    would leave its connection mid-query for whoever closes the pool. Bounded: DatabaseUnavailable past
    STATEMENT_SECONDS. Under no workspace's fence, whatever task asks: the leases are what fences are made of, and a
    take asked from a request not yet placed (its fence at epoch 0) would otherwise be refused the very lease it
    needs."""
    with fencing_statements(None), trio.CancelScope(shield=True,
                                                    deadline=trio.current_time() + STATEMENT_SECONDS) as scope:
        return await statement
    assert scope.cancelled_caught
    raise DatabaseUnavailable(f"a lease statement took more than {STATEMENT_SECONDS:g}s")


class _Hold(NamedTuple):
    epoch: int
    until: float        # trio time after which this node no longer counts on the lease (it has lapsed)


class LeaseKeeper:
    """The leases of node `node_id`. `run` renews them and watches their deadlines; `on_lost(workspace_id)` is told,
    once, of each lease lost (not renewed in time, or taken over after a stall): the node must stop that workspace's
    actors, which the fence refuses to write for already. `on_taken(workspace_id)` is told of each lease taken (a
    new epoch: the workspace's actors start afresh here), and must not block: what the workspace's former holder
    left under way (a broadcast sending) is resumed from there.

    `liveness`: the node's liveness lock (a node of a cluster); leases are taken only while it is held, and all
    are given up when it is lost."""

    def __init__(self, db: Database, node_id: str | None, *, on_lost: Callable[[int], object],
                 ttl: float = LEASE_SECONDS, margin: float = MARGIN_SECONDS,
                 fence_out_after: float = FENCE_OUT_AFTER_SECONDS, announce: bool = False,
                 liveness: NodeLiveness | None = None,
                 on_taken: Callable[[int], object] = lambda workspace_id: None) -> None:
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
        self.on_taken = on_taken
        self.liveness = liveness
        if liveness is not None:
            liveness.on_lost = partial(self.lose_all, "its liveness lock's session ended")
        # Nodes seen dead (crash_watch.py) since PostgreSQL started at `_server_started`: their leases may be taken
        # at once while their liveness locks stay free.
        self._dead: tuple[str, ...] = ()
        self._server_started: datetime | None = None
        self._held: dict[int, _Hold] = {}
        self._changed = trio.Event()     # a lease taken: the watch looks at the deadlines again
        self._lapsed = trio.Event()      # a hold ran out: the renewals ask for it back at once
        # One statement per workspace at a time: the senders that need it meanwhile wait for its answer.
        self._taking: dict[int, trio.Event] = {}

    def name(self, node_id: str) -> None:
        """Name the node (once), letting `acquire` take leases."""
        if self._named.is_set():
            raise RuntimeError(f"the node is named {self.node_id!r} already")
        self.node_id = node_id
        self._named.set()

    async def wait_named(self) -> None:
        await self._named.wait()

    def saw_dead(self, nodes: Collection[str], server_started: datetime | None) -> None:
        """The nodes whose liveness lock was seen held, then free, since PostgreSQL started at `server_started`."""
        self._dead = tuple(sorted(nodes))
        self._server_started = server_started if nodes else None

    @property
    def dead_nodes(self) -> tuple[str, ...]:
        return self._dead

    def lose_all(self, why: str) -> None:
        """Give up every lease now (the node can no longer prove it is alive): each told lost."""
        for workspace in list(self._held):
            self._lose(workspace, why)

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
        node holds already is answered as it is; one that lapsed (after a stall, before the renewals ran) is asked
        back first: under the same epoch if nobody took it, else told lost, so whatever ran under the old epoch
        stops, before a take under a new one."""
        await self._named.wait()
        while (taking := self._taking.get(workspace_id)) is not None:
            await taking.wait()
        epoch = self.epoch(workspace_id)
        if epoch is not None:
            return epoch
        self._taking[workspace_id] = taking = trio.Event()
        failure: Exception | None = None
        try:
            # Another node may take this node's leases while it holds no liveness lock: it takes none meanwhile.
            generation = await self.liveness.wait_held(LIVENESS_WAIT_SECONDS) if self.liveness is not None else 0
            lapsed = self._held.get(workspace_id)
            if lapsed is not None:
                # A stall outran the renewals and the watch alike: ask for it back before anything else.
                await self._renew({workspace_id: lapsed.epoch}, generation)
                if (epoch := self.epoch(workspace_id)) is not None:
                    return epoch
            sent = trio.current_time()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._fence_out_while_taking, workspace_id)
                try:
                    epoch = await _whole(workspace_leases.take(self.db, workspace_id, self.node_id,
                                                               timedelta(seconds=self.ttl), dead=self._dead,
                                                               server_started=self._server_started))
                    if epoch is not None and not self._still_alive(generation):
                        # The lock was lost while the take was under way: another node may take it at once.
                        raise DatabaseUnavailable("this node's liveness lock was lost while it took a lease")
                except Exception as err:
                    # Raised past the nursery as itself: out of it, it would come wrapped in an exception group,
                    # which no caller's `except DatabaseUnavailable` catches (a request answered a bare 500, a
                    # task of the actor system ending the node).
                    failure = err
                nursery.cancel_scope.cancel()
        finally:
            del self._taking[workspace_id]
            taking.set()
        if failure is not None:
            raise failure
        if epoch is not None:
            self._held[workspace_id] = _Hold(epoch, sent + self.ttl - self.margin)
            self._changed.set()
            self.on_taken(workspace_id)
        return epoch

    def _still_alive(self, generation: int) -> bool:
        """Whether the liveness lock held when a lease statement was sent (`generation`) is still the one held."""
        return self.liveness is None or (self.liveness.holding and self.liveness.generation == generation)

    async def _fence_out_while_taking(self, workspace_id: int) -> None:
        """A take waits while the old holder's fenced writes are under way: a moment, unless that node stopped in the
        middle of one, when it would wait for as long as the node stays stopped. After `fence_out_after` seconds of
        waiting, such sessions are ended (workspace_leases.fence_out), and again as often while the take waits."""
        outage = OutageLog(log, f"node {self.node_id}: ending the sessions that hold workspace {workspace_id} back",
                           (DatabaseUnavailable,))
        while True:
            await trio.sleep(self.fence_out_after)
            try:
                ended = await _whole(workspace_leases.fence_out(self.db, workspace_id))
            except Exception as err:     # whatever it meets, the take it helps waits on (and is bounded) as before
                outage.failed(err)
                continue
            outage.succeeded()
            if ended:
                log.warning("node %s: ended %d database sessions of workspace %d's former holder, which held its "
                            "fence lock past the lease", self.node_id, ended, workspace_id)

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
        """Renew until cancelled, and ask for lapsed holds back at once. Nothing a renewal meets ends it (a database
        restarting answers "another operation is in progress", or anything else, for a while): it tries again,
        sooner than a period while it fails; holds it cannot ask about lapse, and are told lost `ttl` later."""
        await self._named.wait()
        period = self.ttl / RENEWALS_PER_LEASE
        outage = OutageLog(log, f"node {self.node_id}: renewing its leases (those not renewed lapse at their "
                                "deadlines)", (DatabaseUnavailable,))
        wait = 0.0 if self.announce else period   # announced at once: the other nodes count it from their next look
        retry = RETRY_FIRST_SECONDS
        while True:
            with trio.move_on_after(wait):
                await self._lapsed.wait()
            self._lapsed = trio.Event()
            generation = self.liveness.generation if self.liveness is not None else 0
            try:
                if self.announce:
                    await _whole(workspace_leases.seen(self.db, self.node_id))
                await self._renew({workspace: hold.epoch for workspace, hold in self._held.items()}, generation)
            except Exception as err:
                outage.failed(err)
                wait, retry = min(retry, RETRY_MOST_SECONDS, period), 2 * retry
                continue
            outage.succeeded()
            wait, retry = period, RETRY_FIRST_SECONDS

    async def _renew(self, held: dict[int, int], generation: int) -> None:
        """Extend the leases in `held` (workspace -> epoch) still this node's under their epochs, lapsed or not,
        in one statement; those no longer its are told lost."""
        if not held:
            return
        sent = trio.current_time()
        renewed = await _whole(workspace_leases.renew(self.db, self.node_id, held, timedelta(seconds=self.ttl)))
        if not self._still_alive(generation):
            return                               # lost meanwhile, every lease with it
        for workspace, epoch in held.items():
            hold = self._held.get(workspace)
            if hold is None or hold.epoch != epoch:
                if workspace in renewed:
                    # Released or handed over while the renewal was under way, which then extended it again:
                    # ended once more, so another node need not wait the lease out.
                    await _whole(workspace_leases.release(self.db, self.node_id, workspace, epoch))
                continue
            if workspace in renewed:
                if trio.current_time() >= hold.until:
                    log.info("node %s took back the lapsed lease of workspace %d (epoch %d): nobody took it "
                             "meanwhile", self.node_id, workspace, epoch)
                self._held[workspace] = _Hold(epoch, sent + self.ttl - self.margin)
            else:
                self._lose(workspace, "no longer this node's in PostgreSQL")
        self._changed.set()

    async def _watch_deadlines(self) -> None:
        """At a hold's deadline, have the renewals ask for it back; `ttl` later, still lapsed, tell it lost."""
        while True:
            now = trio.current_time()
            for workspace, hold in list(self._held.items()):
                if now >= hold.until + self.ttl:
                    self._lose(workspace, f"lapsed, and PostgreSQL not asked in time ({self.ttl:g} s)")
                elif now >= hold.until:
                    self._lapsed.set()
            self._changed = trio.Event()
            earliest = min((hold.until + (self.ttl if now >= hold.until else 0.0) for hold in self._held.values()),
                           default=float("inf"))
            with trio.move_on_at(earliest):
                await self._changed.wait()

    def _lose(self, workspace_id: int, why: str) -> None:
        hold = self._held.pop(workspace_id)
        log.warning("node %s lost the lease of workspace %d (epoch %d): %s", self.node_id, workspace_id, hold.epoch,
                    why)
        self.on_lost(workspace_id)
