"""The team audit log: entries written with the changes they record, read newest first, pruned by age."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import msgspec

from persistence.database import Database, Record, UnitOfWork


async def record(q: Database | UnitOfWork, *, workspace_id: int, at: datetime, member_id: int | None, via: str,
                 action: str, subject: str, details: dict[str, Any] | None = None) -> None:
    await q.execute(
        "INSERT INTO team_audit (workspace_id, at, member_id, via, action, subject, details)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)",
        workspace_id, at, member_id, via, action, subject, msgspec.json.encode(details or {}).decode())


async def entries(db: Database, workspace_id: int, *, start: datetime, end: datetime, action: str | None,
                  member_id: int | None, after: tuple[datetime, int] | None, limit: int) -> list[Record]:
    """The window's entries, newest first, after a (at, id) cursor; with the acting member's name."""
    return await db.fetch(
        "SELECT a.id, a.at, a.member_id, m.name AS member_name, a.via, a.action, a.subject, a.details::text AS details"
        " FROM team_audit a LEFT JOIN members m ON m.id = a.member_id"
        " WHERE a.workspace_id = $1 AND a.at >= $2 AND a.at < $3"
        " AND ($4::text IS NULL OR a.action = $4) AND ($5::bigint IS NULL OR a.member_id = $5)"
        " AND ($6::timestamptz IS NULL OR (a.at, a.id) < ($6, $7))"
        " ORDER BY a.at DESC, a.id DESC LIMIT $8",
        workspace_id, start, end, action, member_id, after[0] if after else None, after[1] if after else None,
        limit)


async def prune(db: Database, retention: timedelta) -> int:
    """Delete entries older than `retention` by PostgreSQL's clock."""
    return int((await db.execute("DELETE FROM team_audit WHERE at < now() - $1::interval", retention)).split()[-1])
