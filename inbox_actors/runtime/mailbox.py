"""Mailbox: one actor's bounded queue of envelopes, written by many senders and read by the actor alone.

A trio memory channel pair would do the job but costs about 2.4 KB per actor before anything is queued (two
channel objects, shared state with three containers, statistics). This queue costs about 150 bytes while it
is empty, which is what most live actors' mailboxes are. It keeps the channel's contract where the runtime
relies on it: bounded (a full mailbox makes `send` wait and `send_nowait` raise `trio.WouldBlock`), blocked
senders served first come first served, `trio.ClosedResourceError` once closed to senders (stop,
passivation), `trio.BrokenResourceError` once the reader is gone (escalation, activation failure, abort).

The reader never blocks on it: the cell takes what is queued and, when nothing is, parks without a task; the
mailbox calls `on_arrival` whenever an envelope lands so the cell can wake.

Every change of depth is reported to the kind's `KindTally` (queued envelopes summed per kind, the deepest
mailbox), so operators read those figures without visiting every mailbox.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable

import outcome
import trio

from .envelope import Envelope
from .tally import KindTally


class Mailbox:
    __slots__ = ("_capacity", "_queue", "_blocked", "_closed", "_broken", "_on_arrival", "_arrived", "_tally")

    def __init__(self, capacity: int, on_arrival: Callable[[], None], tally: KindTally | None = None) -> None:
        self._capacity = capacity
        self._tally = tally if tally is not None else KindTally("", capacity)
        # Made on the first envelope and dropped when emptied: an empty deque alone is about 600 bytes.
        self._queue: deque[Envelope] | None = None
        # Senders waiting for room, each with the envelope it will put, oldest first; made when first needed.
        self._blocked: OrderedDict[trio.lowlevel.Task, Envelope] | None = None
        self._closed = False
        self._broken = False
        self._on_arrival = on_arrival
        self._arrived: trio.Event | None = None  # made only by a reader lingering for more (batching)

    def __len__(self) -> int:
        return len(self._queue) if self._queue is not None else 0

    def oldest_sent_at(self) -> float | None:
        """When the oldest queued envelope was sent (trio's clock); None when nothing is queued."""
        return self._queue[0].sent_at if self._queue else None

    @property
    def closed(self) -> bool:
        """Closed to senders: what is queued is still there to take."""
        return self._closed or self._broken

    # -- senders ----------------------------------------------------------------------------------------

    def send_nowait(self, envelope: Envelope) -> None:
        self._check_open()
        if len(self) >= self._capacity:
            raise trio.WouldBlock
        self._put(envelope)

    async def send(self, envelope: Envelope) -> None:
        """Put the envelope, waiting for room while the mailbox is full (first come, first served)."""
        await trio.lowlevel.checkpoint_if_cancelled()
        self._check_open()
        if len(self) < self._capacity and not self._blocked:
            self._put(envelope)
            await trio.lowlevel.cancel_shielded_checkpoint()
            return
        task = trio.lowlevel.current_task()
        if self._blocked is None:
            self._blocked = OrderedDict()
        self._blocked[task] = envelope

        def abort(_: object) -> trio.lowlevel.Abort:
            assert self._blocked is not None
            del self._blocked[task]
            return trio.lowlevel.Abort.SUCCEEDED

        await trio.lowlevel.wait_task_rescheduled(abort)

    def close(self) -> None:
        """Close to senders (the actor is stopping or leaving memory); waiting senders get ClosedResourceError."""
        self._closed = True
        self._wake_blocked(trio.ClosedResourceError)
        self._signal_arrival()

    # -- the reader -------------------------------------------------------------------------------------

    def take(self) -> Envelope | None:
        """The oldest envelope, or None when none is queued. Room it frees goes to the oldest waiting sender."""
        queue = self._queue
        if not queue:
            return None
        envelope = queue.popleft()
        if self._blocked:
            task, waiting = self._blocked.popitem(last=False)
            queue.append(waiting)  # the depth is unchanged
            trio.lowlevel.reschedule(task)
        else:
            self._tally.shrank(len(queue))
            if not queue:
                self._queue = None
        return envelope

    async def wait_for_arrival(self) -> None:
        """Wait until an envelope lands or the mailbox closes (a reader lingering to fill a batch)."""
        if self._queue or self.closed:
            await trio.lowlevel.checkpoint()
            return
        if self._arrived is None:
            self._arrived = trio.Event()
        await self._arrived.wait()

    def break_(self) -> None:
        """The reader is gone: queued envelopes are dropped (fail them first), senders get BrokenResourceError."""
        self._broken = True
        self._tally.emptied(len(self))
        self._queue = None
        self._wake_blocked(trio.BrokenResourceError)
        self._signal_arrival()

    # -- inside -----------------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._broken:
            raise trio.BrokenResourceError
        if self._closed:
            raise trio.ClosedResourceError

    def _put(self, envelope: Envelope) -> None:
        if self._queue is None:
            self._queue = deque()
        self._queue.append(envelope)
        self._tally.grew(len(self._queue))
        self._signal_arrival()
        self._on_arrival()

    def _signal_arrival(self) -> None:
        if self._arrived is not None:
            self._arrived.set()
            self._arrived = None

    def _wake_blocked(self, error: type[Exception]) -> None:
        blocked, self._blocked = self._blocked, None
        for task in blocked or ():
            trio.lowlevel.reschedule(task, outcome.Error(error()))
