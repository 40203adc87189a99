"""A chat's trail: its assignment events (claims, releases, transfers, resolutions) and the team audit log's entries
about it (labels put on and taken off, snoozes begun and ended)."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record


async def trail(db: Database, workspace_id: int, conversation_id: int, phone: str, actions: tuple[str, ...],
                since: datetime | None, limit: int) -> list[Record]:
    """The newest `limit` events at or after `since` (None: all), newest first: `kind` (assignment or audit),
    `action` (the assignment event, or the audit entry's action among `actions`), `at`, who acted (`by_member`,
    `by_name`), and an assignment's `from_*`, `to_*` and `reason`, an audit entry's `details` (JSON text)."""
    return await db.fetch("""
    SELECT * FROM (
        (SELECT 'assignment' AS kind, e.event AS action, e.at, e.id, e.by_member, bm.name AS by_name,
                e.from_member, fm.name AS from_name, e.to_member, tm.name AS to_name, e.reason, NULL AS details
         FROM assignment_events e
         LEFT JOIN members bm ON bm.id = e.by_member
         LEFT JOIN members fm ON fm.id = e.from_member
         LEFT JOIN members tm ON tm.id = e.to_member
         WHERE e.conversation_id = $2 AND ($5::timestamptz IS NULL OR e.at >= $5)
         ORDER BY e.at DESC, e.id DESC LIMIT $6)
        UNION ALL
        (SELECT 'audit', a.action, a.at, a.id, a.member_id, m.name, NULL, NULL, NULL, NULL, NULL, a.details::text
         FROM team_audit a LEFT JOIN members m ON m.id = a.member_id
         WHERE a.workspace_id = $1 AND a.subject = $3 AND a.action = ANY($4::text[])
           AND ($5::timestamptz IS NULL OR a.at >= $5)
         ORDER BY a.at DESC LIMIT $6)
    ) events ORDER BY at DESC, id DESC LIMIT $6
    """, workspace_id, conversation_id, phone, list(actions), since, limit)
