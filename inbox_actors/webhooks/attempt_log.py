"""Writes delivery attempts to PostgreSQL in groups: one transaction for every attempt that finished while the
previous group was committing, so thousands of deliveries a second cost tens of transactions, not thousands.

`record` returns only once its attempt is committed: the caller starts no further attempt (and forgets no
event) before that, which is what makes delivery resumable after a crash. There is no writer task: the first
caller to find no write under way writes (its own attempt and whatever queues behind it), so an idle endpoint
holds nothing running.
"""

from __future__ import annotations

from collections import deque

import trio

from persistence.database import Database
from persistence.queries.webhook_delivery import AttemptRecord, record_attempts

GROUP_LIMIT = 500


class _Pending:
    __slots__ = ("record", "done")

    def __init__(self, record: AttemptRecord) -> None:
        self.record = record
        self.done = trio.Event()


class AttemptLog:
    def __init__(self, db: Database) -> None:
        self._db = db
        # Bounded by its callers: each is an event in hand, and an endpoint holds a bounded number.
        self._queue: deque[_Pending] = deque()
        self._writing = False
        self.groups_written = 0
        self.attempts_written = 0

    async def record(self, record: AttemptRecord) -> None:
        """Return once `record` is committed. A database failure raises in the caller that was writing (the
        others wait on; the actor crashes, which cancels them, and its events stay pending for the restart)."""
        pending = _Pending(record)
        self._queue.append(pending)
        if self._writing:
            await pending.done.wait()
            return
        self._writing = True
        try:
            while self._queue:
                group = [self._queue.popleft() for _ in range(min(GROUP_LIMIT, len(self._queue)))]
                async with self._db.transaction() as tx:
                    await record_attempts(tx, [item.record for item in group])
                self.groups_written += 1
                self.attempts_written += len(group)
                for item in group:
                    item.done.set()
        finally:
            self._writing = False
