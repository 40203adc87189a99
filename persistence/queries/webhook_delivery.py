"""What the webhook endpoint actor reads and writes: a workspace's pending outbox rows, their outcomes and
the attempts made (`webhook_outbox`, `webhook_attempts`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import msgspec

from persistence.database import Database, Record, UnitOfWork


async def pending_events(db: Database, workspace_id: int, *, exclude: Sequence[int], limit: int) -> list[Record]:
    """The oldest pending events not already in hand (`exclude`), in id order, with the number of attempts
    already recorded and the time of the last one (both survive a crash: a resumed event continues its
    schedule); `hook_id` names a connector hook's copy (None: the event, for the workspace's endpoint)."""
    return await db.fetch(
        "SELECT id, event, correlation_id, actor, data::text AS data, data->>'phone' AS phone, attempts,"
        " last_attempt_at, created_at, hook_id"
        " FROM webhook_outbox"
        " WHERE workspace_id = $1 AND outcome = 'pending' AND NOT test AND id <> ALL($2::bigint[])"
        " ORDER BY id LIMIT $3",
        workspace_id, list(exclude), limit)


async def skip_events(db: Database, ids: Sequence[int]) -> None:
    """Mark events that are not to be delivered (unsubscribed, disabled, not in the plan)."""
    if ids:
        await db.execute("UPDATE webhook_outbox SET outcome = 'skipped' WHERE id = ANY($1::bigint[])"
                         " AND outcome = 'pending'", list(ids))


async def skip_all_pending(db: Database, workspace_id: int) -> int:
    """Skip every pending event of a workspace that has no deliverable endpoint; how many were skipped."""
    status = await db.execute(
        "UPDATE webhook_outbox SET outcome = 'skipped'"
        " WHERE workspace_id = $1 AND outcome = 'pending' AND NOT test", workspace_id)
    return int(status.rsplit(" ", 1)[-1])


class AttemptRecord(msgspec.Struct, frozen=True):
    """One attempt and what it leaves the event as: "pending" (to retry), "delivered" or "failed"."""

    outbox_id: int
    attempt: int
    at: datetime
    status_code: int | None
    error: str | None
    duration_ms: int
    outcome: str


async def record_attempts(tx: UnitOfWork, records: Sequence[AttemptRecord]) -> None:
    """Append the attempts and move each event to its outcome, in two statements however many there are."""
    columns: dict[str, list[Any]] = {name: [] for name in AttemptRecord.__struct_fields__}
    for record in records:
        for name in AttemptRecord.__struct_fields__:
            columns[name].append(getattr(record, name))
    await tx.execute(
        "INSERT INTO webhook_attempts (outbox_id, attempt, at, status_code, error, duration_ms)"
        " SELECT * FROM unnest($1::bigint[], $2::int[], $3::timestamptz[], $4::int[], $5::text[], $6::int[])",
        columns["outbox_id"], columns["attempt"], columns["at"], columns["status_code"], columns["error"],
        columns["duration_ms"])
    await tx.execute(
        "UPDATE webhook_outbox o SET attempts = a.attempt, last_attempt_at = a.at, outcome = a.outcome,"
        " delivered_at = CASE WHEN a.outcome = 'delivered' THEN a.at END,"
        " failed_at = CASE WHEN a.outcome = 'failed' THEN a.at END"
        " FROM unnest($1::bigint[], $2::int[], $3::timestamptz[], $4::text[]) AS a(id, attempt, at, outcome)"
        " WHERE o.id = a.id",
        columns["outbox_id"], columns["attempt"], columns["at"], columns["outcome"])


async def insert_test_event(db: Database, *, workspace_id: int, correlation_id: str, event: str, actor: str,
                            data: str) -> int:
    """A test event, in the log but never picked up by the endpoint actor (the call that asked delivers it)."""
    return await db.fetchval(
        "INSERT INTO webhook_outbox (workspace_id, event, correlation_id, actor, data, test)"
        " VALUES ($1, $2, $3, $4, $5::jsonb, true) RETURNING id",
        workspace_id, event, correlation_id, actor, data)


async def prune_finished(db: Database, retention: timedelta, *, batch: int = 10_000) -> int:
    """Delete finished events (and their attempts) created more than `retention` ago by PostgreSQL's clock, a batch
    at a time."""
    removed = 0
    while True:
        status = await db.execute(
            "WITH doomed AS (SELECT id FROM webhook_outbox WHERE outcome <> 'pending'"
            " AND created_at < now() - $1::interval LIMIT $2),"
            " gone_attempts AS (DELETE FROM webhook_attempts WHERE outbox_id IN (SELECT id FROM doomed))"
            " DELETE FROM webhook_outbox WHERE id IN (SELECT id FROM doomed)", retention, batch)
        count = int(status.rsplit(" ", 1)[-1])
        removed += count
        if count < batch:
            return removed


async def pending_among(db: Database, workspace_ids: list[int]) -> list[int]:
    """Those of `workspace_ids` with a pending event."""
    return [row["workspace_id"] for row in await db.fetch(
        "SELECT w.id AS workspace_id FROM unnest($1::bigint[]) AS w(id) WHERE EXISTS (SELECT 1 FROM webhook_outbox o"
        " WHERE o.workspace_id = w.id AND o.outcome = 'pending' AND NOT o.test)", workspace_ids)]


async def workspaces_with_pending(db: Database, *, unleased_only: bool = False) -> list[int]:
    """Every workspace with a pending event: a skip scan of the pending index, one probe per workspace.
    `unleased_only`: only those no node holds the lease of (migration 024), whose node stopped or died."""
    unleased = (" AND NOT EXISTS (SELECT 1 FROM workspace_leases l WHERE l.workspace_id = w.workspace_id"
                " AND l.expires_at > now())") if unleased_only else ""
    return [row["workspace_id"] for row in await db.fetch(
        "WITH RECURSIVE w AS ("
        " (SELECT workspace_id FROM webhook_outbox WHERE outcome = 'pending' AND NOT test"
        "  ORDER BY workspace_id LIMIT 1)"
        " UNION ALL"
        " SELECT (SELECT o.workspace_id FROM webhook_outbox o WHERE o.outcome = 'pending' AND NOT o.test"
        "  AND o.workspace_id > w.workspace_id ORDER BY o.workspace_id LIMIT 1) FROM w"
        "  WHERE w.workspace_id IS NOT NULL"
        ") SELECT workspace_id FROM w WHERE workspace_id IS NOT NULL" + unleased)]
