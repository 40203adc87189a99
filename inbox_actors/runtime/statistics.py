"""Point-in-time views of actors for operators (GET /health/actors), encodable with msgspec.json."""

from __future__ import annotations

import enum

import msgspec


class ActorStatus(str, enum.Enum):
    """Where an actor is in its life (its cell's status); encoded as the plain string."""

    STARTING = "starting"
    RUNNING = "running"
    RESTARTING = "restarting"
    FAILED = "failed"
    STOPPING = "stopping"


class ActorStatistics(msgspec.Struct, frozen=True):
    kind: str
    key: str
    status: ActorStatus
    mailbox_used: int
    mailbox_capacity: int
    messages_handled: int
    restarts: int
    last_error: str | None
    """The last crash as "ExceptionType: message"."""
    last_error_at: float | None
    """trio.current_time() of the last crash."""
    last_activity_at: float | None
    """trio.current_time() when the last message was handled."""
    started_at: float
    """trio.current_time() of the activation."""
    started_at_wall: str
    """ISO 8601 UTC wall-clock time of the activation."""
    messages_dropped: int = 0
    """Messages taken out of the mailbox unhandled: lost to a crash, an escalation or a forced stop, or
    asks whose caller had already given up."""
    tasks_running: int = 0
    """Long work the actor runs beside its message loop (ActorTasks)."""
    oldest_message_at: float | None = None
    """trio.current_time() when the oldest envelope in the mailbox was sent; None when the mailbox is empty."""


class KindCounters(msgspec.Struct, frozen=True):
    """One kind's counters, kept as actors live (ActorSystem.kind_counters()): what monitoring exports.
    Levels are now; the `_total` counters only grow, from the system's start."""

    live: int
    """Actors in memory that have not failed (starting, running, restarting, or leaving memory)."""
    failed: int
    """Actors that escalated and refuse work until their cooldown ends."""
    activated_total: int
    passivated_total: int
    """Left memory after their idle timeout."""
    restarted_total: int
    """Restarts after a crash."""
    failed_total: int
    """Escalations: restart intensity exceeded."""
    messages_handled_total: int
    mailbox_used: int
    """Envelopes queued in the kind's mailboxes, summed."""
    mailbox_max: int
    """The deepest mailbox of the kind."""


class KindCounts(msgspec.Struct, frozen=True):
    """One kind in GET /health/actors."""

    live: int
    failed: int
    mailbox_used: int
    messages_handled: int
    """Since the system started (every actor of the kind, including those that left memory)."""
    restarts: int
    """Since the system started."""
    recent_failures: int = 0
    """Actors of the kind that escalated within its restart window."""
    circuit_open: bool = False
    """The kind refuses work fast (KindUnavailable) until its cooldown ends."""
    mailbox_max: int = 0
    """The deepest mailbox of the kind now."""
    activated: int = 0
    """Activations since the system started."""
    passivated: int = 0
    """Passivations (idle timeout) since the system started."""
    failed_total: int = 0
    """Escalations since the system started."""


class SystemSummary(msgspec.Struct, frozen=True):
    accepting: bool
    kinds: dict[str, KindCounts]
    busiest: list[ActorStatistics]
    """Live actors with the fullest mailboxes first, then the most messages handled (from a bounded candidate
    set: see tally.Leaderboard)."""
    failing: list[ActorStatistics]
    """Failed actors and actors that restarted after a crash, most recent error first (at most 100)."""
    failing_count: int = 0
    """All of them, when `failing` was cut short."""
