"""What each member has read of each chat (`member_chat_reads`): written when a member opens a chat or marks it read,
in the transaction that records it; read by the agent inbox's lists and chat (`reporting/inbox_views.py`)."""

from __future__ import annotations

from datetime import datetime

from persistence.database import UnitOfWork

# What a member has read of chat `c`: what they read there, or what everyone had read when per-member reading
# began (`r` is the member's row of member_chat_reads, if any). The chat is unread for them when its newest
# customer message is newer (no walk of its messages: a list counts this for every chat); how many are unread is
# counted from the index of customer messages, up to UNREAD_CAP (a badge says "99+" beyond).
UNREAD_CAP = 100
READ_THROUGH = "greatest(c.read_by_everyone_through, coalesce(r.read_through_message_id, 0))"
ANY_UNREAD = f"coalesce(c.last_customer_message_id, 0) > {READ_THROUGH}"
UNREAD = f"""(CASE WHEN {ANY_UNREAD} THEN (SELECT count(*) FROM (SELECT 1 FROM messages u
                WHERE u.conversation_id = c.id AND u.sender_type = 'customer' AND u.id > {READ_THROUGH}
                LIMIT {UNREAD_CAP}) unread) ELSE 0 END)"""


async def mark_read(tx: UnitOfWork, conversation_id: int, member_id: int, at: datetime) -> None:
    """The member has read every message of the chat stored so far (stored order, not timestamps)."""
    await tx.execute(
        "INSERT INTO member_chat_reads (conversation_id, member_id, read_through_message_id, read_at)"
        " VALUES ($1, $2, (SELECT coalesce(max(id), 0) FROM messages WHERE conversation_id = $1), $3)"
        " ON CONFLICT (conversation_id, member_id) DO UPDATE"
        " SET read_through_message_id = greatest(member_chat_reads.read_through_message_id,"
        " excluded.read_through_message_id), read_at = excluded.read_at",
        conversation_id, member_id, at)
