"""Automatic assignment's rows: the workspace's settings, the chats waiting for a person, and who could take them
with how much each holds. Counts and times are read in one statement each, with PostgreSQL's clock."""

from __future__ import annotations

from persistence.database import Database, Record, UnitOfWork

AUTO_ASSIGNED = "auto_assigned"
"""The reason every automatic assignment's event carries (its `by` is nobody: the system)."""


async def settings(q: Database | UnitOfWork, workspace_id: int) -> Record | None:
    """The workspace's saved settings (None: never saved, assignment is off), with who saved them."""
    return await q.fetchrow(
        "SELECT s.mode, s.capacity, s.updated_at, s.updated_by, m.name AS updated_by_name FROM assignment_settings s"
        " LEFT JOIN members m ON m.id = s.updated_by WHERE s.workspace_id = $1", workspace_id)


async def save_settings(tx: UnitOfWork, workspace_id: int, mode: str, capacity: int, member_id: int | None) -> None:
    await tx.execute(
        "INSERT INTO assignment_settings (workspace_id, mode, capacity, updated_by, updated_at)"
        " VALUES ($1, $2, $3, $4, now()) ON CONFLICT (workspace_id) DO UPDATE SET mode = excluded.mode,"
        " capacity = excluded.capacity, updated_by = excluded.updated_by, updated_at = excluded.updated_at",
        workspace_id, mode, capacity, member_id)


async def waiting_chats(db: Database, workspace_id: int, limit: int) -> list[Record]:
    """Chats waiting for a person and held by nobody (not snoozed), longest waiting first (the hand-off queue's
    order and index), each with the team it was routed to (`routed_team`) and that team if it still exists
    (`team_id`; NULL: no team, or the team was deleted and it waits in the workspace's queue)."""
    return await db.fetch(
        "SELECT c.phone, c.team_id AS routed_team, t.id AS team_id"
        " FROM conversations c LEFT JOIN teams t ON t.id = c.team_id"
        " WHERE c.workspace_id = $1 AND c.state = 'HANDOFF_PENDING' AND c.assigned_to IS NULL AND NOT c.snoozed"
        " ORDER BY coalesce(c.waiting_for_person_since, c.handover_at), c.id LIMIT $2", workspace_id, limit)


async def takers(db: Database, workspace_id: int) -> list[Record]:
    """Every active member who works chats (holds `inbox` or `all`), oldest first: the open chats they hold, when
    they were last given one automatically (NULL: never), and their teams."""
    return await db.fetch(
        "SELECT m.id AS member_id,"
        " (SELECT count(*) FROM conversations c WHERE c.workspace_id = $1 AND c.assigned_to = m.id"
        "  AND c.state = 'HUMAN_ACTIVE') AS open_chats,"
        " (SELECT max(e.at) FROM assignment_events e WHERE e.to_member = m.id"
        f"  AND e.reason = '{AUTO_ASSIGNED}') AS last_given_at,"
        " coalesce((SELECT array_agg(tm.team_id) FROM team_members tm WHERE tm.member_id = m.id), '{}') AS teams"
        " FROM members m WHERE m.workspace_id = $1 AND m.status = 'active'"
        " AND ('all' = ANY(m.permissions) OR 'inbox' = ANY(m.permissions)) ORDER BY m.id",
        workspace_id)


async def workspaces_waiting(db: Database) -> list[int]:
    """Workspaces with automatic assignment on and chats waiting for a person that nobody holds."""
    rows = await db.fetch(
        "SELECT s.workspace_id FROM assignment_settings s WHERE s.mode <> 'off' AND EXISTS (SELECT 1 FROM"
        " conversations c WHERE c.workspace_id = s.workspace_id AND c.state = 'HANDOFF_PENDING'"
        " AND c.assigned_to IS NULL AND NOT c.snoozed)")
    return [row["workspace_id"] for row in rows]
