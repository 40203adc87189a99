"""Waking the readers of a workspace's event stream when its outbox grows.

Not actor-owned state: nothing here is a record anybody races to change. It is a doorbell; what rang it is in the
outbox, which every reader reads for itself. The outbox listener rings it on each notification of the workspace
(one per committed transaction). A reader arms the bell before it reads, so a commit between its read and its wait
still wakes it, then waits for the ring or its own timeout. Only workspaces with readers have a bell, so the map is
no larger than the set of workspaces with live pages open.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import trio


class Bell:
    __slots__ = ("rung", "armed")

    def __init__(self) -> None:
        self.rung = trio.Event()
        self.armed = 0

    async def wait(self, timeout: float) -> bool:
        """Until it rings (True, at once if it rang since it was armed) or `timeout` seconds pass (False)."""
        with trio.move_on_after(timeout):
            await self.rung.wait()
        return self.rung.is_set()


class WorkspaceWakeups:
    def __init__(self) -> None:
        self._bells: dict[int, Bell] = {}

    def ring(self, workspace_id: int) -> None:
        bell = self._bells.pop(workspace_id, None)
        if bell is not None:
            bell.rung.set()

    @contextmanager
    def armed(self, workspace_id: int) -> Iterator[Bell]:
        """The workspace's bell, armed for one wait: read, then wait on it."""
        bell = self._bells.get(workspace_id)
        if bell is None:
            bell = self._bells[workspace_id] = Bell()
        bell.armed += 1
        try:
            yield bell
        finally:
            bell.armed -= 1
            if bell.armed == 0 and self._bells.get(workspace_id) is bell:
                del self._bells[workspace_id]

    def workspaces_with_readers(self) -> int:
        return len(self._bells)
