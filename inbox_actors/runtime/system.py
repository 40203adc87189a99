"""The actor system: registry of live actors, the supervisor nursery they run in, activation and shutdown."""

from __future__ import annotations

import heapq
import logging
import math
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import trio

from .actor import ActorKind
from .cell import Cell, busyness
from .envelope import Envelope
from .errors import ActorSystemStopping, KindUnavailable, MailboxFull, ServedElsewhere
from .outages import Outages
from .placement import Placement
from .ref import NOT_INLINE, ActorRef
from .statistics import ActorStatistics, ActorStatus, KindCounters, KindCounts, SystemSummary
from .tally import KindTally, Leaderboard

logger = logging.getLogger("inbox_actors.runtime")

_Address = tuple[str, str]

BUSIEST_CANDIDATES = 128
"""How many actors the busiest leaderboard keeps: the most summary(busiest=...) can list."""
FAILING_LISTED = 100
"""How many failing actors summary() lists (the most recent errors); failing_count counts them all."""


class ActorSystem:
    def __init__(self, kinds: Iterable[ActorKind] = (), placement: Placement | None = None, *,
                 outages: tuple[type[BaseException], ...] = ()) -> None:
        self._kinds: dict[str, ActorKind] = {}
        # What a dependency every actor shares raises when it is out (the service's database): a crash so caused is
        # no fault of the actor's kind (supervision.py). The runtime is told the types; it imports no dependency.
        self._outages = Outages(outages)
        self._waiting_out: dict[Cell, None] = {}   # cells in an outage's restart backoff, woken when it is over
        # With a placement, an actor of a kind with `workspace_of` activates only while this node holds its workspace.
        self._placement = placement
        self._by_workspace: dict[int, dict[Cell, None]] = {}   # such live cells, so a lost workspace's can stop
        # Counts kept as actors live, so summary() and kind_counters() never visit every cell.
        self._board: Leaderboard[Cell] = Leaderboard(BUSIEST_CANDIDATES)
        self._tallies: dict[str, KindTally] = {}
        self._failed: dict[Cell, None] = {}     # escalated cells still counted as failed (within their cooldown)
        self._troubled: dict[Cell, None] = {}   # cells in memory that restarted after a crash
        for kind in kinds:
            self.register(kind)
        # Live cells, plus failed ones for their cooldown so sends fail fast and operators can see them.
        self._cells: dict[_Address, Cell] = {}
        # Passivated cells still running on_stop; a re-activation of the same key waits for them.
        self._retiring: dict[_Address, Cell] = {}
        # Per kind, the parked (idle, taskless) cells and when each parked, oldest first: the kind's sweeper
        # passivates them as their idle timeout runs out, so idle actors need no timer of their own.
        self._parked: dict[str, dict[Cell, float]] = {}
        self._sweeping: set[str] = set()
        # Each kind's supervisor: when its actors escalated, and until when its circuit is open.
        self._kind_failures: dict[str, deque[float]] = {}
        self._circuit_until: dict[str, float] = {}
        self._nursery: trio.Nursery | None = None
        self._accepting = False
        self._stopping = False
        self._drained = trio.Event()
        self._finished = trio.Event()

    def register(self, kind: ActorKind) -> None:
        if kind.name in self._kinds:
            raise ValueError(f"actor kind {kind.name!r} is already registered")
        self._kinds[kind.name] = kind
        self._tallies[kind.name] = KindTally(kind.name, kind.mailbox_capacity, self._board)

    def ref(self, kind: str, key: str) -> ActorRef:
        """A handle to (kind, key); cheap, and it activates nothing until a message is sent."""
        self.kind(kind)
        return ActorRef(self, kind, key)

    @property
    def accepting(self) -> bool:
        """The system takes new work: it runs and shutdown() has not begun."""
        return self._accepting

    def kind(self, name: str) -> ActorKind:
        try:
            return self._kinds[name]
        except KeyError:
            raise KeyError(f"unknown actor kind {name!r}") from None

    # -- lifecycle ---------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Supervise every actor until shutdown() completes. Start with `await nursery.start(system.run)`."""
        if self._nursery is not None or self._stopping:
            raise RuntimeError("an ActorSystem runs once")
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                self._accepting = True
                task_status.started()
                await self._drained.wait()
                # Whatever outlived the grace period is cancelled; its pending asks fail as stopping.
                nursery.cancel_scope.cancel()
        finally:
            self._accepting = False
            self._stopping = True
            self._finished.set()

    async def shutdown(self, grace: float = 10.0) -> None:
        """Refuse new work; stop the kinds in reverse order of registration (register a kind after the kinds it
        uses), all actors of one kind at once, each draining its mailbox, within `grace` seconds; cancel the
        rest; returns once run() has returned."""
        self._accepting = False
        if self._nursery is None:
            self._stopping = True
            return
        if not self._stopping:
            self._stopping = True
            with trio.move_on_after(grace):
                await self._stop_kind_by_kind()
            self._drained.set()
        await self._finished.wait()

    async def _stop_kind_by_kind(self) -> None:
        # As OTP stops a supervisor's children: dependants before what they depend on (a conversation before
        # the send pacer it asks), and the many children of one kind together, so thousands of live actors
        # drain at once rather than one after another.
        for kind in reversed(list(self._kinds)):
            cells = [cell for cell in self._cells.values() if cell.kind.name == kind]
            for cell in cells:
                cell.request_stop()
            for cell in cells:
                await cell.exited.wait()
        for cell in list(self._retiring.values()):
            await cell.exited.wait()

    # -- Registry, as seen by cells ----------------------------------------------------------------

    def start_soon(self, async_fn: Callable[..., Awaitable[Any]], *args: Any, name: object = None) -> None:
        assert self._nursery is not None
        self._nursery.start_soon(async_fn, *args, name=name)

    def parked(self, cell: Cell) -> None:
        kind = cell.kind
        brief = kind.brief_idle_timeout is not None and cell.leaves_soon
        timeout = kind.brief_idle_timeout if brief else kind.idle_timeout
        if math.isinf(timeout):
            return  # never passivated: nothing to sweep
        # One lane per timeout, so each lane's cells go idle and fall due in the same order.
        lane = f"{kind.name} briefly" if brief else kind.name
        self._parked.setdefault(lane, {})[cell] = trio.current_time()
        if lane not in self._sweeping:
            self._sweeping.add(lane)
            self.start_soon(self._sweep, lane, timeout, name=f"sweep idle {lane} actors")

    def woken(self, cell: Cell) -> None:
        for lane in (cell.kind.name, f"{cell.kind.name} briefly"):
            parked = self._parked.get(lane)
            if parked is not None:
                parked.pop(cell, None)

    async def _sweep(self, lane: str, timeout: float) -> None:
        """Passivate the lane's cells parked for its idle timeout; ends when none is parked."""
        parked = self._parked[lane]
        try:
            while parked:
                cell, since = next(iter(parked.items()))
                due = since + timeout
                if trio.current_time() < due:
                    await trio.sleep_until(due)
                    continue  # the oldest may have woken meanwhile
                del parked[cell]
                if not cell.passivate():
                    parked[cell] = trio.current_time()  # its ActorTasks still run: activity, not idleness
        finally:
            self._sweeping.discard(lane)

    def guarding(self, cell: Cell) -> AbstractContextManager[None]:
        if self._placement is None:
            return nullcontext()
        workspace_of = cell.kind.workspace_of
        return self._placement.guarding(workspace_of(cell.key) if workspace_of is not None else None)

    def forget(self, cell: Cell) -> None:
        address = (cell.kind.name, cell.key)
        if self._cells.get(address) is cell:
            del self._cells[address]
        self._retiring[address] = cell

    def note_restarted(self, cell: Cell) -> None:
        self._troubled[cell] = None

    def outage(self, exc: BaseException) -> bool:
        return self._outages.caused(exc)

    def waits_out(self, cell: Cell) -> None:
        self._waiting_out[cell] = None

    def done_waiting(self, cell: Cell) -> None:
        self._waiting_out.pop(cell, None)

    def outage_over(self) -> None:
        waiting, self._waiting_out = self._waiting_out, {}
        for cell in waiting:
            cell.outage_over()

    def note_failed(self, cell: Cell) -> None:
        kind = cell.kind
        tally = self._tallies[kind.name]
        tally.live -= 1
        tally.failed += 1
        tally.failed_total += 1
        self._failed[cell] = None
        self._troubled.pop(cell, None)
        self._board.discard(cell)
        now = trio.current_time()
        failures = self._kind_failures.setdefault(kind.name, deque(maxlen=kind.circuit_failures))
        failures.append(now)
        recent = [t for t in failures if t > now - kind.restart_window]
        if len(recent) >= kind.circuit_failures and not self._circuit_open(kind.name):
            self._circuit_until[kind.name] = now + kind.failed_cooldown
            logger.error("%s: %d actors failed within %gs; the kind refuses work for %gs (last: %s: %s)",
                         kind.name, len(recent), kind.restart_window, kind.failed_cooldown, cell.key,
                         cell.history.last_error)

    def _circuit_open(self, kind: str) -> bool:
        until = self._circuit_until.get(kind)
        return until is not None and trio.current_time() < until

    def failing_vital_kinds(self) -> list[str]:
        """Vital kinds whose circuit is open: while any is, the service is not ready."""
        return [name for name, kind in self._kinds.items() if kind.vital and self._circuit_open(name)]

    def note_exited(self, cell: Cell) -> None:
        address = (cell.kind.name, cell.key)
        if cell.kind.workspace_of is not None:
            workspace = cell.kind.workspace_of(cell.key)
            cells = self._by_workspace.get(workspace)
            if cells is not None:
                cells.pop(cell, None)
                if not cells:
                    del self._by_workspace[workspace]
        if self._retiring.get(address) is cell:
            del self._retiring[address]
        if cell.status is ActorStatus.FAILED:
            return  # it stays, refusing work, until its cooldown ends
        if self._cells.get(address) is cell:
            del self._cells[address]
        self._tallies[cell.kind.name].live -= 1
        self._troubled.pop(cell, None)
        self._board.discard(cell)

    def _unfail(self, cell: Cell) -> None:
        """A failed cell's cooldown is over: it no longer counts as failed."""
        if cell in self._failed:
            del self._failed[cell]
            self._tallies[cell.kind.name].failed -= 1

    def _forget_cooled_down(self) -> None:
        for cell in [cell for cell in self._failed if self._cooled_down(cell)]:
            self._unfail(cell)

    # -- delivery: the Router that ActorRef uses --------------------------------------------------

    def _resolve(self, kind: ActorKind, key: str) -> tuple[Cell, bool]:
        """The cell serving (kind, key), activating one if none is live; True if this call activated it.

        Synchronous on purpose: the new cell is registered before anyone can checkpoint, so concurrent
        senders queue in the one mailbox instead of activating twins.
        """
        if not self._accepting:
            if self._nursery is None and not self._stopping:
                raise RuntimeError("ActorSystem.run() has not started")
            raise ActorSystemStopping(kind.name, key)
        if self._circuit_open(kind.name):
            remaining = self._circuit_until[kind.name] - trio.current_time()
            raise KindUnavailable(kind.name, key, f"refusing for {remaining:.0f}s more")
        address = (kind.name, key)
        cell = self._live_or_failed(address)
        if cell is not None:
            if cell.status is ActorStatus.FAILED:
                raise cell.refusal() or AssertionError("a failed cell always refuses")
            return cell, False
        assert self._nursery is not None
        tally = self._tallies[kind.name]
        cell = Cell(self, kind, key, predecessor=self._retiring.get(address), tally=tally)
        self._cells[address] = cell
        if kind.workspace_of is not None:
            self._by_workspace.setdefault(kind.workspace_of(key), {})[cell] = None
        tally.live += 1
        tally.activated += 1
        # In a system task rather than the first sender's, so that sender's deadline or cancellation cannot
        # cancel an on_start other queued senders are waiting on.
        cell.activate()
        return cell, True

    async def deliver(self, kind: ActorKind, key: str, envelope: Envelope, *, await_activation: bool) -> None:
        while True:
            if (kind.workspace_of is not None and self._placement is not None and self._accepting
                    and (kind.name, key) not in self._cells):
                await self._place(kind, key)
            cell, activated = self._resolve(kind, key)
            if envelope.expects_reply and cell.waiting_out_outage:
                await cell.try_start_now()
                if cell.waiting_out_outage:
                    raise cell.outage_refusal()
            try:
                await cell.mailbox.send(envelope)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            else:
                if activated and await_activation:
                    await cell.wait_ready()
                return
            # Outside the except block so the refusal's own cause, not the channel error, is what chains.
            refusal = cell.refusal()
            if refusal is not None:
                raise refusal
            # Otherwise it passivated while we waited for space; the next lookup re-activates.

    def ask_inline(self, kind: ActorKind, key: str, message: object) -> object:
        # Whatever would refuse the ask (stopping, an open circuit, a failed or missing cell) is left to the mailbox
        # path, which says why.
        if not self._accepting or self._circuit_open(kind.name):
            return NOT_INLINE
        cell = self._cells.get((kind.name, key))
        return cell.handle_inline(message) if cell is not None else NOT_INLINE

    def deliver_nowait(self, kind: ActorKind, key: str, envelope: Envelope) -> None:
        while True:
            if (kind.workspace_of is not None and self._placement is not None and self._accepting
                    and (kind.name, key) not in self._cells):
                workspace = kind.workspace_of(key)
                if not self._placement.holds(workspace):
                    # Taking a workspace waits on PostgreSQL: only an awaiting send (tell, ask) may do it.
                    raise ServedElsewhere(kind.name, key, workspace, None)
            cell, _ = self._resolve(kind, key)
            try:
                cell.mailbox.send_nowait(envelope)
            except trio.WouldBlock:
                raise MailboxFull(kind.name, key, f"capacity {kind.mailbox_capacity}") from None
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            else:
                return
            refusal = cell.refusal()
            if refusal is not None:
                raise refusal

    async def _place(self, kind: ActorKind, key: str) -> None:
        """Return once this node holds the workspace of (kind, key), taking it if no node does; ServedElsewhere if
        another node holds it. No checkpoint follows the last await here, so the caller activates under the hold."""
        assert kind.workspace_of is not None and self._placement is not None
        workspace = kind.workspace_of(key)
        if self._placement.holds(workspace):
            return
        owner = await self._placement.claim(workspace, by_actor=True)
        if owner is not None:
            raise ServedElsewhere(kind.name, key, workspace, owner)

    def evict_workspace(self, workspace_id: int) -> int:
        """The node no longer holds the workspace: its live actors stop, each finishing the message in hand and those
        queued (their statements refused by the placement's guard once the hold has ended), and sends to them fail
        until the workspace is placed again. How many were asked to stop."""
        cells = list(self._by_workspace.get(workspace_id, ()))
        for cell in cells:
            self.forget(cell)
            cell.request_stop()
        return len(cells)

    def live_in_workspace(self, workspace_id: int) -> int:
        """How many actors of the workspace are live here (stopping ones included)."""
        return len(self._by_workspace.get(workspace_id, ()))

    def busy_in_workspace(self, workspace_id: int) -> list[str]:
        """The live actors of the workspace with a message queued or in hand, by name. (Their tasks are not counted:
        a task's work is one a restart takes up again, such as a webhook endpoint's outbox.)"""
        return [cell.name for cell in self._by_workspace.get(workspace_id, ()) if not cell.parked]

    def _live_or_failed(self, address: _Address) -> Cell | None:
        """The registered cell, dropping a failed one whose cooldown is over (the next send starts afresh)."""
        cell = self._cells.get(address)
        if cell is not None and self._cooled_down(cell):
            del self._cells[address]
            self._unfail(cell)
            return None
        return cell

    # -- statistics ----------------------------------------------------------------------------------

    def statistics(self, kind: str, key: str) -> ActorStatistics | None:
        """The actor's statistics; None when it is neither live nor failed (within its cooldown). Reading
        changes nothing."""
        address = (kind, key)
        cell = self._cells.get(address)
        if cell is None or self._cooled_down(cell):
            cell = self._retiring.get(address)
        return cell.statistics() if cell is not None else None

    def summary(self, busiest: int = 10) -> SystemSummary:
        """Counts per kind, the `busiest` (at most BUSIEST_CANDIDATES) live actors and the failing ones, in time
        that does not grow with the number of live actors: the counts are kept as actors live and the busiest
        come from a bounded leaderboard (see tally.py). Reading changes nothing that senders see (a failed actor
        whose cooldown is over is left out, and forgotten only by the next send to it)."""
        self._forget_cooled_down()
        now = trio.current_time()
        kinds = {}
        for name, kind in self._kinds.items():
            tally = self._tallies[name]
            kinds[name] = KindCounts(
                live=tally.live, failed=tally.failed, mailbox_used=tally.mailbox_used,
                messages_handled=tally.messages_handled, restarts=tally.restarted,
                recent_failures=sum(1 for t in self._kind_failures.get(name, ()) if t > now - kind.restart_window),
                circuit_open=self._circuit_open(name), mailbox_max=tally.mailbox_max, activated=tally.activated,
                passivated=tally.passivated, failed_total=tally.failed_total)
        top = self._board.top(max(0, min(busiest, BUSIEST_CANDIDATES)), busyness,
                              lambda cell: cell.status is not ActorStatus.FAILED)
        troubled = [*self._failed, *self._troubled]
        failing = heapq.nlargest(FAILING_LISTED, troubled, key=_last_error_at)
        return SystemSummary(accepting=self._accepting, kinds=kinds, busiest=[cell.statistics() for cell in top],
                             failing=[cell.statistics() for cell in failing], failing_count=len(troubled))

    def kind_counters(self) -> dict[str, KindCounters]:
        """Per registered kind, its counters now: actors live and failed, activations, passivations, restarts
        and escalations since the system started, messages handled, and its mailboxes' depth (sum and max).

        Cheap enough to call on every metrics scrape: kept as actors live, it visits no actor (only the failed
        ones, to drop those whose cooldown is over). Reading changes nothing that senders see.
        """
        self._forget_cooled_down()
        return {name: tally.snapshot() for name, tally in self._tallies.items()}

    @staticmethod
    def _cooled_down(cell: Cell) -> bool:
        return (cell.status is ActorStatus.FAILED and cell.failed_until is not None
                and trio.current_time() >= cell.failed_until)


def _last_error_at(cell: Cell) -> float:
    history = cell.history
    return history.last_error_at if history.last_error_at is not None else float("-inf")
