"""Registry: what a cell needs of its supervisor (the ActorSystem), as a typed seam, so cell.py does not
import the system."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from .ref import ActorRef

if TYPE_CHECKING:
    from .cell import Cell


class Registry(Protocol):
    """What a cell tells its supervisor (the ActorSystem) about its life, and what it borrows from it."""

    def start_soon(self, async_fn: Callable[..., Awaitable[Any]], *args: Any, name: object = None) -> None:
        """Run a task in the system's nursery (the cell's loop, its retirement, its instance's ActorTasks)."""

    def parked(self, cell: Cell) -> None:
        """The cell's mailbox ran empty and its task ended: its idle clock starts."""

    def woken(self, cell: Cell) -> None:
        """The parked cell has work again: its idle clock stops."""

    def forget(self, cell: Cell) -> None:
        """Stop routing new sends to this cell; it is still finishing (on_stop) until note_exited."""

    def note_exited(self, cell: Cell) -> None: ...

    def note_restarted(self, cell: Cell) -> None:
        """The cell restarted after a crash: operators see it among the failing while it stays in memory."""

    def note_failed(self, cell: Cell) -> None:
        """The cell escalated (restart intensity exceeded): the kind's supervisor decides what follows."""

    def outage(self, exc: BaseException) -> bool:
        """Whether the crash was caused by an outage of a dependency every actor shares (outages.py), not by the
        actor: it then counts toward neither the restart intensity nor the kind's circuit."""

    def waits_out(self, cell: Cell) -> None:
        """The cell waits out an outage in its restart backoff: woken (`Cell.outage_over`) once the outage is over."""

    def done_waiting(self, cell: Cell) -> None:
        """The cell's outage backoff ended (its time ran out, it was woken, or it was stopped)."""

    def outage_over(self) -> None:
        """A cell that waited out an outage started again: the dependency is back; wake every cell still waiting."""

    def guarding(self, cell: Cell) -> AbstractContextManager[None]:
        """Around each task of the cell: for an actor of a workspace, the placement's guard of its statements."""

    def ref(self, kind: str, key: str) -> ActorRef:
        """A handle to any actor of the system (what an actor is given to reach the others)."""
