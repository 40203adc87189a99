"""Timers: jobs repeated on trio's clock (so MockClock drives them in tests), each a supervised actor.

A timer is an actor of the `timer` kind keyed by its name, whose task runs the job at once and then every
period. A failing round crashes the actor like any other: it is restarted (the job runs again) after the
runtime's backoff, which for timers grows up to the period itself, and it shows in `/health/actors` with its
restarts and last error. Timers keep retrying however often they fail: a job that cannot run is what an
operator must see, not a reason to stop trying.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

import msgspec
import trio

from .actor import Actor, ActorKind, Directory

KIND = "timer"


@dataclass(frozen=True)
class Job:
    every: float
    """Seconds between the end of one round and the start of the next."""
    run: Callable[[Directory], Awaitable[object]]
    """One round, given the system (a job that reaches actors asks them through it)."""


class StartTimer(msgspec.Struct, frozen=True):
    """Activate the timer (its task starts with the actor)."""


class Timer(Actor):
    def __init__(self, key: str, job: Job) -> None:
        super().__init__(key)
        self.job = job

    async def on_start(self) -> None:
        self.tasks.start_soon(self._repeat, name=f"timer {self.key}")

    async def _repeat(self) -> None:
        while True:
            await self.job.run(self.actors)
            await trio.sleep(self.job.every)

    async def receive(self, message: object) -> object:
        if isinstance(message, StartTimer):
            return None
        return await super().receive(message)


def timer_kind(jobs: Mapping[str, Job]) -> ActorKind:
    """The `timer` kind running `jobs` (name -> Job); the longest period caps the restart backoff."""
    longest = max((job.every for job in jobs.values()), default=60.0)
    return ActorKind(name=KIND, factory=lambda key: Timer(key, jobs[key]), mailbox_capacity=4,
                     max_restarts=1_000_000, restart_window=math.inf, restart_backoff=1.0,
                     restart_backoff_max=max(1.0, longest))


async def start_timers(actors: Directory, names: list[str] | tuple[str, ...]) -> None:
    for name in names:
        await actors.ref(KIND, name).tell(StartTimer())
