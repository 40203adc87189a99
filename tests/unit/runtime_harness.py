"""Shared kit for the runtime tests: a scriptable probe actor and a running system. Holds no tests itself.

Every runtime test runs on trio's MockClock(autojump_threshold=0) through pytest-trio's built-in
`autojump_clock` fixture, so idle timeouts, deadlines and cooldowns elapse instantly and deterministically.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import msgspec
import trio

from inbox_actors.runtime import Actor, ActorKind, ActorSystem


class Echo(msgspec.Struct, frozen=True):
    value: str


class Hold(msgspec.Struct, frozen=True):
    """Journal "began", wait for the gate, journal "handled", reply value."""

    value: str
    gate: trio.Event


class Crash(msgspec.Struct, frozen=True):
    text: str


class Add(msgspec.Struct, frozen=True):
    """Add to the total the probe persists per key (its stand-in for Postgres); reply the new total."""

    amount: int


class WhoAreYou(msgspec.Struct, frozen=True):
    """Reply the instance number, which changes whenever the factory builds a fresh actor."""


class Probe:
    """Shared by every actor of a probe kind: the journal tests read, the 'database', failure switches."""

    def __init__(self) -> None:
        self.journal: list[tuple[str, ...]] = []
        self.store: dict[str, int] = {}
        self.instances = 0
        self.start_failures = 0
        """How many of the next on_start calls raise."""
        self.start_gate: trio.Event | None = None
        """If set, on_start waits for it (a slow database)."""

    def kind(self, name: str = "probe", **options: Any) -> ActorKind:
        return ActorKind(name=name, factory=lambda key: ProbeActor(key, self), **options)

    def events(self, event: str) -> list[tuple[str, ...]]:
        return [entry for entry in self.journal if entry[0] == event]


class ProbeActor(Actor):
    def __init__(self, key: str, probe: Probe) -> None:
        super().__init__(key)
        self.probe = probe
        probe.instances += 1
        self.number = probe.instances
        self.total = 0

    async def on_start(self) -> None:
        if self.probe.start_gate is not None:
            await self.probe.start_gate.wait()
        if self.probe.start_failures > 0:
            self.probe.start_failures -= 1
            raise ConnectionError("database unavailable")
        self.total = self.probe.store.get(self.key, 0)
        self.probe.journal.append(("start", self.key))

    async def receive(self, message: object) -> object:
        match message:
            case Echo(value):
                self.probe.journal.append(("handled", self.key, value))
                return value
            case Hold(value, gate):
                self.probe.journal.append(("began", self.key, value))
                await gate.wait()
                self.probe.journal.append(("handled", self.key, value))
                return value
            case Crash(text):
                self.probe.journal.append(("crash", self.key, text))
                raise ValueError(text)
            case Add(amount):
                self.total += amount
                self.probe.store[self.key] = self.total
                return self.total
            case WhoAreYou():
                return self.number
        raise TypeError(f"unexpected message {message!r}")

    async def on_stop(self) -> None:
        self.probe.journal.append(("stop", self.key))


@asynccontextmanager
async def running(*kinds: ActorKind, grace: float = 10.0) -> AsyncIterator[ActorSystem]:
    system = ActorSystem(kinds)
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        try:
            yield system
        finally:
            with trio.CancelScope(shield=True):
                await system.shutdown(grace)
