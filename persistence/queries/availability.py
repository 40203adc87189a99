"""Members' availability: what each chose, when a page of theirs was last open, and the workspace's idle time. Every
time here is PostgreSQL's (`now()` in the statement), so every node judges idleness by the same clock."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record, UnitOfWork

# The workspace's side of the rule, with the clock the rule is judged by.
# `{idle}`: the parameter holding the default idle time.
_CONTEXT = ("SELECT now() AS now, coalesce(s.idle_seconds, {idle}::int) AS idle_seconds,"
            " w.sla_business_hours::text AS business_hours"
            " FROM workspaces w LEFT JOIN availability_settings s ON s.workspace_id = w.id WHERE w.id = $1")


async def members_availability(q: Database | UnitOfWork, workspace_id: int, member_ids: list[int] | None,
                               default_idle: int) -> list[Record]:
    """One row per member of the workspace (only `member_ids`, when given), each with the workspace's idle time,
    business hours and PostgreSQL's time now; one row with a NULL member_id when no member matches."""
    return await q.fetch(
        f"SELECT ctx.now, ctx.idle_seconds, ctx.business_hours, m.id AS member_id, m.status AS member_status,"
        f" coalesce(a.status, 'online') AS chosen, a.chosen_at, a.after_hours_until, a.seen_at"
        f" FROM ({_CONTEXT.format(idle='$3')}) ctx"
        f" LEFT JOIN members m ON m.workspace_id = $1 AND ($2::bigint[] IS NULL OR m.id = ANY($2::bigint[]))"
        f" LEFT JOIN member_availability a ON a.member_id = m.id"
        f" ORDER BY m.id", workspace_id, member_ids, default_idle)


async def workspace_context(q: Database | UnitOfWork, workspace_id: int, default_idle: int) -> Record | None:
    """PostgreSQL's time now, the workspace's idle time and its business hours (JSON text, or NULL)."""
    return await q.fetchrow(_CONTEXT.format(idle="$2"), workspace_id, default_idle)


async def choose(tx: UnitOfWork, workspace_id: int, member_id: int, status: str,
                 after_hours_until: datetime | None) -> None:
    """The member's chosen status, chosen now; choosing counts as being seen."""
    await tx.execute(
        "INSERT INTO member_availability (member_id, workspace_id, status, chosen_at, after_hours_until, seen_at)"
        " VALUES ($2, $1, $3, now(), $4, now())"
        " ON CONFLICT (member_id) DO UPDATE SET status = excluded.status, chosen_at = excluded.chosen_at,"
        " after_hours_until = excluded.after_hours_until, seen_at = excluded.seen_at",
        workspace_id, member_id, status, after_hours_until)


async def seen(db: Database, workspace_id: int, member_id: int, default_idle: int) -> int:
    """A page of the member's is open now: their seen time moves to now (never back). The workspace's idle time."""
    return await db.fetchval(
        "WITH seen AS (INSERT INTO member_availability (member_id, workspace_id, seen_at) VALUES ($2, $1, now())"
        " ON CONFLICT (member_id) DO UPDATE SET seen_at = greatest(member_availability.seen_at, excluded.seen_at))"
        " SELECT coalesce((SELECT idle_seconds FROM availability_settings WHERE workspace_id = $1), $3)",
        workspace_id, member_id, default_idle)


async def settings(q: Database | UnitOfWork, workspace_id: int) -> Record | None:
    """The workspace's saved settings (None: the defaults), with who saved them."""
    return await q.fetchrow(
        "SELECT s.idle_seconds, s.updated_at, s.updated_by, m.name AS updated_by_name FROM availability_settings s"
        " LEFT JOIN members m ON m.id = s.updated_by WHERE s.workspace_id = $1", workspace_id)


async def save_settings(tx: UnitOfWork, workspace_id: int, idle_seconds: int, member_id: int | None) -> None:
    await tx.execute(
        "INSERT INTO availability_settings (workspace_id, idle_seconds, updated_by, updated_at)"
        " VALUES ($1, $2, $3, now()) ON CONFLICT (workspace_id) DO UPDATE SET idle_seconds = excluded.idle_seconds,"
        " updated_by = excluded.updated_by, updated_at = excluded.updated_at", workspace_id, idle_seconds, member_id)
