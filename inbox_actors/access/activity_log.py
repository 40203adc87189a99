"""The activity log: every call made with a key (refused and rate-limited ones included) -> `key_activity`.

One actor owns the writes, so recording a call costs a request only a place in a bounded mailbox. When calls
arrive faster than single inserts could keep up, the actor takes everything queued (up to a batch) and writes
it in one transaction with each key's last-used time: the busier the service, the larger the batches.
A full mailbox makes requests wait for room rather than drop records or grow memory without bound.

Records still queued when the process dies are lost (at most one batch in flight); what is committed stays
30 days, after which the retention timer deletes it.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

import msgspec
import trio

from inbox_actors.monitoring.metrics import ServiceMetrics
from inbox_actors.runtime import Actor, ActorKind, ActorSystem, MailboxFull
from persistence.database import Database, DatabaseUnavailable
from persistence.queries import api_keys as key_queries

log = logging.getLogger("inbox_actors.access.activity_log")

KIND = "activity_log"
SINGLE_KEY = "all"
RETENTION = timedelta(days=30)
BATCH_LIMIT = 1_000
# How long a write waits for more records to join it: audit rows are never read within a blink, and one
# write of fifty rows costs about what one of a single row does.
BATCH_LINGER = 0.05
RETRY_FIRST_DELAY = 0.5
RETRY_MAX_DELAY = 10.0
# How long a request waits for room in a full log before the record is dropped (and counted).
ENQUEUE_PATIENCE = 2.0


class CallRecord(msgspec.Struct, frozen=True):
    """One call with a key. A call refused before its key was looked up (the per-IP ceiling answers without
    asking PostgreSQL) carries the key's hash instead of its id and workspace: the write resolves it, and a token
    that is no key leaves no record."""

    key_id: int | None
    workspace_id: int | None
    method: str
    path: str
    status: int
    ip: str
    at: datetime
    key_hash: bytes | None = None


class Flush(msgspec.Struct, frozen=True):
    """A barrier: answered once every record sent before it is committed."""


class ActivityLog(Actor):
    def __init__(self, key: str, db: Database, metrics: ServiceMetrics | None = None) -> None:
        super().__init__(key)
        self._db = db
        self._metrics = metrics

    async def receive(self, message: object) -> object:
        return (await self.receive_batch([message]))[0]

    async def receive_batch(self, messages: list[object]) -> list[object]:
        rows = [(m.key_id, m.workspace_id, m.key_hash, m.method, m.path, m.status, m.ip, m.at)
                for m in messages if isinstance(m, CallRecord)]
        if rows:
            await self._write(rows)
            if self._metrics is not None:
                self._metrics.activity_batch_written(len(rows))
        return [True if isinstance(m, Flush) else None for m in messages]

    async def _write(self, rows: list[tuple]) -> None:
        """Write, retrying while PostgreSQL is away: a crash would drop every record queued behind this batch.
        Meanwhile the mailbox fills and requests wait briefly for room (see record_call)."""
        delay = RETRY_FIRST_DELAY
        while True:
            try:
                await key_queries.record_activity(self._db, rows)
                return
            except DatabaseUnavailable as err:
                log.warning("activity log cannot reach PostgreSQL (%s); retrying %d records in %gs",
                            err, len(rows), delay)
            await trio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX_DELAY)


def activity_log_kind(db: Database, metrics: ServiceMetrics | None = None) -> ActorKind:
    return ActorKind(name=KIND, factory=lambda key: ActivityLog(key, db, metrics), mailbox_capacity=10_000,
                     batch_limit=BATCH_LIMIT, batch_linger=BATCH_LINGER, idle_timeout=3600.0, ask_timeout=30.0)


async def record_call(actors: ActorSystem, record: CallRecord) -> bool:
    """Queue a record; False if the log had no room within ENQUEUE_PATIENCE seconds (PostgreSQL away for
    long), in which case the record is dropped so the API keeps answering."""
    log_ref = actors.ref(KIND, SINGLE_KEY)
    try:
        log_ref.tell_nowait(record)   # room in the mailbox, as nearly always: no deadline to set up, no wait
        return True
    except MailboxFull:
        pass
    with trio.move_on_after(ENQUEUE_PATIENCE):
        await log_ref.tell(record)
        return True
    return False


async def wait_recorded(actors: ActorSystem) -> None:
    """Return once every call recorded so far is in PostgreSQL."""
    await actors.ref(KIND, SINGLE_KEY).ask(Flush())


async def prune_expired_activity(db: Database) -> int:
    """Delete activity older than the 30-day retention by PostgreSQL's clock (a node-wide sweep: no node's own clock
    decides what every workspace loses); the service runs this hourly."""
    deleted = await key_queries.prune_activity(db, RETENTION)
    if deleted:
        log.info("pruned %d activity rows older than %d days", deleted, RETENTION.days)
    return deleted
