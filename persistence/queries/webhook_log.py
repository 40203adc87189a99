"""The delivery log: a workspace's events (skipped ones aside), newest first, each with its attempts; or the copies
of its events sent to one connector hook."""

from __future__ import annotations

from persistence.database import Database, Record


async def read_log(db: Database, workspace_id: int, *, event: str | None, outcome: str | None,
                   before_id: int | None, limit: int, hook_id: int | None = None) -> list[Record]:
    """Up to `limit` events below `before_id` (if given), newest first; `attempts` is a JSON array. Without
    `hook_id` the workspace endpoint's deliveries (the copies sent to connector hooks are not among them); with it,
    that hook's copies."""
    args: list[object] = [workspace_id]
    conditions = ["o.workspace_id = $1", "o.outcome <> 'skipped'"]
    if hook_id is None:
        conditions.append("o.hook_id IS NULL")
    else:
        args.append(hook_id)
        conditions.append(f"o.hook_id = ${len(args)}")
    for column, value in (("o.event", event), ("o.outcome", outcome)):
        if value is not None:
            args.append(value)
            conditions.append(f"{column} = ${len(args)}")
    if before_id is not None:
        args.append(before_id)
        conditions.append(f"o.id < ${len(args)}")
    args.append(limit)
    return await db.fetch(
        "SELECT o.id, o.event, o.correlation_id, o.actor, o.outcome, o.test, o.created_at,"
        " coalesce((SELECT json_agg(json_build_object('attempt', a.attempt, 'at', a.at,"
        "   'status_code', a.status_code, 'error', a.error, 'duration_ms', a.duration_ms) ORDER BY a.attempt)"
        "  FROM webhook_attempts a WHERE a.outbox_id = o.id), '[]')::text AS attempts"
        f" FROM webhook_outbox o WHERE {' AND '.join(conditions)} ORDER BY o.id DESC LIMIT ${len(args)}",
        *args)
