"""A node's liveness lock: a session-level advisory lock keyed by the node's name, held on a connection of its own
for as long as the node runs (persistence/session_lock.py), so that PostgreSQL itself tells the other nodes the
moment the node's process dies (crash_watch.py), seconds before its leases would expire.

What the lock proves, and what it does not: a process killed, or a machine lost, ends its sessions, and the lock is
free at once; a process paused (SIGSTOP, a frozen VM) keeps them, its kernel still answering for its sockets, so its
lock stays held and its leases still govern it, the pause bound and the fences as before. A session can also end
with the node alive: a database restart ends every session (crash_watch.py never counts a node dead across one),
and an operator may end one. So the node stops counting on its leases the moment it learns its lock's session is
gone (`on_lost`: every hold is given up, its actors stop, as for a lease lost), takes no lease while it holds no
lock (`holding`), and the watching nodes give it CONFIRM_SECONDS to learn it before they take its workspaces.

Like every background loop of a node it outlives a database outage: whatever connecting or checking meets, it tries
again, a little later each time, and logs once per outage.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import trio

from inbox_actors.runtime.outage_log import OutageLog
from persistence.database import DatabaseUnavailable
from persistence.session_lock import SessionLock

log = logging.getLogger("inbox_actors.cluster.liveness")

# A round trip on the lock's connection every this many seconds: a session the server ended without the connection
# hearing of it (a network path cut) is found within a check's bound more.
CHECK_EVERY_SECONDS = 1.0
# Taking the lock again after a loss: soon, since the node takes no lease meanwhile (after a database restart, the
# first request after the return waits for it). A refused connection costs next to nothing.
RETRY_FIRST_SECONDS = 0.1
RETRY_MOST_SECONDS = 0.25


class NodeLiveness:
    """The lock of the node `name()` (None until it is named). `on_lost()` is told each time a lock held is lost."""

    def __init__(self, lock_for: Callable[[str], SessionLock], name: Callable[[], str | None], *,
                 on_lost: Callable[[], None] = lambda: None) -> None:
        self._lock_for = lock_for
        self._name = name
        self.on_lost = on_lost
        self._lock: SessionLock | None = None
        # Bumped at every lock taken and every lock lost: a lease statement sent under one generation and answered
        # under another may have raced the loss (leases.py then does not count on it).
        self.generation = 0
        self._held = trio.Event()
        self._lost = trio.Event()

    @property
    def holding(self) -> bool:
        return self._held.is_set()

    async def wait_held(self, timeout: float) -> int:
        """The generation of the lock held, once it is (DatabaseUnavailable after `timeout` seconds)."""
        with trio.move_on_after(timeout):
            await self._held.wait()
            return self.generation
        raise DatabaseUnavailable(f"this node holds no liveness lock (its database session) after {timeout:g} s")

    async def run(self, named: Callable[[], Awaitable[None]], *,
                  task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Hold the lock (taking it again after each loss) until cancelled; `named()` returns once the node has its
        name. Started once the first lock is taken, or after a first failed try (the database out: the node serves
        its 503s meanwhile, and takes its lock once it can)."""
        await named()
        name = self._name()
        assert name
        outage = OutageLog(log, f"node {name}: holding its liveness lock (it takes no lease meanwhile)",
                           (DatabaseUnavailable,))
        reported = False

        def started() -> None:
            nonlocal reported
            if not reported:
                reported = True
                task_status.started()

        retry = RETRY_FIRST_SECONDS
        while True:
            try:
                await self._hold_once(name, outage, started)
                retry = RETRY_FIRST_SECONDS
            except Exception as err:     # whatever it meets, it tries again: a database error never ends a node
                outage.failed(err)
            started()
            await trio.sleep(retry)
            retry = min(2 * retry, RETRY_MOST_SECONDS)

    async def _hold_once(self, name: str, outage: OutageLog, started: Callable[[], None]) -> None:
        """Take the lock, then check its session until it is lost."""
        lock = self._lock_for(name)
        self._lost = lost = trio.Event()
        if not await lock.take(on_lost=lost.set):
            raise DatabaseUnavailable("another session holds this node's liveness lock (its previous process, which "
                                      "PostgreSQL has not seen end yet)")
        outage.succeeded()
        self._lock = lock
        self.generation += 1
        self._held.set()
        log.info("node %s holds its liveness lock", name)
        started()
        stopping = False
        try:
            while not lost.is_set():
                with trio.move_on_after(CHECK_EVERY_SECONDS):
                    await lost.wait()
                if not lost.is_set():
                    await lock.check()
        except trio.Cancelled:
            stopping = True
            raise
        finally:
            self._drop("the node is stopping" if stopping else "its session ended", tell=not stopping)

    def _drop(self, why: str, *, tell: bool) -> None:
        lock, self._lock = self._lock, None
        if lock is None:
            return
        lock.release()
        was_held = self._held.is_set()
        self._held = trio.Event()
        self.generation += 1
        if was_held and tell:
            log.warning("node %s lost its liveness lock (%s): it gives up its leases and takes them again once "
                        "the lock is back", lock.name, why)
            self.on_lost()

