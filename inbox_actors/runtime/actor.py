"""What an actor kind provides: the Actor hooks and the ActorKind configuration the runtime applies to it."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from .tasks import ActorTasks


class Handle(Protocol):
    """What an actor may do with a ref (runtime.ref.ActorRef is one)."""

    kind: str
    key: str

    async def ask(self, message: object, *, timeout: float | None = None) -> object: ...

    async def tell(self, message: object) -> None: ...

    def tell_nowait(self, message: object) -> None: ...


class Directory(Protocol):
    """Where an actor finds the others (the ActorSystem is one)."""

    def ref(self, kind: str, key: str) -> Handle: ...


class Actor:
    """One instance owns the state of one key. Subclass per kind and override the hooks.

    The runtime never reuses an instance after a crash: it builds a fresh one with the kind's factory and
    calls on_start again, so state lives in the store and is reloaded, never carried over in memory.
    """

    tasks: ActorTasks
    """Long work beside the message loop (set by the runtime before on_start): a task that raises crashes the
    actor; the instance's end cancels its tasks; while one runs the actor does not passivate."""
    actors: Directory
    """The system the actor runs in, to reach other actors (`actors.ref(kind, key)`); set before on_start."""
    self_ref: Handle
    """The actor's own ref (Erlang's self()), to tell itself work for later; set before on_start."""
    leaves_soon: bool = False
    """Set by the actor when what it last handled gives no reason to stay in memory (a broadcast's message to a
    quiet chat): parked so, it passivates after its kind's brief_idle_timeout instead of idle_timeout."""

    def __init__(self, key: str) -> None:
        self.key = key

    async def on_start(self) -> None:
        """Load state. Runs on activation and on every restart; no message is handled before it returns."""

    async def receive(self, message: object) -> object:
        """Handle one message and return the reply (ignored for tell). Raising crashes the actor."""
        raise NotImplementedError(f"{type(self).__name__} does not handle {type(message).__name__}")

    async def receive_batch(self, messages: list[object]) -> list[object]:
        """Handle several queued messages at once (kinds with batch_limit > 1), one reply per message in order.

        Override to commit a group in one transaction; raising crashes the actor and fails the whole batch.
        """
        return [await self.receive(message) for message in messages]

    async def on_stop(self) -> None:
        """Release what on_start took. Runs on a clean stop (passivation, shutdown), not after a crash."""


@dataclass(frozen=True)
class ActorKind:
    name: str
    factory: Callable[[str], Actor]
    """key -> a fresh Actor instance; called again on every restart."""
    mailbox_capacity: int = 64
    idle_timeout: float = 300.0
    """Passivate after this many seconds without a message."""
    ask_timeout: float = 10.0
    """Default ask() deadline."""
    max_restarts: int = 5
    restart_window: float = 60.0
    """More than max_restarts crashes within restart_window seconds escalates to "failed"."""
    failed_cooldown: float = 30.0
    """How long a failed actor refuses work before the next send activates it afresh."""
    restart_backoff: float = 0.1
    """Seconds before the first restart after a crash; each further crash within restart_window doubles it."""
    restart_backoff_max: float = 5.0
    """The longest wait before a restart."""
    outage_backoff_max: float = 1.0
    """The longest wait before restarting an actor that crashed of an outage (the system's `outages`: the database
    gone, say). Such a crash is no fault of the kind, so it counts toward neither the restart intensity nor the
    circuit, and the actor is tried again at least this often: once the dependency is back, it serves again within
    about this long."""
    circuit_failures: int = 3
    """Failed (escalated) actors of this kind within restart_window that open the kind's circuit: the whole
    kind then refuses work fast (KindUnavailable) for failed_cooldown, as OTP escalates to the parent."""
    vital: bool = False
    """The service cannot do its job without this kind: while its circuit is open, readiness is false."""
    batch_limit: int = 1
    """Above 1: messages already queued behind the first are handed to receive_batch together (group commit)."""
    batch_linger: float = 0.0
    """With batch_limit > 1: how long to wait for more messages to join a batch before handling it."""
    brief_idle_timeout: float | None = None
    """Passivate after this many seconds an actor parked with `leaves_soon` set (None: idle_timeout for all)."""
    inline_asks: bool = False
    """The kind's receive never awaits (a rate bucket's window in memory): an ask that finds the actor parked
    (live, nothing queued, nothing being handled) is handled in the asker's task, without the mailbox and the
    task switches there and back. Trio runs one task at a time and such a handler has no checkpoint, so it cannot
    interleave with anything the actor does; an ask finding anything queued goes through the mailbox in order."""
    workspace_of: Callable[[str], int] | None = None
    """key -> the workspace the actor's state belongs to. With a placement (several nodes), such an actor runs only
    on the node holding its workspace (runtime/placement.py); None: a node's own actor (its timers, its rate
    buckets by address), run wherever it is asked for."""

    def __post_init__(self) -> None:
        # A zero-capacity channel would make every tell a rendezvous and an infinite one would remove
        # back-pressure; both break the runtime's guarantees, so refuse them at configuration time.
        if not isinstance(self.mailbox_capacity, int) or self.mailbox_capacity < 1:
            raise ValueError(f"mailbox_capacity must be a positive int, got {self.mailbox_capacity!r}")
        for field_name in ("idle_timeout", "ask_timeout", "restart_window", "failed_cooldown", "restart_backoff",
                           "restart_backoff_max", "outage_backoff_max"):
            value = getattr(self, field_name)
            if not value > 0:  # also rejects NaN; math.inf is allowed and means "never"
                raise ValueError(f"{field_name} must be positive, got {value!r}")
        if self.brief_idle_timeout is not None and not self.brief_idle_timeout > 0:
            raise ValueError(f"brief_idle_timeout must be positive, got {self.brief_idle_timeout!r}")
        if not isinstance(self.batch_limit, int) or self.batch_limit < 1:
            raise ValueError(f"batch_limit must be a positive int, got {self.batch_limit!r}")
        if self.inline_asks and self.batch_limit != 1:
            raise ValueError("inline_asks handles one message at a time: batch_limit must be 1")
        if not self.batch_linger >= 0:
            raise ValueError(f"batch_linger must be zero or positive, got {self.batch_linger!r}")
        if self.max_restarts < 0:
            raise ValueError(f"max_restarts must be >= 0, got {self.max_restarts!r}")
        if not isinstance(self.circuit_failures, int) or self.circuit_failures < 1:
            raise ValueError(f"circuit_failures must be a positive int, got {self.circuit_failures!r}")
        if self.restart_backoff_max < self.restart_backoff:
            raise ValueError("restart_backoff_max must be at least restart_backoff")

    def restart_delay(self, crashes: int) -> float:
        """How long to wait before restarting after the `crashes`-th crash within the window: exponential,
        capped, with "equal jitter" (half fixed, half random), so actors that crashed together on one cause
        (a database blip) do not all come back in the same instant."""
        return _jittered(min(self.restart_backoff_max, self.restart_backoff * 2 ** max(0, crashes - 1)))

    def outage_delay(self, tries: int) -> float:
        """How long to wait before the next start after the `tries`-th crash in a row of one outage: the restart
        backoff, capped at outage_backoff_max rather than restart_backoff_max, and jittered the same way."""
        cap = min(self.restart_backoff_max, self.outage_backoff_max)
        return _jittered(min(cap, self.restart_backoff * 2 ** max(0, tries - 1)))


def _jittered(delay: float) -> float:
    """"Equal jitter": half the delay fixed, half random."""
    return delay / 2 + random.random() * delay / 2
