"""The runtime's placement (runtime/placement.py) for a node among several: a workspace's actors run on the node
holding its lease (cluster/leases.py). A workspace no node holds is taken by the first node that needs it (a request,
a timer's sweep, an outbox notification); one that another node holds is answered with that node's id, which is the
address the HTTP front forwards the request to."""

from __future__ import annotations

from contextlib import AbstractContextManager

from inbox_actors.cluster.leases import LeaseKeeper
from inbox_actors.cluster.short_memory import ShortMemory
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
        # Workspace -> the node holding it, as last learned.
        self._owners: ShortMemory[int, str] = ShortMemory(OWNER_MEMORY_SECONDS, _OWNERS_REMEMBERED)

    @property
    def node_id(self) -> str:
        return self.keeper.node_id

    def holds(self, workspace_id: int) -> bool:
        return self.keeper.epoch(workspace_id) is not None

    async def claim(self, workspace_id: int) -> str | None:
        known = self._owners.recall(workspace_id)
        if known is not None:
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

    def forget_owner(self, workspace_id: int) -> None:
        """What this node knew of another node holding the workspace is stale (that node did not answer)."""
        self._owners.forget(workspace_id)
