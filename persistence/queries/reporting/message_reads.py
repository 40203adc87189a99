"""A chat's thread and receipts, replies (per chat and across the workspace), outbound messages by status."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record
from persistence.queries import chat_visibility
from persistence.queries.reporting.statement import Statement

# Receipts of one message in the order they happen (a tie in time keeps the delivery order).
_RECEIPTS = """
(SELECT coalesce(array_agg(r.status ORDER BY r.at, array_position(ARRAY['sent','delivered','read','failed'],
                                                                   r.status)), '{}')
 FROM receipts r WHERE r.message_id = m.id) AS receipt_statuses,
(SELECT coalesce(array_agg(r.at ORDER BY r.at, array_position(ARRAY['sent','delivered','read','failed'],
                                                              r.status)), '{}')
 FROM receipts r WHERE r.message_id = m.id) AS receipt_times
"""


def _chat_messages(conversation_id: int, start: datetime | None, end: datetime | None, *,
                   outbound_only: bool) -> Statement:
    """One chat's messages, inside the window's bounds that are given."""
    q = Statement()
    q.where(f"m.conversation_id = {q.arg(conversation_id)}")
    if outbound_only:
        q.where("m.direction = 'outbound'")
    if start is not None:
        q.where(f"m.sent_at >= {q.arg(start)}")
    if end is not None:
        q.where(f"m.sent_at <= {q.arg(end)}")
    return q


def _workspace_outbound(workspace_id: int, start: datetime, end: datetime, restricted_to: int | None,
                        after: tuple[datetime, int] | None) -> Statement:
    """The workspace's outbound messages in the window, after a newest-first cursor (`c` is the chat)."""
    q = Statement()
    q.where(f"m.workspace_id = {q.arg(workspace_id)}")
    q.where("m.direction = 'outbound'")
    q.where(f"m.sent_at BETWEEN {q.arg(start)} AND {q.arg(end)}")
    if restricted_to is not None:
        q.where(chat_visibility.visible("c", q.arg(restricted_to)))
    if after is not None:
        q.where(f"(m.sent_at, m.id) < ({q.arg(after[0])}, {q.arg(after[1])})")
    return q


async def thread(db: Database, conversation_id: int, *, start: datetime | None, end: datetime | None,
                 descending: bool, after: tuple[datetime, int] | None, limit: int,
                 with_receipts: bool) -> list[Record]:
    q = _chat_messages(conversation_id, start, end, outbound_only=False)
    if after is not None:
        q.where(f"(m.sent_at, m.id) {'<' if descending else '>'} ({q.arg(after[0])}, {q.arg(after[1])})")
    order = "DESC" if descending else "ASC"
    receipts = f", {_RECEIPTS}" if with_receipts else ""
    return await db.fetch(
        f"""SELECT {_THREAD_COLUMNS} {receipts}
            FROM messages m LEFT JOIN members a ON a.id = m.actor_id
            WHERE {q.clause()}
            ORDER BY m.sent_at {order}, m.id {order} LIMIT {q.arg(limit)}""",
        *q.args,
    )


_THREAD_COLUMNS = """m.id, m.platform_message_id, m.sent_at, m.sender_type, m.direction, m.actor_id,
                   a.name AS actor_name, m.sender_label, m.type, m.text, m.template_name, m.media_url, m.status,
                   m.source, m.media_id, m.mime_type, m.filename"""


async def thread_message(db: Database, conversation_id: int, message_id: int) -> Record | None:
    """One message of the chat, as the thread shows it."""
    return await db.fetchrow(f"SELECT {_THREAD_COLUMNS} FROM messages m LEFT JOIN members a ON a.id = m.actor_id"
                             " WHERE m.id = $1 AND m.conversation_id = $2", message_id, conversation_id)


async def failures(db: Database, conversation_id: int, message_ids: list[int]) -> list[Record]:
    """The platform's error of each failed message among `message_ids`: id, error_code, error_text."""
    return await db.fetch(
        "SELECT id, error_code, error_text FROM messages WHERE conversation_id = $1 AND id = ANY($2::bigint[])"
        " AND status = 'failed'", conversation_id, message_ids)


async def receipts(db: Database, conversation_id: int, *, start: datetime | None, end: datetime | None,
                   limit: int) -> list[Record]:
    """Outbound messages, most recent first, each with its receipts."""
    q = _chat_messages(conversation_id, start, end, outbound_only=True)
    return await db.fetch(
        f"""SELECT m.platform_message_id, m.sent_at, m.sender_type, m.status, {_RECEIPTS}
            FROM messages m WHERE {q.clause()}
            ORDER BY m.sent_at DESC, m.id DESC LIMIT {q.arg(limit)}""",
        *q.args,
    )


_REPLY_COLUMNS = """
m.id, m.platform_message_id, m.sent_at, m.sender_type, m.actor_id, a.name AS actor_name, m.sender_label,
m.status, m.waited_from
"""


async def chat_replies(db: Database, conversation_id: int, *, start: datetime | None,
                       end: datetime | None) -> list[Record]:
    """Every outbound message of the chat in the window, oldest first, with the customer message each answers."""
    q = _chat_messages(conversation_id, start, end, outbound_only=True)
    return await db.fetch(
        f"""SELECT {_REPLY_COLUMNS}, answered.platform_message_id AS answers_message_id
            FROM messages m
            LEFT JOIN members a ON a.id = m.actor_id
            LEFT JOIN messages answered ON answered.id = m.answers_message_id
            WHERE {q.clause()}
            ORDER BY m.sent_at, m.id""",
        *q.args,
    )


async def message_media(db: Database, conversation_id: int, message_id: int) -> Record | None:
    """The platform's media id, mime type and file name of one of the chat's messages."""
    return await db.fetchrow(
        "SELECT media_id, mime_type, filename FROM messages WHERE id = $1 AND conversation_id = $2",
        message_id, conversation_id)


async def first_customer_message_at(db: Database, conversation_id: int, start: datetime | None,
                                    end: datetime | None) -> datetime | None:
    return await db.fetchval(
        "SELECT min(sent_at) FROM messages WHERE conversation_id = $1 AND sender_type = 'customer'"
        " AND ($2::timestamptz IS NULL OR sent_at >= $2) AND ($3::timestamptz IS NULL OR sent_at <= $3)",
        conversation_id, start, end,
    )


async def workspace_replies(db: Database, workspace_id: int, *, start: datetime, end: datetime,
                            agent_id: int | None, sender_type: str | None, phone: str | None,
                            restricted_to: int | None, after: tuple[datetime, int] | None,
                            limit: int) -> list[Record]:
    """Outbound messages across the workspace, newest first (the outbound index, walked backwards)."""
    q = _workspace_outbound(workspace_id, start, end, restricted_to, after)
    if agent_id is not None:
        q.where(f"m.actor_id = {q.arg(agent_id)}")
    if sender_type is not None:
        q.where(f"m.sender_type = {q.arg(sender_type)}")
    if phone is not None:
        q.where(f"c.phone = {q.arg(phone)}")
    return await db.fetch(
        f"""SELECT {_REPLY_COLUMNS}, c.phone
            FROM messages m
            JOIN conversations c ON c.id = m.conversation_id
            LEFT JOIN members a ON a.id = m.actor_id
            WHERE {q.clause()}
            ORDER BY m.sent_at DESC, m.id DESC LIMIT {q.arg(limit)}""",
        *q.args,
    )


async def outbound_in_status(db: Database, workspace_id: int, *, status: str, start: datetime, end: datetime,
                             restricted_to: int | None, after: tuple[datetime, int] | None,
                             limit: int) -> list[Record]:
    """Outbound messages whose current status is `status`, newest first."""
    q = _workspace_outbound(workspace_id, start, end, restricted_to, after)
    q.where(f"m.status = {q.arg(status)}")
    return await db.fetch(
        f"""SELECT m.id, m.platform_message_id, c.phone, m.sent_at, m.status, m.status_at, m.sender_type,
                   m.actor_id, a.name AS actor_name, m.sender_label, m.type, left(m.text, 200) AS text,
                   m.template_name, m.error_code, m.error_text
            FROM messages m
            JOIN conversations c ON c.id = m.conversation_id
            LEFT JOIN members a ON a.id = m.actor_id
            WHERE {q.clause()}
            ORDER BY m.sent_at DESC, m.id DESC LIMIT {q.arg(limit)}""",
        *q.args,
    )
