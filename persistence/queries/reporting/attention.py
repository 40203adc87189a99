"""Who looked at a chat (views, seen-by) and who held it (assignment history)."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record

# Opens in the inbox or the embedded panel; a key marking a chat read is not a person looking.
_PERSON_LOOKING = "v.via IN ('inbox', 'panel')"


async def views(db: Database, conversation_id: int, after: tuple[datetime, int] | None,
                limit: int) -> list[Record]:
    return await db.fetch(
        f"""SELECT v.id, v.member_id, mb.name AS member_name, v.opened_at, v.marked_read
            FROM conversation_views v LEFT JOIN members mb ON mb.id = v.member_id
            WHERE v.conversation_id = $1 AND {_PERSON_LOOKING}
              AND ($2::timestamptz IS NULL OR (v.opened_at, v.id) < ($2, $3))
            ORDER BY v.opened_at DESC, v.id DESC LIMIT $4""",
        conversation_id, after[0] if after else None, after[1] if after else 0, limit,
    )


async def seen_by(db: Database, conversation_id: int) -> list[Record]:
    """Per member who opened the chat: first and last open, opens, and the customer messages stored after
    the newest message their opens had seen."""
    return await db.fetch(
        f"""SELECT seen.*, (SELECT count(*) FROM messages cm
                            WHERE cm.conversation_id = $1 AND cm.sender_type = 'customer'
                              AND cm.id > seen.seen_through) AS unseen_customer_messages
            FROM (SELECT v.member_id, mb.name AS member_name, min(v.opened_at) AS first_opened_at,
                         max(v.opened_at) AS last_opened_at, count(*) AS opens,
                         coalesce(max(v.seen_through_message_id), 0) AS seen_through
                  FROM conversation_views v LEFT JOIN members mb ON mb.id = v.member_id
                  WHERE v.conversation_id = $1 AND {_PERSON_LOOKING} AND v.member_id IS NOT NULL
                  GROUP BY v.member_id, mb.name) seen
            ORDER BY seen.last_opened_at DESC, seen.member_id""",
        conversation_id,
    )


async def assignment_history(db: Database, conversation_id: int) -> list[Record]:
    """Every assignment event of the chat, newest first."""
    return await db.fetch(
        """SELECT e.event, e.at, e.from_member, fm.name AS from_name, e.to_member, tm.name AS to_name,
                  e.by_member, bm.name AS by_name, e.reason, e.source
           FROM assignment_events e
           LEFT JOIN members fm ON fm.id = e.from_member
           LEFT JOIN members tm ON tm.id = e.to_member
           LEFT JOIN members bm ON bm.id = e.by_member
           WHERE e.conversation_id = $1
           ORDER BY e.at DESC, e.id DESC""",
        conversation_id,
    )
