"""Ending a relayed event stream when this node begins to drain, as the streams it serves itself end (live_stream.py).

Only an answer of content-type `text/event-stream` is ended early. Its client expects it to end at any time and
reconnects (EventSource, resuming after its Last-Event-ID), and it would otherwise run until the grace period cuts
it off mid-body: the load balancer can move it to another node only once it ends. Any other answer still streaming
(an export, a media download, a slow call) has an end its client needs: it is relayed to that end, within the grace
period, as the requests this node serves itself are.

The stream is ended between two parts of the answer, never inside a send to the client, so the client's answer
ends as a complete chunked body. A part may hold half an event: EventSource drops an event the stream ended inside,
and hears it again after reconnecting, since its Last-Event-ID is the last whole event's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

import trio

T = TypeVar("T")

EVENT_STREAM = b"text/event-stream"


def is_event_stream(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    for name, value in headers:
        if name.lower() == b"content-type":
            return value.partition(b";")[0].strip().lower() == EVENT_STREAM
    return False


class StreamCut:
    """Waits for a relayed answer's next part until `drain_began` is set (None: never cut)."""

    def __init__(self, drain_began: trio.Event | None) -> None:
        self._drain_began = drain_began
        self._waiting: trio.CancelScope | None = None

    def start(self, nursery: trio.Nursery) -> None:
        """Watch for the drain in `nursery`, which the caller cancels once the answer is over."""
        if self._drain_began is not None:
            nursery.start_soon(self._cut_at, self._drain_began)

    async def _cut_at(self, drain_began: trio.Event) -> None:
        await drain_began.wait()
        if self._waiting is not None:
            self._waiting.cancel()      # a wait already over is left as it ended: `next` checks the event first

    async def next(self, read: Callable[[], Awaitable[T]]) -> T | None:
        """What `read()` gives, or None once the drain began: the stream ends here."""
        if self._drain_began is None:
            return await read()
        if self._drain_began.is_set():
            return None
        with trio.CancelScope() as self._waiting:
            return await read()
        return None
