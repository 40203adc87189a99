"""One actor's crash history: the restart intensity (N crashes within T seconds), the backoff before the next
restart, and what operators read about its last failure."""

from __future__ import annotations

import logging
from collections import deque

import trio

from .actor import ActorKind

logger = logging.getLogger("inbox_actors.runtime")


def describe(exc: BaseException) -> str:
    """An exception as operators read it: "ExceptionType: message"."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class CrashHistory:
    __slots__ = ("_kind", "_times", "restarts", "last_error", "last_error_at", "last_crash")

    def __init__(self, kind: ActorKind) -> None:
        self._kind = kind
        # Only the last max_restarts + 1 crash times can decide whether the intensity is exceeded; made at the
        # first crash (most actors never crash).
        self._times: deque[float] | None = None
        self.restarts = 0
        self.last_error: str | None = None
        self.last_error_at: float | None = None
        self.last_crash: Exception | None = None
        """The crash being handled, to chain into the errors callers get; dropped once the actor runs again (its
        traceback pins the dead instance's frames)."""

    @property
    def recent(self) -> int:
        """Crashes within the restart window, as of the last one."""
        return len(self._times) if self._times is not None else 0

    def record(self, exc: Exception, owner: str) -> bool:
        """Note a crash; True if it exceeds the kind's restart intensity."""
        now = trio.current_time()
        self.last_crash = exc
        self.last_error = describe(exc)
        self.last_error_at = now
        if self._times is None:
            self._times = deque(maxlen=self._kind.max_restarts + 1)
        self._times.append(now)
        while self._times and self._times[0] <= now - self._kind.restart_window:
            self._times.popleft()
        logger.warning("%s crashed: %s", owner, self.last_error, exc_info=exc)
        return len(self._times) > self._kind.max_restarts

    def restart_delay(self) -> float:
        """The backoff before the next restart (see ActorKind.restart_delay)."""
        return self._kind.restart_delay(self.recent)

    def note_activation_failed(self, exc: Exception) -> None:
        self.last_error = describe(exc)
        self.last_error_at = trio.current_time()
