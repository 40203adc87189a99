"""Erasing a customer: their chat (messages, receipts, views, members' reads, assignment history, SLA breaches,
satisfaction surveys with their ratings and comments) and their contact.

Records that must outlive the chat lose the link instead of the row: a credit ledger entry keeps its amount, an
Idempotency-Key keeps the answer it gave; team audit entries about the chat lose the phone; a broadcast keeps the
recipient's place in its counts, without the number (one not sent yet is skipped as erased).
"""

from __future__ import annotations

from persistence.database import Record, UnitOfWork
from persistence.queries.broadcasts import erase_recipient

ERASED_SUBJECT = "erased"


async def erase_chat(tx: UnitOfWork, workspace_id: int, phone: str) -> int | None:
    """Delete the chat with `phone` and everything of it; how many messages went (None: there was no chat, nor
    a first send to the number still without one)."""
    chat_id = await tx.fetchval("SELECT id FROM conversations WHERE workspace_id = $1 AND phone = $2 FOR UPDATE",
                                workspace_id, phone)
    message_ids = [row["id"] for row in await tx.fetch(
        "SELECT id FROM messages WHERE conversation_id = $1"
        " OR (workspace_id = $2 AND conversation_id IS NULL AND recipient = $3) FOR UPDATE", chat_id, workspace_id,
        phone)]
    await erase_recipient(tx, workspace_id, phone)
    if chat_id is None and not message_ids:
        return None
    await tx.execute("UPDATE credit_ledger SET message_id = NULL WHERE message_id = ANY($1::bigint[])", message_ids)
    await tx.execute("UPDATE idempotent_requests SET message_id = NULL WHERE message_id = ANY($1::bigint[])",
                     message_ids)
    await tx.execute("DELETE FROM receipts WHERE message_id = ANY($1::bigint[])", message_ids)
    # Messages before their chat (they reference it); a chat's last_message_id is no foreign key.
    await tx.execute("DELETE FROM messages WHERE id = ANY($1::bigint[])", message_ids)
    if chat_id is not None:
        for table in ("conversation_views", "assignment_events", "sla_breaches", "member_chat_reads",
                      "csat_surveys"):
            await tx.execute(f"DELETE FROM {table} WHERE conversation_id = $1", chat_id)
        await tx.execute("DELETE FROM conversations WHERE id = $1", chat_id)
    await tx.execute("UPDATE team_audit SET subject = $3 WHERE workspace_id = $1 AND subject = $2",
                     workspace_id, phone, ERASED_SUBJECT)
    return len(message_ids)


async def erase_contact(tx: UnitOfWork, workspace_id: int, phone: str) -> Record | None:
    """Delete the contact, unless a chat with the number exists (a customer's message made one meanwhile); the row
    deleted, or None."""
    return await tx.fetchrow(
        "DELETE FROM contacts k WHERE k.workspace_id = $1 AND k.phone = $2"
        " AND NOT EXISTS (SELECT 1 FROM conversations c WHERE c.workspace_id = $1 AND c.phone = $2) RETURNING k.id",
        workspace_id, phone)
