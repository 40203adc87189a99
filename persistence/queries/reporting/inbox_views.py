"""The agent inbox's view counts: for each view, how many of its chats have unread messages, in one pass over the
workspace's chats (the views themselves are chat lists: `conversations.py`)."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record
from persistence.queries.reporting.conversations import RESOLVED

_QUEUED = "c.state = 'HANDOFF_PENDING' AND NOT c.snoozed"


async def view_counts(db: Database, workspace_id: int, member_id: int, only_assigned_to: int | None,
                      active_since: datetime) -> Record:
    """Unread chats per view (mine, queue, unassigned, open, resolved) and the queue's size. `active_since`: the
    views' reach back in time (the queue has none: a queued chat waits whatever its age)."""
    return await db.fetchrow(f"""
    SELECT count(*) FILTER (WHERE c.unread_count > 0 AND c.assigned_to = $2 AND recent) AS mine,
           count(*) FILTER (WHERE c.unread_count > 0 AND {_QUEUED}) AS queue,
           count(*) FILTER (WHERE c.unread_count > 0 AND c.assigned_to IS NULL AND NOT {RESOLVED} AND recent)
               AS unassigned,
           count(*) FILTER (WHERE c.unread_count > 0 AND NOT {RESOLVED} AND recent) AS open,
           count(*) FILTER (WHERE c.unread_count > 0 AND {RESOLVED} AND recent) AS resolved,
           count(*) FILTER (WHERE {_QUEUED}) AS queue_total
    FROM conversations c CROSS JOIN LATERAL (SELECT c.last_activity_at >= $4 AS recent) r
    WHERE c.workspace_id = $1 AND ($3::bigint IS NULL OR c.assigned_to = $3)
    """, workspace_id, member_id, only_assigned_to, active_since)
