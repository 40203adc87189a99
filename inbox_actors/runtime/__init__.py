"""The actor runtime: bounded mailboxes, activation on demand, passivation, one-for-one supervision."""

from .actor import Actor, ActorKind, Directory, Handle
from .errors import (
    ActivationFailed,
    ActorCrashed,
    ActorError,
    ActorFailed,
    ActorSystemStopping,
    AskTimeout,
    KindUnavailable,
    MailboxFull,
    ServedElsewhere,
    WaitingOutOutage,
)
from .placement import Placement, workspace_in_key
from .ref import ActorRef
from .statistics import ActorStatistics, ActorStatus, KindCounts, SystemSummary
from .system import ActorSystem
from .tasks import ActorTasks
from .timer import Job, start_timers, timer_kind

__all__ = [
    "ActivationFailed",
    "Actor",
    "ActorCrashed",
    "ActorError",
    "ActorFailed",
    "ActorKind",
    "ActorRef",
    "ActorStatistics",
    "ActorStatus",
    "ActorSystem",
    "ActorSystemStopping",
    "ActorTasks",
    "AskTimeout",
    "Directory",
    "Handle",
    "Job",
    "KindCounts",
    "KindUnavailable",
    "MailboxFull",
    "Placement",
    "ServedElsewhere",
    "SystemSummary",
    "WaitingOutOutage",
    "start_timers",
    "timer_kind",
    "workspace_in_key",
]
