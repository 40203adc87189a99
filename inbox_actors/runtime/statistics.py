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


class KindCounts(msgspec.Struct, frozen=True):
    live: int
    failed: int
    mailbox_used: int
    messages_handled: int
    restarts: int
    recent_failures: int = 0
    """Actors of the kind that escalated within its restart window."""
    circuit_open: bool = False
    """The kind refuses work fast (KindUnavailable) until its cooldown ends."""


class SystemSummary(msgspec.Struct, frozen=True):
    accepting: bool
    kinds: dict[str, KindCounts]
    busiest: list[ActorStatistics]
    """Live actors with the fullest mailboxes first, then the most messages handled."""
    failing: list[ActorStatistics]
    """Failed actors and actors that restarted after a crash, most recent error first."""


def summarize(
    accepting: bool,
    kind_names: list[str],
    actors: list[ActorStatistics],
    busiest: int,
    kind_failures: dict[str, tuple[int, bool]] | None = None,
) -> SystemSummary:
    """`kind_failures`: kind -> (recent failures, circuit open), from the kinds' supervisors."""
    totals = {name: [0, 0, 0, 0, 0] for name in kind_names}
    live: list[ActorStatistics] = []
    failing: list[ActorStatistics] = []
    for stats in actors:
        counts = totals.setdefault(stats.kind, [0, 0, 0, 0, 0])
        if stats.status is ActorStatus.FAILED:
            counts[1] += 1
        else:
            counts[0] += 1
            live.append(stats)
        counts[2] += stats.mailbox_used
        counts[3] += stats.messages_handled
        counts[4] += stats.restarts
        if stats.status is ActorStatus.FAILED or (stats.restarts > 0 and stats.last_error is not None):
            failing.append(stats)
    live.sort(key=lambda s: (s.mailbox_used, s.messages_handled), reverse=True)
    failing.sort(key=lambda s: s.last_error_at if s.last_error_at is not None else float("-inf"), reverse=True)
    return SystemSummary(
        accepting=accepting,
        kinds={name: KindCounts(*counts, *(kind_failures or {}).get(name, (0, False)))
               for name, counts in totals.items()},
        busiest=live[: max(busiest, 0)],
        failing=failing,
    )
