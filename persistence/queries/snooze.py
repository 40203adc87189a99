"""The snooze clock's reads: snoozes whose time has come, and the next one to come."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record

_TIMED = "snoozed AND snoozed_until IS NOT NULL"


async def due_snoozes(db: Database, now: datetime, *, limit: int) -> list[Record]:
    return await db.fetch(
        f"SELECT workspace_id, phone, snoozed_until FROM conversations WHERE {_TIMED} AND snoozed_until <= $1"
        " ORDER BY snoozed_until LIMIT $2", now, limit)


async def next_snooze_end(db: Database, after: datetime) -> datetime | None:
    return await db.fetchval(f"SELECT min(snoozed_until) FROM conversations WHERE {_TIMED} AND snoozed_until > $1",
                             after)
