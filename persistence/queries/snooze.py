"""The snooze clock's reads: snoozes whose time has come, and the next one to come, by PostgreSQL's clock (read in
the statements: no node's own clock ends a snooze early)."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record

_TIMED = "snoozed AND snoozed_until IS NOT NULL"


async def due_snoozes(db: Database, *, limit: int) -> list[Record]:
    return await db.fetch(
        f"SELECT workspace_id, phone, snoozed_until FROM conversations WHERE {_TIMED} AND snoozed_until <= now()"
        " ORDER BY snoozed_until LIMIT $1", limit)


async def next_snooze_end(db: Database) -> tuple[datetime | None, datetime]:
    """The earliest snooze end still to come, and PostgreSQL's time now."""
    row = await db.fetchrow(f"SELECT min(snoozed_until) AS next, now() AS now FROM conversations WHERE {_TIMED}"
                            " AND snoozed_until > now()")
    return row["next"], row["now"]
