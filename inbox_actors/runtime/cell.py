"""One live actor: its bounded mailbox, its message loop, and the supervision of that one actor.

A cell outlives the Actor instances it runs: a crash replaces the instance (fresh from the factory, state
reloaded by on_start) but keeps the mailbox, so refs and queued senders never notice the restart.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Protocol

import trio

from .actor import Actor, ActorKind
from .batching import claim_batch, take
from .crash_history import CrashHistory, describe
from .envelope import Envelope
from .errors import ActivationFailed, ActorCrashed, ActorError, ActorFailed, ActorSystemStopping
from .lazy_event import LazyEvent
from .ref import ActorRef
from .statistics import ActorStatistics, ActorStatus
from .tasks import ActorTasks

logger = logging.getLogger("inbox_actors.runtime")


class Registry(Protocol):
    """What a cell tells its supervisor (the ActorSystem) about its life."""

    def forget(self, cell: Cell) -> None:
        """Stop routing new sends to this cell; it is still finishing (on_stop) until note_exited."""

    def note_exited(self, cell: Cell) -> None: ...

    def note_failed(self, cell: Cell) -> None:
        """The cell escalated (restart intensity exceeded): the kind's supervisor decides what follows."""

    def ref(self, kind: str, key: str) -> ActorRef:
        """A handle to any actor of the system (what an actor is given to reach the others)."""


class Cell:
    # Slots, not a __dict__: with thirty attributes the dict alone cost 1.4 KB per live actor.
    __slots__ = (
        "kind", "key", "_registry", "_predecessor", "mailbox", "_inbox", "status", "_actor", "_tasks",
        "_loop_scope", "_task_crash", "_in_flight", "_activated", "_activation_cause", "_stop_requested",
        "_stop_signal", "_aborted", "ready", "exited", "failed_until", "history", "messages_handled",
        "messages_dropped", "last_activity_at", "started_at", "started_at_wall",
    )

    def __init__(self, registry: Registry, kind: ActorKind, key: str, predecessor: Cell | None = None) -> None:
        self.kind = kind
        self.key = key
        self._registry = registry
        # A passivated cell of the same key may still be in on_stop; the fresh one must not load state
        # until that has finished, or the two instances would both believe they own the key.
        self._predecessor = predecessor
        self.mailbox, self._inbox = trio.open_memory_channel[Envelope](kind.mailbox_capacity)
        self.status = ActorStatus.STARTING
        self._actor: Actor | None = None
        self._tasks: ActorTasks | None = None
        # Cancelled when one of the instance's tasks crashes, to stop its message loop; the crash is kept here.
        self._loop_scope: trio.CancelScope | None = None
        self._task_crash: Exception | None = None
        self._in_flight: list[Envelope] = []
        self._activated = False
        self._activation_cause: Exception | None = None
        self._stop_requested = False
        self._stop_signal = LazyEvent()  # wakes a restart backoff when a stop is requested
        self._aborted = False
        self.ready = LazyEvent()
        self.exited = LazyEvent()
        self.failed_until: float | None = None
        self.history = CrashHistory(kind)
        self.messages_handled = 0
        self.messages_dropped = 0
        self.last_activity_at: float | None = None
        self.started_at = trio.current_time()
        self.started_at_wall = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    # -- what senders see ---------------------------------------------------------------------------

    def refusal(self) -> ActorError | None:
        """Why this cell refuses a send, or None if it merely passivated and a fresh lookup re-activates."""
        if self.status is ActorStatus.FAILED:
            return ActorFailed(self.kind.name, self.key, self.history.last_error)
        if self._activation_cause is not None:
            error = ActivationFailed(self.kind.name, self.key, describe(self._activation_cause))
            error.__cause__ = self._activation_cause
            return error
        if self._stop_requested or self._aborted:
            return ActorSystemStopping(self.kind.name, self.key)
        return None

    async def wait_ready(self) -> None:
        """Wait for the first on_start; raise why it never became ready."""
        await self.ready.wait()
        if not self._activated:
            raise self.refusal() or ActorSystemStopping(self.kind.name, self.key)

    def request_stop(self) -> None:
        """Close the mailbox to senders; the loop handles what is queued, calls on_stop and exits."""
        self._stop_requested = True
        self._stop_signal.set()
        self.mailbox.close()

    def statistics(self) -> ActorStatistics:
        return ActorStatistics(
            kind=self.kind.name,
            key=self.key,
            status=self.status,
            mailbox_used=self.mailbox.statistics().current_buffer_used,
            mailbox_capacity=self.kind.mailbox_capacity,
            messages_handled=self.messages_handled,
            restarts=self.history.restarts,
            last_error=self.history.last_error,
            last_error_at=self.history.last_error_at,
            last_activity_at=self.last_activity_at,
            started_at=self.started_at,
            started_at_wall=self.started_at_wall,
            messages_dropped=self.messages_dropped,
            tasks_running=self._tasks.running if self._tasks is not None else 0,
        )

    # -- the task ----------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            if self._predecessor is not None:
                await self._predecessor.exited.wait()
                self._predecessor = None
            # The instances' tasks (ActorTasks) run here, beside the message loop, for as long as the cell.
            activation_failure: Exception | None = None
            async with trio.open_nursery() as tasks_nursery:
                try:
                    await self._start_instance(tasks_nursery)
                except trio.Cancelled:
                    raise
                except Exception as exc:
                    activation_failure = exc
                    assert self._tasks is not None
                    self._tasks.cancel_all()
                else:
                    self.status = ActorStatus.RUNNING
                    self._activated = True
                    self.ready.set()
                    task_status.started()
                    # Trio's _TaskStatus holds nursery.start()'s temporary nursery, which holds the finished
                    # activating task: released, rather than kept by this frame for the actor's whole life.
                    task_status = trio.TASK_STATUS_IGNORED
                    await self._serve(tasks_nursery)
            # Raised outside the nursery, so the activator sees ActivationFailed itself, not a group holding it.
            if activation_failure is not None:
                raise self._fail_activation(activation_failure) from activation_failure
        except* trio.Cancelled:
            # except*: a cancellation leaving the tasks nursery arrives wrapped in a group.
            self._abort()
            raise
        finally:
            self.ready.set()
            self.exited.set()
            self._registry.note_exited(self)

    async def _start_instance(self, tasks_nursery: trio.Nursery) -> None:
        """A fresh Actor from the factory, with a fresh task set, loaded by on_start."""
        self._tasks = ActorTasks(tasks_nursery, self._task_crashed, f"{self.kind.name}/{self.key}")
        self._actor = self.kind.factory(self.key)
        self._actor.tasks = self._tasks
        self._actor.actors = self._registry
        self._actor.self_ref = self._registry.ref(self.kind.name, self.key)
        await self._actor.on_start()

    def _task_crashed(self, exc: Exception) -> None:
        # Only the first failure counts; the loop's cancellation makes it a crash of the whole instance.
        if self._task_crash is None:
            self._task_crash = exc
            if self._loop_scope is not None:
                self._loop_scope.cancel()

    async def _serve(self, tasks_nursery: trio.Nursery) -> None:
        """The message loop, restarted after a crash of one of the instance's tasks."""
        while True:
            with trio.CancelScope() as self._loop_scope:
                if self._task_crash is None:  # a task may have failed before the loop began
                    await self._handle_messages(tasks_nursery)
                    return
            crash, self._task_crash = self._task_crash, None
            assert crash is not None, "only a task crash cancels the message loop"
            batch, self._in_flight = self._in_flight, []
            self.messages_dropped += len(batch)
            for failed in batch:
                failed.fail(self._crashed(crash))
            if not await self._recover(crash, tasks_nursery):
                return

    async def _handle_messages(self, tasks_nursery: trio.Nursery) -> None:
        while True:
            # Nothing of the last message (envelope, reply event, message, reply) is kept while idle.
            envelope = batch = replies = done = reply = None
            envelope = await self._next_envelope()
            if envelope is None:
                await self._stop_cleanly()
                return
            # In flight from the first claim on: a cancellation while lingering must fail them, not lose them.
            self._in_flight = batch = []
            if self.kind.batch_limit == 1:
                self.messages_dropped += 0 if take(envelope, batch) else 1  # without a coroutine per message
            else:
                self.messages_dropped += await claim_batch(self._inbox, self.kind, envelope, batch)
            if not batch:
                continue
            assert self._actor is not None
            try:
                if len(batch) == 1:
                    replies = [await self._actor.receive(batch[0].message)]
                else:
                    replies = await self._actor.receive_batch([e.message for e in batch])
                    if len(replies) != len(batch):
                        raise RuntimeError(f"receive_batch answered {len(replies)} of {len(batch)} messages")
            except trio.Cancelled:
                raise
            except Exception as exc:
                self._in_flight = []
                self.messages_dropped += len(batch)
                for failed in batch:
                    failed.fail(self._crashed(exc))
                if not await self._recover(exc, tasks_nursery):
                    return
                continue
            self._in_flight = []
            self.messages_handled += len(batch)
            self.last_activity_at = trio.current_time()
            for done, reply in zip(batch, replies, strict=True):
                done.resolve(reply)

    async def _next_envelope(self) -> Envelope | None:
        """The next message, or None when the actor should stop (mailbox closed, or idle: passivated)."""
        while True:
            with trio.move_on_after(self.kind.idle_timeout):
                try:
                    return await self._inbox.receive()
                except trio.EndOfChannel:
                    return None
            # Long work under way (the actor's tasks) is activity, though no message came.
            if self._tasks is None or not self._tasks.running:
                break
        # A sender may have queued right as the idle timer fired; serve it rather than strand it.
        try:
            return self._inbox.receive_nowait()
        except trio.EndOfChannel:
            return None
        except trio.WouldBlock:
            pass
        # No checkpoint between the empty check above and leaving the registry: from here on no sender
        # can reach this mailbox, and one that already holds it gets ClosedResourceError and looks again.
        self._registry.forget(self)
        self.mailbox.close()
        return None

    async def _stop_cleanly(self) -> None:
        self.status = ActorStatus.STOPPING
        assert self._actor is not None and self._tasks is not None
        await self._tasks.cancel_and_wait()
        try:
            await self._actor.on_stop()
        except trio.Cancelled:
            raise
        except Exception:
            # The actor is leaving either way; a failing cleanup must not look like a crash to restart.
            logger.warning("%s/%s: on_stop raised", self.kind.name, self.key, exc_info=True)

    # -- supervision -------------------------------------------------------------------------------

    async def _recover(self, exc: Exception, tasks_nursery: trio.Nursery) -> bool:
        """Restart after a crash; False when the cell must end instead (escalated or shutting down)."""
        restarting_failed = False
        while True:
            # What was queued when a message or task crashed the actor is failed with it; a restart whose
            # on_start fails fails nothing more: what waits is waiting for a healthy instance.
            if self._note_crash(exc, fail_queued=not restarting_failed):
                self._escalate()
                return False
            if self._stop_requested:
                # The mailbox is closed and was just drained: reloading state would only serve on_stop.
                self.status = ActorStatus.STOPPING
                return False
            self.status = ActorStatus.RESTARTING
            # Backoff: a cause that outlives an instant (a database blip) must not spend the whole restart
            # intensity in milliseconds. Messages wait in the mailbox meanwhile, under their asks' deadlines.
            with trio.move_on_after(self.history.restart_delay()):
                await self._stop_signal.wait()
            if self._stop_requested:
                self.status = ActorStatus.STOPPING
                self._drain(lambda: ActorSystemStopping(self.kind.name, self.key, "stopped while restarting"))
                return False
            self.history.restarts += 1
            try:
                await self._start_instance(tasks_nursery)
            except trio.Cancelled:
                raise
            except Exception as restart_exc:
                exc = restart_exc
                restarting_failed = True
                continue
            self.status = ActorStatus.RUNNING
            self.history.last_crash = None
            return True

    def _note_crash(self, exc: Exception, *, fail_queued: bool) -> bool:
        """Record a crash and (`fail_queued`) fail what was queued behind it; True if the restart intensity is
        exceeded."""
        self._actor = None
        if self._tasks is not None:
            self._tasks.cancel_all()
        if self.history.record(exc, f"{self.kind.name}/{self.key}"):
            return True  # _escalate refuses the queue as failed: nothing will serve it soon
        if fail_queued:
            # Only what was queued at the crash: senders still waiting for space go to the restarted actor.
            queued = self.mailbox.statistics().current_buffer_used
            self._drain(lambda: self._crashed(exc), limit=queued)
        return False

    def _escalate(self) -> None:
        self.status = ActorStatus.FAILED
        self.failed_until = trio.current_time() + self.kind.failed_cooldown
        self._registry.note_failed(self)
        logger.error(
            "%s/%s failed: %d crashes within %gs; refusing work for %gs. Last error: %s",
            self.kind.name,
            self.key,
            self.history.recent,
            self.kind.restart_window,
            self.kind.failed_cooldown,
            self.history.last_error,
        )

        def failed() -> ActorError:
            error = ActorFailed(self.kind.name, self.key, self.history.last_error)
            error.__cause__ = self.history.last_crash
            return error

        self._drain(failed)
        self.history.last_crash = None
        # Senders that find the mailbox broken ask refusal(), which now says ActorFailed.
        self._inbox.close()

    def _fail_activation(self, exc: Exception) -> ActivationFailed:
        self._activation_cause = exc
        self.history.note_activation_failed(exc)
        self._actor = None
        if self._tasks is not None:
            self._tasks.cancel_all()
        self._registry.forget(self)

        def activation_failed() -> ActorError:
            error = ActivationFailed(self.kind.name, self.key, self.history.last_error)
            error.__cause__ = exc
            return error

        self._drain(activation_failed)
        self._inbox.close()
        self.mailbox.close()
        logger.error("%s/%s failed to activate: %s", self.kind.name, self.key, self.history.last_error,
                     exc_info=exc)
        return ActivationFailed(self.kind.name, self.key, self.history.last_error)

    def _abort(self) -> None:
        """Cancelled (shutdown grace expired): fail what is in flight and queued. Must not checkpoint."""
        self._aborted = True
        for envelope in self._in_flight:
            envelope.fail(ActorSystemStopping(self.kind.name, self.key, "cancelled while handling"))
            self.messages_dropped += 1
        self._in_flight = []
        self._drain(lambda: ActorSystemStopping(self.kind.name, self.key, "cancelled before handling"))
        self._inbox.close()

    def _drain(self, make_error: Callable[[], ActorError], *, limit: int | None = None) -> None:
        taken = 0
        while limit is None or taken < limit:
            try:
                envelope = self._inbox.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                return
            taken += 1
            self.messages_dropped += 1
            envelope.fail(make_error())

    def _crashed(self, exc: Exception) -> ActorCrashed:
        error = ActorCrashed(self.kind.name, self.key, describe(exc))
        error.__cause__ = exc
        return error
