"""One live actor: its bounded mailbox, its message loop, and the supervision of that one actor.

A cell outlives the Actor instances it runs: a crash replaces the instance (fresh from the factory, state
reloaded by on_start) but keeps the mailbox, so refs and queued senders never notice the restart.

A cell has a trio task only while it has something to do. When its mailbox is empty the loop's task ends and
the cell *parks*: it is still live (its instance and state stay in memory, its ActorTasks run on), but it costs
no task, coroutine frames or cancel scopes. The next envelope to land wakes it with a fresh task. The system
passivates a cell that stayed parked for the kind's idle timeout (`passivate`).

The cell keeps its kind's `KindTally` current (messages handled, restarts, passivations; its mailbox reports
depths) and offers itself to the busiest-actors leaderboard whenever a message is queued or handled, so
operators' summaries never visit every cell. Recovery after crashes lives in supervision.py (CellSupervision).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone

import trio

from .actor import Actor, ActorKind
from .batching import claim_batch, take
from .crash_history import CrashHistory, describe
from .envelope import Envelope
from .errors import ActivationFailed, ActorError, ActorFailed, ActorSystemStopping
from .lazy_event import LazyEvent
from .mailbox import Mailbox
from .ref import NOT_INLINE
from .registry import Registry
from .statistics import ActorStatistics, ActorStatus
from .supervision import CellSupervision
from .tally import KindTally
from .tasks import ActorTasks

logger = logging.getLogger("inbox_actors.runtime")


def busyness(cell: Cell) -> int:
    """The busiest actors' order: the fullest mailbox first, then the most messages handled."""
    return (len(cell.mailbox) << 40) + cell.messages_handled


class Cell(CellSupervision):
    # Slots, not a __dict__: with thirty attributes the dict alone cost 1.4 KB per live actor.
    __slots__ = (
        "kind", "key", "_registry", "_predecessor", "mailbox", "status", "_actor", "_tasks", "_parked",
        "_loop_scope", "_task_crash", "_in_flight", "_activated", "_activation_cause", "_stop_requested",
        "_backoff_over", "_start_tried", "_aborted", "ready", "exited", "failed_until", "_history", "messages_handled",
        "messages_dropped", "last_activity_at", "started_at", "_tally",
    )

    def __init__(self, registry: Registry, kind: ActorKind, key: str, predecessor: Cell | None = None,
                 tally: KindTally | None = None) -> None:
        self.kind = kind
        self._tally = tally if tally is not None else KindTally(kind.name, kind.mailbox_capacity)
        self.key = key
        self._registry = registry
        # A passivated cell of the same key may still be in on_stop; the fresh one must not load state
        # until that has finished, or the two instances would both believe they own the key.
        self._predecessor = predecessor
        self.mailbox = Mailbox(kind.mailbox_capacity, self._wake, self._tally)
        self.status = ActorStatus.STARTING
        self._actor: Actor | None = None
        self._tasks: ActorTasks | None = None
        self._parked = False
        # Cancelled when one of the instance's tasks crashes, to stop its message loop; the crash is kept here.
        self._loop_scope: trio.CancelScope | None = None
        self._task_crash: Exception | None = None
        self._in_flight: list[Envelope] | None = None
        self._activated = False
        self._activation_cause: Exception | None = None
        self._stop_requested = False
        # Wakes a restart backoff: a stop requested, or the outage it waits out over (supervision.py).
        self._backoff_over = LazyEvent()
        # Set when a restart's start has been tried; made only when an ask waits for one (supervision.py).
        self._start_tried: LazyEvent | None = None
        self._aborted = False
        self.ready = LazyEvent()
        self.exited = LazyEvent()
        self.failed_until: float | None = None
        self._history: CrashHistory | None = None  # made at the first crash: most actors never crash
        self.messages_handled = 0
        self.messages_dropped = 0
        self.last_activity_at: float | None = None
        self.started_at = trio.current_time()

    @property
    def history(self) -> CrashHistory:
        if self._history is None:
            self._history = CrashHistory(self.kind)
        return self._history

    @property
    def name(self) -> str:
        return f"{self.kind.name}/{self.key}"

    # -- what senders and the system see -----------------------------------------------------------

    def refusal(self) -> ActorError | None:
        """Why this cell refuses a send, or None if it merely passivated and a fresh lookup re-activates."""
        last_error = self._history.last_error if self._history is not None else None
        if self.status is ActorStatus.FAILED:
            return ActorFailed(self.kind.name, self.key, last_error)
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
        """Close the mailbox to senders; the actor handles what is queued, calls on_stop and exits."""
        self._stop_requested = True
        self._backoff_over.set()
        self.mailbox.close()
        if self._parked:
            self._unpark()
            self._registry.start_soon(self._run, self._retire, name=f"stop {self.name}")

    def passivate(self) -> bool:
        """Leave memory: called by the system for a cell parked for the kind's idle timeout. False (and nothing
        changes) while the instance's ActorTasks still run: long work under way is activity."""
        assert self._parked, "only a parked cell is idle"
        if self._tasks is not None and self._tasks.running:
            return False
        self._parked = False
        # No checkpoint between the park (mailbox empty) and leaving the registry: from here on no sender can
        # reach this mailbox, and one that already holds the cell gets ClosedResourceError and looks again.
        self._registry.forget(self)
        self.mailbox.close()
        self._tally.passivated += 1
        self._registry.start_soon(self._run, self._retire, name=f"passivate {self.name}")
        return True

    def statistics(self) -> ActorStatistics:
        history = self._history
        started_wall = datetime.now(timezone.utc) - timedelta(seconds=trio.current_time() - self.started_at)
        return ActorStatistics(
            kind=self.kind.name,
            key=self.key,
            status=self.status,
            mailbox_used=len(self.mailbox),
            mailbox_capacity=self.kind.mailbox_capacity,
            messages_handled=self.messages_handled,
            restarts=history.restarts if history is not None else 0,
            last_error=history.last_error if history is not None else None,
            last_error_at=history.last_error_at if history is not None else None,
            last_activity_at=self.last_activity_at,
            started_at=self.started_at,
            started_at_wall=started_wall.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            messages_dropped=self.messages_dropped,
            tasks_running=self._tasks.running if self._tasks is not None else 0,
            oldest_message_at=self.mailbox.oldest_sent_at(),
        )

    # -- the cell's tasks: activation, serving after a wake, retirement -----------------------------

    def activate(self) -> None:
        """Start the first instance (on_start), then serve what was queued meanwhile."""
        self._registry.start_soon(self._run, self._activation, name=f"actor {self.name}")

    async def _run(self, job: Callable[[], Awaitable[bool]]) -> None:
        """Every task of the cell runs through here; `job` answers True when the cell has ended."""
        try:
            # Tasks the job starts (the instance's ActorTasks) inherit the guard with the task's context.
            with self._registry.guarding(self):
                ended = await job()
        except trio.Cancelled:
            self._abort()
            self._finish()
            raise
        if ended:
            self._finish()

    async def _activation(self) -> bool:
        if self._predecessor is not None:
            await self._predecessor.exited.wait()
            self._predecessor = None
        try:
            await self._start_instance()
        except trio.Cancelled:
            raise
        except Exception as exc:
            self._fail_activation(exc)
            return True
        self.status = ActorStatus.RUNNING
        self._activated = True
        self.ready.set()
        return await self._serve()

    async def _retire(self) -> bool:
        await self._stop_cleanly()
        return True

    def _finish(self) -> None:
        if self.exited.is_set():
            return  # the system counts each cell's exit once
        self.ready.set()
        self.exited.set()
        self._registry.note_exited(self)

    def _wake(self) -> None:
        """An envelope landed (the mailbox calls this): a parked cell gets a task to serve it."""
        self._tally.board.offer(self, busyness(self))
        if self._parked:
            self._unpark()
            self._registry.start_soon(self._run, self._serve, name=f"actor {self.name}")

    @property
    def parked(self) -> bool:
        """Nothing queued, nothing in hand (the instance's tasks may still run)."""
        return self._parked

    @property
    def leaves_soon(self) -> bool:
        """The actor asked to leave memory soon once idle (Actor.leaves_soon)."""
        return self._actor is not None and self._actor.leaves_soon

    def _park(self) -> None:
        self._parked = True
        self._registry.parked(self)

    def _unpark(self) -> None:
        self._parked = False
        self._registry.woken(self)

    async def _start_instance(self) -> None:
        """A fresh Actor from the factory, with a fresh task set, loaded by on_start."""
        self._tasks = ActorTasks(self._registry, self._task_crashed, self.name)
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
            else:
                self._wake()  # a parked instance crashed too: a task to restart it

    # -- the message loop --------------------------------------------------------------------------

    def handle_inline(self, message: object) -> object:
        """An ask of a kind with inline_asks, handled in the asker's task while the cell is parked (nothing queued,
        nothing in hand): the reply, or NOT_INLINE if the cell is not parked. A handler that raises, or awaits
        after all, crashes the instance as in the loop: the ask fails with ActorCrashed and a task restarts it."""
        if not self._parked or self.status is not ActorStatus.RUNNING or self._task_crash is not None:
            return NOT_INLINE
        assert self._actor is not None
        handling = self._actor.receive(message)
        try:
            handling.send(None)
        except StopIteration as finished:
            reply = finished.value
        except Exception as exc:
            raise self._crash_inline(exc) from exc
        else:
            handling.close()
            raise self._crash_inline(RuntimeError(f"{self.name}: receive awaited, but its kind declares "
                                                  "inline_asks"))
        self.messages_handled += 1
        self._tally.messages_handled += 1
        self._tally.board.offer(self, busyness(self))
        self.last_activity_at = trio.current_time()
        self._registry.woken(self)   # its idle clock starts again
        self._registry.parked(self)
        return reply

    def _crash_inline(self, exc: Exception) -> ActorError:
        self.messages_dropped += 1
        self._task_crashed(exc)   # the parked cell gets a task, which restarts the instance
        return self._crashed(exc)

    async def _serve(self) -> bool:
        """Handle what is queued, restarting after crashes; False once the mailbox is empty (the cell parked),
        True when the cell ended."""
        while True:
            if self._task_crash is None:
                ended: bool | None = None
                with trio.CancelScope() as self._loop_scope:
                    ended = await self._handle_messages()
                self._loop_scope = None
                # No checkpoint between the empty mailbox and the park, so no envelope can slip in unseen.
                if ended is not None and (ended or self._task_crash is None):
                    if not ended:
                        self._park()
                    return ended
            crash, self._task_crash = self._task_crash, None
            assert crash is not None, "only a task crash cancels the message loop"
            batch, self._in_flight = self._in_flight or [], None
            self.messages_dropped += len(batch)
            for failed in batch:
                failed.fail(self._crashed(crash))
            if not await self._recover(crash):
                return True

    async def _handle_messages(self) -> bool:
        """Handle envelopes until none is queued (False) or the actor ended (True)."""
        lingered = False
        while True:
            envelope = self.mailbox.take()
            if envelope is None and not lingered and not self.mailbox.closed:
                # One pass of the scheduler before parking: a busy actor's next message usually arrives within
                # it, and serving it here costs less than a fresh task for it.
                lingered = True
                await trio.lowlevel.checkpoint()
                envelope = self.mailbox.take()
            if envelope is None:
                if not self.mailbox.closed:
                    return False
                await self._stop_cleanly()
                return True
            lingered = False
            # In flight from the first claim on: a cancellation while lingering must fail them, not lose them.
            self._in_flight = batch = []
            if self.kind.batch_limit == 1:
                self.messages_dropped += 0 if take(envelope, batch) else 1  # without a coroutine per message
            else:
                self.messages_dropped += await claim_batch(self.mailbox, self.kind, envelope, batch)
            envelope = None
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
                self._in_flight = None
                self.messages_dropped += len(batch)
                for failed in batch:
                    failed.fail(self._crashed(exc))
                if not await self._recover(exc):
                    return True
                continue
            self._in_flight = None
            self.messages_handled += len(batch)
            self._tally.messages_handled += len(batch)
            self._tally.board.offer(self, busyness(self))
            self.last_activity_at = trio.current_time()
            for done, reply in zip(batch, replies, strict=True):
                done.resolve(reply)
            del batch, replies
            # A checkpoint per batch, as a channel's receive was: a busy actor lets others run and can be
            # cancelled between messages even when its handler never awaits.
            await trio.lowlevel.checkpoint()

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
            logger.warning("%s: on_stop raised", self.name, exc_info=True)
