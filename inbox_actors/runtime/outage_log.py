"""A background loop's failures, logged once per outage rather than once per try.

A loop that keeps a node going (renewing its leases, listening for notifications, reading the live nodes) tries
again every second or so while the database is out: a line per try would bury the one that matters. The first
failure of a run is a warning (with its traceback when it is not the expected kind, which may be a bug), the tries
after it go to debug, and the first success after them says how long it lasted.
"""

from __future__ import annotations

import logging

import trio

from .crash_history import describe


class OutageLog:
    """`failed(err)` after each failed try, `succeeded()` after each good one; `expected` are the failures that
    need no traceback (the database's unavailability)."""

    __slots__ = ("_log", "_what", "_expected", "_since", "_failures")

    def __init__(self, log: logging.Logger, what: str, expected: tuple[type[BaseException], ...] = ()) -> None:
        self._log, self._what, self._expected = log, what, expected
        self._since: float | None = None
        self._failures = 0

    @property
    def failing(self) -> bool:
        """Whether the last try failed."""
        return self._since is not None

    def failed(self, err: BaseException) -> None:
        self._failures += 1
        if self._since is not None:
            self._log.debug("%s failed again (%s), %d tries so far", self._what, describe(err), self._failures)
            return
        self._since = trio.current_time()
        self._log.warning("%s failed (%s); trying again until it succeeds", self._what, describe(err),
                          exc_info=None if isinstance(err, self._expected) else err)

    def succeeded(self) -> None:
        if self._since is None:
            return
        self._log.info("%s succeeded again after %d failed tries over %.1f s", self._what, self._failures,
                       trio.current_time() - self._since)
        self._since, self._failures = None, 0
