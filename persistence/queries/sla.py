"""SLA deadlines as the SLA clock reads them: conversations whose deadline passed unannounced, and the next one."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record

_UNANNOUNCED = ("sla_deadline_at IS NOT NULL AND sla_breach_announced_for IS DISTINCT FROM sla_deadline_at")


async def due_breaches(db: Database, now: datetime, *, limit: int) -> list[Record]:
    """Up to `limit` chats whose deadline is at or before `now` and not yet announced, earliest first."""
    return await db.fetch(
        f"SELECT workspace_id, phone, sla_deadline_at FROM conversations WHERE {_UNANNOUNCED}"
        " AND sla_deadline_at <= $1 ORDER BY sla_deadline_at LIMIT $2", now, limit)


async def next_deadline(db: Database, after: datetime) -> datetime | None:
    """The earliest unannounced deadline after `after`."""
    return await db.fetchval(
        f"SELECT min(sla_deadline_at) FROM conversations WHERE {_UNANNOUNCED} AND sla_deadline_at > $1", after)
