"""The agent inbox's reads beside the chat lists (`conversations.py`) it shows: for each view, how many of its chats
have messages the member has not read, in one pass over the workspace's chats; and for the chats of a page, the
member's unread messages and the body of a template sent last."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record
from persistence.queries import chat_visibility
from persistence.queries.member_reads import ANY_UNREAD, UNREAD
from persistence.queries.reporting.conversations import RESOLVED

_QUEUED = "c.state = 'HANDOFF_PENDING' AND NOT c.snoozed"
# The open views leave snoozed chats out until they wake (the Snoozed view lists them).
_OPEN = f"NOT {RESOLVED} AND NOT c.snoozed"


async def view_counts(db: Database, workspace_id: int, member_id: int, restricted_to: int | None,
                      active_since: datetime) -> Record:
    """Chats with messages the member has not read, per view (mine, queue, unassigned, open, snoozed, resolved),
    and the queue's size. `active_since`: the views' reach back in time (the queue has none: a queued chat waits
    whatever its age). One pass: the chat's newest customer message against the member's reads."""
    return await db.fetchrow(f"""
    SELECT count(*) FILTER (WHERE yours AND c.assigned_to = $2 AND NOT c.snoozed AND recent) AS mine,
           count(*) FILTER (WHERE yours AND {_QUEUED}) AS queue,
           count(*) FILTER (WHERE yours AND c.assigned_to IS NULL AND {_OPEN} AND recent) AS unassigned,
           count(*) FILTER (WHERE yours AND {_OPEN} AND recent) AS open,
           count(*) FILTER (WHERE yours AND c.snoozed AND recent) AS snoozed,
           count(*) FILTER (WHERE yours AND {RESOLVED} AND recent) AS resolved,
           count(*) FILTER (WHERE {_QUEUED}) AS queue_total
    FROM conversations c
    LEFT JOIN member_chat_reads r ON r.conversation_id = c.id AND r.member_id = $2
    CROSS JOIN LATERAL (SELECT c.last_activity_at >= $4 AS recent) rc
    CROSS JOIN LATERAL (SELECT {ANY_UNREAD} AS yours) y
    WHERE c.workspace_id = $1 AND {chat_visibility.visible("c", "$3")}
    """, workspace_id, member_id, restricted_to, active_since)


async def listed_chats(db: Database, workspace_id: int, member_id: int, phones: list[str]) -> list[Record]:
    """For each of these chats: `unread`, the member's unread messages (up to `member_reads.UNREAD_CAP`), and when
    its last message is a template, that template's body as stored now and the message's values
    (`template_body`, `template_parameters`; NULL otherwise, or for a template since removed)."""
    return await db.fetch(f"""
    SELECT c.phone, {UNREAD} AS unread, t.body AS template_body, lm.template_parameters
    FROM conversations c
    LEFT JOIN member_chat_reads r ON r.conversation_id = c.id AND r.member_id = $2
    LEFT JOIN messages lm ON lm.id = c.last_message_id AND lm.template_name IS NOT NULL AND lm.text IS NULL
    LEFT JOIN templates t ON t.workspace_id = c.workspace_id AND t.name = lm.template_name
                         AND t.language = lm.template_language
    WHERE c.workspace_id = $1 AND c.phone = ANY($3::text[])
    """, workspace_id, member_id, phones)


async def member_unread(db: Database, conversation_id: int, member_id: int) -> int:
    """The member's unread messages in the chat (up to `member_reads.UNREAD_CAP`)."""
    return await db.fetchval(f"""
    SELECT {UNREAD} FROM conversations c
    LEFT JOIN member_chat_reads r ON r.conversation_id = c.id AND r.member_id = $2
    WHERE c.id = $1""", conversation_id, member_id) or 0


async def sent_templates(db: Database, conversation_id: int, message_ids: list[int]) -> list[Record]:
    """The template messages among `message_ids`: `id`, the template's body as stored now and the message's values
    (`template_body`, `template_parameters`); one whose template was since removed is left out."""
    return await db.fetch("""
    SELECT m.id, t.body AS template_body, m.template_parameters
    FROM messages m
    JOIN conversations c ON c.id = m.conversation_id
    JOIN templates t ON t.workspace_id = c.workspace_id AND t.name = m.template_name
                    AND t.language = m.template_language
    WHERE m.conversation_id = $1 AND m.id = ANY($2::bigint[]) AND m.template_name IS NOT NULL AND m.text IS NULL
    """, conversation_id, message_ids)


async def media_ids(db: Database, conversation_id: int, message_ids: list[int]) -> list[Record]:
    """The customer files among `message_ids`: `id` and the platform's `media_id`."""
    return await db.fetch("SELECT id, media_id FROM messages WHERE conversation_id = $1 AND id = ANY($2::bigint[])"
                          " AND media_id IS NOT NULL", conversation_id, message_ids)
