"""ActorTasks: long work an actor runs beside its message loop (a delivery pump, a retry schedule).

The tasks belong to one actor instance, as an Erlang process's linked workers do: a task that raises crashes
the actor (the runtime restarts it with its state reloaded, under the kind's restart intensity), and a crash,
a stop or a passivation of the instance cancels all of its tasks. While any task runs the actor is not idle,
so it does not passivate. The tasks run in the system's nursery: an actor holds no nursery (nor task) of its own
while it is idle.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import trio

logger = logging.getLogger("inbox_actors.runtime")


class Spawner(Protocol):
    """Where the tasks run (a trio.Nursery is one; the ActorSystem lends its own)."""

    def start_soon(self, async_fn: Callable[..., Awaitable[Any]], *args: Any, name: object = None) -> None: ...


class ActorTasks:
    __slots__ = ("_spawner", "_on_crash", "_owner", "_scopes", "_closed", "_none_running")

    def __init__(self, spawner: Spawner, on_crash: Callable[[Exception], None], owner: str) -> None:
        self._spawner = spawner
        self._on_crash = on_crash
        self._owner = owner
        self._scopes: set[trio.CancelScope] | None = None  # made by the first task
        self._closed = False
        self._none_running: trio.Event | None = None  # made only by cancel_and_wait, when tasks run

    @property
    def running(self) -> int:
        return len(self._scopes) if self._scopes is not None else 0

    def start_soon(self, job: Callable[..., Awaitable[Any]], *args: Any, name: str | None = None) -> None:
        """Run `job(*args)` beside the message loop until it returns, raises (crashing the actor) or the
        instance ends. Refused once the instance has ended."""
        if self._closed:
            raise RuntimeError(f"{self._owner}: the actor instance has ended; it starts no more tasks")
        # Registered before it runs, so a cancel_all() between now and its first step still reaches it.
        scope = trio.CancelScope()
        if self._scopes is None:
            self._scopes = set()
        self._scopes.add(scope)
        self._spawner.start_soon(self._run, scope, job, args, name=name or f"{self._owner} task")

    def cancel_all(self) -> None:
        """End the instance's tasks (crash, stop, passivation); a late failure of one is no longer a crash."""
        self._closed = True
        for scope in self._scopes or ():
            scope.cancel()

    async def cancel_and_wait(self) -> None:
        """cancel_all(), then wait until every task has unwound (so on_stop may release what they used)."""
        self.cancel_all()
        if self._scopes:
            if self._none_running is None:
                self._none_running = trio.Event()
            await self._none_running.wait()

    async def _run(self, scope: trio.CancelScope, job: Callable[..., Awaitable[Any]], args: tuple) -> None:
        try:
            with scope:
                await job(*args)
        except trio.Cancelled:
            raise
        except Exception as exc:
            if not self._closed:
                self._on_crash(exc)
            else:
                logger.info("%s: a task failed after its actor ended: %r", self._owner, exc)
        finally:
            self._scopes.discard(scope)
            if not self._scopes and self._none_running is not None:
                self._none_running.set()
