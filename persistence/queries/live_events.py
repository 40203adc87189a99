"""The workspace's own event stream, for the agent inbox's live pages: the outbox's rows, read by id.

The outbox holds every event the workspace's changes emit, delivered to a webhook or not (rows of connector
hooks and test deliveries are copies, left out), and keeps them 30 days once finished; its ids are the stream's
positions.
"""

from __future__ import annotations

from persistence.database import Database, Record
from persistence.queries import chat_visibility


async def newest_event_id(db: Database) -> int:
    """The newest outbox id of any workspace: a stream that starts now starts after it."""
    return await db.fetchval("SELECT coalesce(max(id), 0) FROM webhook_outbox")


async def chat_events_after(db: Database, workspace_id: int, after_id: int, events: list[str],
                            restricted_to: int | None, limit: int, member_id: int | None = None) -> list[Record]:
    """The workspace's chat events with an id above `after_id`, oldest first: id, event, the chat's phone, and for
    an assignment (`conversation_assigned`) what it was (claimed, released, transferred), to whom, by whom and why;
    for a note's `chat_changed`, the note if it mentions `member_id` (`mentioned_note`), by whom.
    For a member limited to assigned chats, only events of chats they may see now (chat_visibility.py), and the
    assignments that took a chat out of their sight."""
    return await db.fetch(
        "SELECT o.id, o.event, o.data ->> 'phone' AS phone,"
        " CASE WHEN o.event = 'conversation_assigned' THEN o.data ->> 'event' END AS assignment,"
        " (o.data -> 'to' ->> 'user_id')::bigint AS to_member, (o.data -> 'by' ->> 'user_id')::bigint AS by_member,"
        " o.data -> 'by' ->> 'name' AS by_name, o.data ->> 'reason' AS reason,"
        " CASE WHEN o.event = 'chat_changed' AND o.data -> 'mentioned' @> to_jsonb($6::bigint)"
        "      THEN (o.data ->> 'note')::bigint END AS mentioned_note FROM webhook_outbox o"
        " WHERE o.id > $2 AND o.workspace_id = $1 AND o.hook_id IS NULL AND NOT o.test AND o.event = ANY($3::text[])"
        "   AND ($4::bigint IS NULL OR EXISTS (SELECT 1 FROM conversations c WHERE c.workspace_id = $1"
        "        AND c.phone = o.data ->> 'phone' AND (" + chat_visibility.visible("c", "$4")
        + "             OR (o.event IN ('conversation_assigned', 'conversation_resolved')"
        "                 AND " + chat_visibility.just_left_sight("c", "$4", "o.data") + "))))"
        " ORDER BY o.id LIMIT $5",
        workspace_id, after_id, events, restricted_to, limit, member_id)
