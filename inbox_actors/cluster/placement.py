"""The runtime's placement (runtime/placement.py) for a node among several: a workspace's actors run on the node
holding its lease (cluster/leases.py). A workspace no node holds is taken by the first node that needs it (a request,
a timer's sweep, an outbox notification); one that another node holds is answered with that node's id, which is the
address the HTTP front forwards the request to."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager

import trio

from inbox_actors.cluster.leases import LeaseKeeper
from inbox_actors.runtime.expiring_cache import ExpiringCache
from persistence.queries import workspace_leases
from persistence.statement_fence import StatementFence, fencing_statements

# How long a node trusts what it learned of another node's lease before asking PostgreSQL again: a request landing
# on the wrong node costs a lookup at most this often per workspace.
OWNER_MEMORY_SECONDS = 1.0
_OWNERS_REMEMBERED = 10_000


class WorkspacePlacement:
    def __init__(self, keeper: LeaseKeeper, *, fence_in_database: bool = True) -> None:
        self.keeper = keeper
        # Whether writes are fenced in PostgreSQL as well as in memory (persistence/statement_fence.py): a node of a
        # cluster; a node alone, whose workspaces no other node serves, spares the cost.
        self.fence_in_database = fence_in_database
        # Workspaces being handed to another node, with that node: new requests wait for the hand-over, then go
        # there; once the work under way has finished, the workspace's actors stop and no new one starts here.
        self._handing_over: dict[int, tuple[trio.Event, str]] = {}
        self._stopping: set[int] = set()
        # Workspace -> the node this one handed it to, for a lease's length: a request another node relayed here
        # meanwhile is relayed on there, the one place sure to hold it.
        self._handed: ExpiringCache[int, str] = ExpiringCache(keeper.ttl, _OWNERS_REMEMBERED)
        # Workspace -> the node holding it, as last learned.
        self._owners: ExpiringCache[int, str] = ExpiringCache(OWNER_MEMORY_SECONDS, _OWNERS_REMEMBERED)

    @property
    def node_id(self) -> str:
        return self.keeper.node_id

    def holds(self, workspace_id: int) -> bool:
        return self.keeper.epoch(workspace_id) is not None and workspace_id not in self._stopping

    def admits(self, workspace_id: int) -> bool:
        """Whether a new request for the workspace is served here: held, and not being handed over."""
        return workspace_id not in self._handing_over and self.holds(workspace_id)

    async def claim(self, workspace_id: int, *, by_actor: bool = False) -> str | None:
        while (handing := self._handing_over.get(workspace_id)) is not None:
            if by_actor:
                return handing[1]
            await handing[0].wait()
        known = self._owners.recall(workspace_id)
        if known is not None and known[0] not in self.keeper.dead_nodes:
            return known[0]
        # Twice: a lease that expires between the refused take and the lookup is free for the second take.
        for _ in range(2):
            if await self.keeper.acquire(workspace_id) is not None:
                self._owners.forget(workspace_id)
                return None
            owner = await workspace_leases.owner(self.keeper.db, workspace_id)
            if owner is not None:
                self._owners.keep(workspace_id, owner.node_id)
                return owner.node_id
        return ""

    def guarding(self, workspace_id: int | None) -> AbstractContextManager[None]:
        """An actor's statements for `workspace_id` are fenced by the lease as the node holds it now, the epoch its
        actors were started under (persistence/statement_fence.py); a node's own actors are not fenced. Were the
        hold already gone, epoch 0, which no lease has, refuses everything."""
        if workspace_id is None:
            return fencing_statements(None)
        epoch = self.keeper.epoch(workspace_id) or 0
        return fencing_statements(StatementFence(workspace_id, epoch, self.keeper.epoch,
                                                 in_database=self.fence_in_database))

    async def hand_over(self, workspace_id: int, target: str, work_finished: Callable[[], Awaitable[None]],
                        actors_stopped: Callable[[], Awaitable[None]]) -> bool:
        """Give a workspace this node holds to the node `target`. New requests for it wait (`admits` is false,
        `claim` waits) while `work_finished()` lets the work under way here finish (the requests, then what their
        actors still do with each other: a bot's answer asks the number's send pacer); then no actor of the
        workspace starts here any more (`holds` is false: an actor's send to one answers that the workspace is on
        `target`) while `actors_stopped()` stops the live ones; then the lease passes to `target`, where the
        waiting requests go. Whether it passed."""
        if workspace_id in self._handing_over or not self.holds(workspace_id):
            return False
        handing = trio.Event()
        self._handing_over[workspace_id] = (handing, target)
        try:
            await work_finished()
            self._stopping.add(workspace_id)
            await actors_stopped()
            handed = await self.keeper.hand_to(workspace_id, target)
            if handed:
                self._owners.keep(workspace_id, target)
                self._handed.keep(workspace_id, target)
            return handed
        finally:
            self._stopping.discard(workspace_id)
            del self._handing_over[workspace_id]
            handing.set()

    def handed_to(self, workspace_id: int) -> str | None:
        """The node this one recently handed the workspace to, if it did."""
        known = self._handed.recall(workspace_id)
        return known[0] if known is not None else None

    def forget_owner(self, workspace_id: int) -> None:
        """What this node knew of another node holding the workspace is stale (that node did not answer)."""
        self._owners.forget(workspace_id)
