"""Placement: which node may run an actor. A kind whose actors belong to a workspace says so
(`ActorKind.workspace_of`); the system then activates one of its actors only while its node holds that workspace, so
across nodes each workspace's state keeps one owner. Without a placement (one process, the tests of the runtime)
every actor runs where it is asked for.

The runtime knows only this seam; the cluster's implementation (inbox_actors/cluster/placement.py) holds the
workspace leases in PostgreSQL.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol


class Placement(Protocol):
    def holds(self, workspace_id: int) -> bool:
        """This node may run the workspace's actors now (no waiting, no I/O)."""

    async def claim(self, workspace_id: int, *, by_actor: bool = False) -> str | None:
        """Take the workspace for this node unless another node holds it: None once this node holds it, else the
        id of the node that does ("" when it could not be told). `by_actor`: asked by an actor of this node (a send
        to another actor of its workspace), which must not wait for this node's own hand-over of the workspace: the
        hand-over waits for the workspace's actors."""

    def guarding(self, workspace_id: int | None) -> AbstractContextManager[None]:
        """Around the tasks of the workspace's actors: what they send to the database once the node no longer holds
        the workspace is refused unsent (a node that wakes from a pause past its lease writes nothing). None: around
        a node's own actor, which must not inherit the guard of the actor whose task started it."""


def workspace_in_key(key: str) -> int:
    """The workspace of a key written `<workspace id>:<rest>` or `<workspace id>` (ActorKind.workspace_of of the
    kinds keyed so)."""
    return int(key.partition(":")[0])
