"""LazyEvent: a one-shot event whose trio.Event is made only when somebody waits for it.

A live actor has several "has this happened yet" flags (ready, exited, a stop during a restart backoff, its
tasks unwound) that almost nobody waits on; a trio.Event each costs about 270 bytes per actor, a LazyEvent
that is never waited on about 50.
"""

from __future__ import annotations

import trio


class LazyEvent:
    __slots__ = ("_happened", "_event")

    def __init__(self) -> None:
        self._happened = False
        self._event: trio.Event | None = None

    def is_set(self) -> bool:
        return self._happened

    def set(self) -> None:
        self._happened = True
        if self._event is not None:
            self._event.set()

    async def wait(self) -> None:
        if self._happened:
            await trio.lowlevel.checkpoint()
            return
        if self._event is None:
            self._event = trio.Event()
        await self._event.wait()
