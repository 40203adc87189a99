"""Chats imported from a web-client session: the contact (if new), the conversation and its messages, in one
transaction."""

from __future__ import annotations

from datetime import datetime

from persistence.database import UnitOfWork

WEB_CLIENT = "web_client"


async def chat_exists(tx: UnitOfWork, workspace_id: int, phone: str) -> bool:
    return bool(await tx.fetchval("SELECT 1 FROM conversations WHERE workspace_id = $1 AND phone = $2",
                                  workspace_id, phone))


async def insert_chat(tx: UnitOfWork, *, workspace_id: int, phone: str, name: str,
                      messages: list[tuple[datetime, str, str, int | None]]) -> int:
    """The chat with its (at, sender_type, text, agent member id) messages, oldest first, as history: resolved at
    its last message, nobody waiting, nothing unread. Its id."""
    contact_id = await tx.fetchval(
        "WITH made AS (INSERT INTO contacts (workspace_id, phone, name) VALUES ($1, $2, $3)"
        "  ON CONFLICT (workspace_id, phone) DO NOTHING RETURNING id)"
        " SELECT id FROM made UNION ALL SELECT id FROM contacts WHERE workspace_id = $1 AND phone = $2 LIMIT 1",
        workspace_id, phone, name)
    first, last = messages[0][0], messages[-1][0]
    customer = [at for at, sender, _, _ in messages if sender == "customer"]
    chat_id = await tx.fetchval(
        "INSERT INTO conversations (workspace_id, phone, contact_id, channel, resolved_at, last_customer_message_at,"
        " count_messages, count_from_customer, count_from_bot, last_activity_at, created_at, updated_at)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $5, $10, $5) RETURNING id",
        workspace_id, phone, contact_id, WEB_CLIENT, last, max(customer) if customer else None, len(messages),
        len(customer), sum(1 for _, sender, _, _ in messages if sender == "bot"), first)
    ids = await tx.fetch(
        "INSERT INTO messages (workspace_id, conversation_id, direction, sender_type, actor_id, type, text, status,"
        " source, sent_at, status_at, opens_wait)"
        " SELECT $1, $2, CASE WHEN m.sender = 'customer' THEN 'inbound' ELSE 'outbound' END, m.sender, m.actor,"
        "  'text', m.text, CASE WHEN m.sender = 'customer' THEN 'received' ELSE 'delivered' END, $3, m.at, m.at,"
        # A customer's message opens a conversation when it begins the chat or follows the business's (the reports).
        "  m.sender = 'customer' AND coalesce(lag(m.sender) OVER (ORDER BY m.n), '') <> 'customer'"
        " FROM unnest($4::timestamptz[], $5::text[], $6::text[], $7::bigint[]) WITH ORDINALITY"
        "  AS m(at, sender, text, actor, n) ORDER BY m.n RETURNING id",
        workspace_id, chat_id, WEB_CLIENT, [m[0] for m in messages], [m[1] for m in messages],
        [m[2] for m in messages], [m[3] for m in messages])
    # History: read by every member (`read_by_everyone_through`), as nothing of it is unread.
    said = [row["id"] for row, message in zip(ids, messages) if message[1] == "customer"]
    await tx.execute("UPDATE conversations SET last_message_id = $2, read_by_everyone_through = $2,"
                     " last_customer_message_id = $3 WHERE id = $1", chat_id, ids[-1]["id"], max(said, default=None))
    return chat_id
