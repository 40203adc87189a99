"""The bot's settings per workspace, and its trail of hand-offs."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record, UnitOfWork


async def find_settings(db: Database | UnitOfWork, workspace_id: int) -> Record | None:
    return await db.fetchrow(
        "SELECT s.enabled, s.persona, s.handoff_message, s.updated_at, s.updated_by, m.name AS updated_by_name"
        " FROM bot_settings s LEFT JOIN members m ON m.id = s.updated_by WHERE s.workspace_id = $1", workspace_id)


async def save_settings(tx: UnitOfWork, workspace_id: int, *, enabled: bool, persona: str, handoff_message: str,
                        member_id: int | None, at: datetime) -> None:
    await tx.execute(
        "INSERT INTO bot_settings (workspace_id, enabled, persona, handoff_message, updated_at, updated_by)"
        " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (workspace_id) DO UPDATE SET enabled = $2, persona = $3,"
        " handoff_message = $4, updated_at = $5, updated_by = $6",
        workspace_id, enabled, persona, handoff_message, at, member_id)


async def record_handoff(tx: UnitOfWork, workspace_id: int, conversation_id: int, reason: str, at: datetime) -> None:
    await tx.execute("INSERT INTO bot_handoffs (workspace_id, conversation_id, reason, at) VALUES ($1, $2, $3, $4)",
                     workspace_id, conversation_id, reason, at)


async def handoffs(db: Database, workspace_id: int, *, start: datetime, end: datetime,
                   after: tuple[datetime, int] | None, limit: int) -> list[Record]:
    """The window's hand-offs, newest first, after an (at, id) cursor, with the chat's phone."""
    return await db.fetch(
        "SELECT h.id, h.at, h.reason, c.phone FROM bot_handoffs h JOIN conversations c ON c.id = h.conversation_id"
        " WHERE h.workspace_id = $1 AND h.at BETWEEN $2 AND $3"
        " AND ($4::timestamptz IS NULL OR (h.at, h.id) < ($4, $5)) ORDER BY h.at DESC, h.id DESC LIMIT $6",
        workspace_id, start, end, after[0] if after else None, after[1] if after else None, limit)
