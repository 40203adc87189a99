"""Messages of a chat, their delivery receipts."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record, UnitOfWork

_MESSAGE_COLUMNS = (
    "workspace_id", "conversation_id", "platform_message_id", "direction", "sender_type", "actor_id",
    "sender_label", "type", "text", "template_name", "template_language", "template_parameters", "media_url",
    "filename", "status", "source", "error_code", "error_text", "answers_message_id", "waited_from", "sent_at", "status_at",
)


async def insert_message(tx: UnitOfWork, **values) -> Record:
    names = [name for name in _MESSAGE_COLUMNS if name in values]
    unknown = set(values) - set(_MESSAGE_COLUMNS)
    if unknown:
        raise ValueError(f"unknown message columns: {sorted(unknown)}")
    placeholders = ", ".join(f"${i}" for i in range(1, len(names) + 1))
    return await tx.fetchrow(
        f"INSERT INTO messages ({', '.join(names)}) VALUES ({placeholders}) RETURNING *",
        *(values[name] for name in names),
    )


async def find_by_platform_id(q: Database | UnitOfWork, workspace_id: int, platform_message_id: str) -> Record | None:
    return await q.fetchrow("SELECT * FROM messages WHERE workspace_id = $1 AND platform_message_id = $2",
                            workspace_id, platform_message_id)


async def conversation_phones(q: Database | UnitOfWork, workspace_id: int,
                              platform_message_ids: list[str]) -> dict[str, str]:
    """platform message id -> the phone of the chat it belongs to, for the ids that are ours."""
    if not platform_message_ids:
        return {}
    rows = await q.fetch(
        "SELECT m.platform_message_id, c.phone FROM messages m JOIN conversations c ON c.id = m.conversation_id"
        " WHERE m.workspace_id = $1 AND m.platform_message_id = ANY($2::text[])",
        workspace_id, platform_message_ids)
    return {row["platform_message_id"]: row["phone"] for row in rows}


async def set_status(tx: UnitOfWork, message_id: int, status: str, at: datetime, *, error_code: int | None = None,
                     error_text: str | None = None) -> Record:
    return await tx.fetchrow(
        "UPDATE messages SET status = $2, status_at = $3, error_code = coalesce($4, error_code),"
        " error_text = coalesce($5, error_text) WHERE id = $1 RETURNING *",
        message_id, status, at, error_code, error_text,
    )


async def add_receipt(tx: UnitOfWork, message_id: int, status: str, at: datetime) -> bool:
    """Record one receipt; False if that status was already recorded (a platform retry)."""
    inserted = await tx.fetchval(
        "INSERT INTO receipts (message_id, status, at) VALUES ($1, $2, $3)"
        " ON CONFLICT (message_id, status) DO NOTHING RETURNING 1",
        message_id, status, at,
    )
    return bool(inserted)


async def latest_customer_message(q: Database | UnitOfWork, conversation_id: int) -> Record | None:
    """The customer's last word: by the platform's timestamps, which all customer messages share (a late
    redelivery of an older message is not the last word), then by the order stored."""
    return await q.fetchrow(
        "SELECT * FROM messages WHERE conversation_id = $1 AND sender_type = 'customer'"
        " ORDER BY sent_at DESC, id DESC LIMIT 1",
        conversation_id,
    )
