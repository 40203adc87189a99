"""The team's performance over a window, per member, in one statement."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record

# A reply is an agent's outbound message whose outcome is known and not a failure (as the Reporting API counts).
_REPLY = "m.direction = 'outbound' AND m.sender_type = 'agent' AND m.status NOT IN ('failed', 'pending')"

_PERFORMANCE = f"""
WITH assignments AS (
    SELECT e.event, e.to_member, e.by_member FROM assignment_events e
    JOIN conversations c ON c.id = e.conversation_id
    WHERE c.workspace_id = $1 AND e.at >= $2 AND e.at < $3
), received AS (
    SELECT to_member AS member_id, count(*) FILTER (WHERE event = 'claimed') AS claimed,
           count(*) FILTER (WHERE event = 'transferred') AS transferred_in
    FROM assignments WHERE to_member IS NOT NULL GROUP BY to_member
), resolved AS (
    SELECT by_member AS member_id, count(*) AS resolved FROM assignments
    WHERE event = 'resolved' AND by_member IS NOT NULL GROUP BY by_member
), replies AS (
    SELECT m.actor_id AS member_id, count(*) AS replies FROM messages m
    WHERE m.workspace_id = $1 AND {_REPLY} AND m.sent_at >= $2 AND m.sent_at < $3 AND m.actor_id IS NOT NULL
    GROUP BY m.actor_id
), first_replies AS (
    -- The first reply to each wait for a person (no earlier reply answered the same wait), sent in the window.
    SELECT m.actor_id AS member_id, extract(epoch FROM m.sent_at - m.waited_from) AS seconds FROM messages m
    WHERE m.workspace_id = $1 AND {_REPLY} AND m.sent_at >= $2 AND m.sent_at < $3 AND m.waited_from IS NOT NULL
      AND m.actor_id IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM messages p WHERE p.conversation_id = m.conversation_id
                      AND p.direction = 'outbound' AND p.sender_type = 'agent'
                      AND p.status NOT IN ('failed', 'pending')
                      AND p.waited_from = m.waited_from AND (p.sent_at, p.id) < (m.sent_at, m.id))
), first_response AS (
    SELECT member_id, count(*) AS responses,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) AS median_seconds,
           percentile_cont(0.9) WITHIN GROUP (ORDER BY seconds) AS p90_seconds
    FROM first_replies GROUP BY member_id
), breaches AS (
    SELECT assigned_to AS member_id, count(*) AS breaches FROM sla_breaches
    WHERE workspace_id = $1 AND at >= $2 AND at < $3 GROUP BY assigned_to
)
SELECT mem.id, mem.name, mem.role, mem.status,
       coalesce(rc.claimed, 0) AS claimed, coalesce(rc.transferred_in, 0) AS transferred_in,
       coalesce(rs.resolved, 0) AS resolved, coalesce(rp.replies, 0) AS replies,
       coalesce(fr.responses, 0) AS responses, fr.median_seconds, fr.p90_seconds,
       coalesce(br.breaches, 0) AS breaches,
       (SELECT breaches FROM breaches WHERE member_id IS NULL) AS unassigned_breaches
FROM members mem
LEFT JOIN received rc ON rc.member_id = mem.id
LEFT JOIN resolved rs ON rs.member_id = mem.id
LEFT JOIN replies rp ON rp.member_id = mem.id
LEFT JOIN first_response fr ON fr.member_id = mem.id
LEFT JOIN breaches br ON br.member_id = mem.id
WHERE mem.workspace_id = $1
  AND (mem.status <> 'removed' OR rc.member_id IS NOT NULL OR rs.member_id IS NOT NULL OR rp.member_id IS NOT NULL
       OR br.member_id IS NOT NULL)
ORDER BY mem.id
"""


async def team_performance(db: Database, workspace_id: int, start: datetime, end: datetime) -> list[Record]:
    """Per member (current ones, and removed ones with activity in the window): chats claimed and transferred to
    them, chats they resolved, replies, first responses to a wait for a person (count, median, p90 seconds) and SLA
    breaches of chats assigned to them; each row also carries the breaches of unassigned chats."""
    return await db.fetch(_PERFORMANCE, workspace_id, start, end)
