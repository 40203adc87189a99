"""SLA deadlines as the SLA clock reads them: conversations whose deadline passed unannounced, and the next one.
"Passed" is by PostgreSQL's clock, read in the statements: no node's own clock announces a breach early."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record

_UNANNOUNCED = ("sla_deadline_at IS NOT NULL AND sla_breach_announced_for IS DISTINCT FROM sla_deadline_at")


async def due_breaches(db: Database, *, limit: int) -> list[Record]:
    """Up to `limit` chats whose deadline is at or before now and not yet announced, earliest first."""
    return await db.fetch(
        f"SELECT workspace_id, phone, sla_deadline_at FROM conversations WHERE {_UNANNOUNCED}"
        " AND sla_deadline_at <= now() ORDER BY sla_deadline_at LIMIT $1", limit)


async def next_deadline(db: Database) -> tuple[datetime | None, datetime]:
    """The earliest unannounced deadline still to come, and PostgreSQL's time now."""
    row = await db.fetchrow(
        f"SELECT min(sla_deadline_at) AS next, now() AS now FROM conversations WHERE {_UNANNOUNCED}"
        " AND sla_deadline_at > now()")
    return row["next"], row["now"]
