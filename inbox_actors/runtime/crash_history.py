"""One actor's crash history: the restart intensity (N crashes within T seconds), the backoff before the next
restart, and what operators read about its last failure. Crashes of an outage (outages.py) are kept apart: they
spend no intensity, and are logged once per outage rather than once per try."""

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
    __slots__ = ("_kind", "_times", "restarts", "last_error", "last_error_at", "last_crash", "outage_tries",
                 "_outage_began")

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
        self.outage_tries = 0
        """Crashes in a row of the outage under way (0: none), which set the backoff before the next try."""
        self._outage_began: float | None = None

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

    def record_outage(self, exc: Exception, owner: str) -> None:
        """Note a crash an outage caused: no fault of the actor, so it spends none of the restart intensity. The
        first of an outage is logged as a warning, the tries after it at debug level."""
        now = trio.current_time()
        self.last_crash = exc
        self.last_error = describe(exc)
        self.last_error_at = now
        self.outage_tries += 1
        if self._outage_began is None:
            self._outage_began = now
            logger.warning("%s crashed of an outage (%s); trying again at least every %gs until it starts",
                           owner, self.last_error, self._kind.outage_backoff_max)
        else:
            logger.debug("%s: still out (%s), try %d", owner, self.last_error, self.outage_tries)

    def restart_delay(self, *, outage: bool = False) -> float:
        """The backoff before the next restart (see ActorKind.restart_delay and outage_delay)."""
        if outage:
            return self._kind.outage_delay(self.outage_tries)
        return self._kind.restart_delay(self.recent)

    def running_again(self, owner: str) -> None:
        """A fresh instance started: the crash is over, and so is an outage it was part of."""
        self.last_crash = None
        if self._outage_began is not None:
            logger.debug("%s started again after %d tries over %.1fs of an outage", owner, self.outage_tries,
                         trio.current_time() - self._outage_began)
        self._outage_began = None
        self.outage_tries = 0

    def note_activation_failed(self, exc: Exception) -> None:
        self.last_error = describe(exc)
        self.last_error_at = trio.current_time()
