"""One cell's supervision, one-for-one: restart after a crash with backoff and the restart intensity, escalate
to "failed", and fail what waits in the mailbox when the cell cannot serve it. A mixin of Cell (cell.py), which
holds the state these methods use; split from it by concern (serving vs recovering).

A crash an outage caused (the system's `outages`: the database gone) is no fault of the actor: it spends no restart
intensity, so it never escalates nor opens the kind's circuit, and the actor is tried again with the kind's backoff
capped at `outage_backoff_max`, for as long as the outage lasts. A tell sent meanwhile waits for the instance that
starts once the dependency is back; an ask has the actor tried at once and is refused (`WaitingOutOutage`, the
outage chained) if that start fails too: someone waits on an ask, and a return nobody can promise must not hold it
for its whole deadline.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import trio

from .actor import Actor, ActorKind
from .crash_history import CrashHistory, describe
from .envelope import Envelope
from .errors import ActivationFailed, ActorCrashed, ActorError, ActorFailed, ActorSystemStopping, WaitingOutOutage
from .lazy_event import LazyEvent
from .mailbox import Mailbox
from .registry import Registry
from .statistics import ActorStatus
from .tally import KindTally
from .tasks import ActorTasks

logger = logging.getLogger("inbox_actors.runtime")


class CellSupervision:
    """Cell's recovery methods; the attributes are Cell's (its slots)."""

    __slots__ = ()

    kind: ActorKind
    key: str
    status: ActorStatus
    mailbox: Mailbox
    failed_until: float | None
    messages_dropped: int
    _registry: Registry
    _tally: KindTally
    _actor: Actor | None
    _tasks: ActorTasks | None
    _in_flight: list[Envelope] | None
    _activation_cause: Exception | None
    _stop_requested: bool
    _backoff_over: LazyEvent
    _start_tried: LazyEvent | None
    _aborted: bool

    history: CrashHistory
    name: str
    _start_instance: Callable[[], Awaitable[None]]

    async def _recover(self, exc: Exception) -> bool:
        """Restart after a crash; False when the cell must end instead (escalated or shutting down)."""
        restarting_failed = False
        while True:
            outage = self._registry.outage(exc)
            # What was queued when a message or task crashed the actor is failed with it; a restart whose
            # on_start fails fails nothing more: what waits is waiting for a healthy instance.
            escalated = self._note_crash(exc, fail_queued=not restarting_failed, outage=outage)
            self._start_was_tried()     # an ask waiting for this start (try_start_now) reads the outcome
            if escalated:
                self._escalate()
                return False
            if self._stop_requested:
                # The mailbox is closed and was just drained: reloading state would only serve on_stop.
                self.status = ActorStatus.STOPPING
                return False
            self.status = ActorStatus.RESTARTING
            # Backoff: a cause that outlives an instant (a database blip) must not spend the whole restart
            # intensity in milliseconds. Messages wait in the mailbox meanwhile, under their asks' deadlines. An
            # outage's backoff also ends as soon as another actor that waited it out has started again: the
            # dependency is back, and every actor waiting for it tries at once rather than at its own next try.
            if outage:
                self._registry.waits_out(self)
            try:
                with trio.move_on_after(self.history.restart_delay(outage=outage)):
                    await self._backoff_over.wait()
            finally:
                if outage:
                    self._registry.done_waiting(self)
            if not self._stop_requested and self._backoff_over.is_set():
                self._backoff_over = LazyEvent()    # woken for the outage's end: the next backoff waits afresh
            if self._stop_requested:
                self.status = ActorStatus.STOPPING
                self._drain(self._stopped_while_restarting)
                self._start_was_tried()
                return False
            self.history.restarts += 1
            self._tally.restarted += 1
            self._registry.note_restarted(self)
            try:
                await self._start_instance()
            except trio.Cancelled:
                raise
            except Exception as restart_exc:
                exc = restart_exc
                restarting_failed = True
                continue
            self.status = ActorStatus.RUNNING
            self._start_was_tried()
            if self.history.outage_tries:
                self._registry.outage_over()        # this actor's dependency answers again: wake the others
            self.history.running_again(self.name)
            return True

    def _note_crash(self, exc: Exception, *, fail_queued: bool, outage: bool = False) -> bool:
        """Record a crash and (`fail_queued`) fail what was queued behind it; True if the restart intensity is
        exceeded (never by a crash of an outage)."""
        self._actor = None
        if self._tasks is not None:
            self._tasks.cancel_all()
        if outage:
            self.history.record_outage(exc, self.name)
        elif self.history.record(exc, self.name):
            return True  # _escalate refuses the queue as failed: nothing will serve it soon
        if fail_queued:
            # Only what was queued at the crash: senders still waiting for room go to the restarted actor.
            self._drain(lambda: self._crashed(exc), limit=len(self.mailbox))
        return False

    def _escalate(self) -> None:
        history = self.history
        self.status = ActorStatus.FAILED
        self.failed_until = trio.current_time() + self.kind.failed_cooldown
        self._registry.note_failed(self)
        logger.error("%s failed: %d crashes within %gs; refusing work for %gs. Last error: %s", self.name,
                     history.recent, self.kind.restart_window, self.kind.failed_cooldown, history.last_error)

        def failed() -> ActorError:
            error = ActorFailed(self.kind.name, self.key, history.last_error)
            error.__cause__ = history.last_crash
            return error

        self._drain(failed)
        history.last_crash = None
        # Senders that find the mailbox broken ask refusal(), which now says ActorFailed.
        self.mailbox.break_()

    def _fail_activation(self, exc: Exception) -> None:
        self._activation_cause = exc
        self.history.note_activation_failed(exc)
        self._actor = None
        if self._tasks is not None:
            self._tasks.cancel_all()
        self._registry.forget(self)
        last_error = self.history.last_error

        def activation_failed() -> ActorError:
            error = ActivationFailed(self.kind.name, self.key, last_error)
            error.__cause__ = exc
            return error

        self._drain(activation_failed)
        self.mailbox.break_()
        if self._registry.outage(exc):
            # Every activation meets it while the outage lasts: one line each, without a traceback that says nothing.
            logger.warning("%s could not activate during an outage: %s", self.name, last_error)
        else:
            logger.error("%s failed to activate: %s", self.name, last_error, exc_info=exc)

    def _abort(self) -> None:
        """Cancelled (shutdown grace expired): fail what is in flight and queued. Must not checkpoint."""
        self._aborted = True
        if self._tasks is not None:
            self._tasks.cancel_all()
        for envelope in self._in_flight or ():
            envelope.fail(ActorSystemStopping(self.kind.name, self.key, "cancelled while handling"))
            self.messages_dropped += 1
        self._in_flight = None
        self._drain(lambda: ActorSystemStopping(self.kind.name, self.key, "cancelled before handling"))
        self.mailbox.break_()

    def _drain(self, make_error: Callable[[], ActorError], *, limit: int | None = None) -> None:
        taken = 0
        while limit is None or taken < limit:
            envelope = self.mailbox.take()
            if envelope is None:
                return
            taken += 1
            self.messages_dropped += 1
            envelope.fail(make_error())

    @property
    def waiting_out_outage(self) -> bool:
        """Restarting after a crash an outage caused, and not started again yet."""
        return self.status is ActorStatus.RESTARTING and self.history.outage_tries > 0

    async def try_start_now(self) -> None:
        """For an ask that finds the cell waiting out an outage: end the backoff, and return once that start has
        been tried (whether it started: `waiting_out_outage`)."""
        if self._start_tried is None:
            self._start_tried = LazyEvent()
        tried = self._start_tried
        self._backoff_over.set()
        await tried.wait()

    def outage_refusal(self) -> WaitingOutOutage:
        """An ask's refusal while the cell waits out an outage, chained to the crash so callers see the outage."""
        error = WaitingOutOutage(self.kind.name, self.key, self.history.last_error)
        error.__cause__ = self.history.last_crash
        return error

    def _start_was_tried(self) -> None:
        tried, self._start_tried = self._start_tried, None
        if tried is not None:
            tried.set()

    def outage_over(self) -> None:
        """The outage this cell's restart backoff waits out is over (another actor started again): try now."""
        self._backoff_over.set()

    def _stopped_while_restarting(self) -> ActorSystemStopping:
        # Chained to the crash the actor was recovering from, so a caller can tell an outage's refusal.
        error = ActorSystemStopping(self.kind.name, self.key, "stopped while restarting")
        error.__cause__ = self.history.last_crash
        return error

    def _crashed(self, exc: Exception) -> ActorCrashed:
        error = ActorCrashed(self.kind.name, self.key, describe(exc))
        error.__cause__ = exc
        return error
