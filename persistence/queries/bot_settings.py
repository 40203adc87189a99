"""The bot's settings per workspace, and its trail of hand-offs."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record, UnitOfWork


async def find_settings(db: Database | UnitOfWork, workspace_id: int) -> Record | None:
    return await db.fetchrow(
        "SELECT s.enabled, s.persona, s.handoff_message, s.system_prompt, s.tone, s.answer_length,"
        " s.customer_language, s.language::text AS language, s.model, s.temperature, s.max_bot_turns,"
        " s.monthly_budget_micros, s.updated_at, s.updated_by, m.name AS updated_by_name"
        " FROM bot_settings s LEFT JOIN members m ON m.id = s.updated_by WHERE s.workspace_id = $1", workspace_id)


# The settings a save writes, in the order of its statement's parameters after the workspace.
SETTINGS_COLUMNS = ("enabled", "persona", "handoff_message", "system_prompt", "tone", "answer_length",
                    "customer_language", "language", "model", "temperature", "max_bot_turns", "monthly_budget_micros")


async def save_settings(tx: UnitOfWork, workspace_id: int, values: dict[str, object], *, member_id: int | None,
                        at: datetime) -> None:
    """Save every setting (`values` names each of SETTINGS_COLUMNS). A new language re-stems the workspace's
    knowledge: the passages' and FAQ answers' search columns follow their `language`."""
    columns = ", ".join(SETTINGS_COLUMNS)
    places = ", ".join(f"${n}" for n in range(2, len(SETTINGS_COLUMNS) + 2))
    updates = ", ".join(f"{name} = EXCLUDED.{name}" for name in SETTINGS_COLUMNS)
    last = len(SETTINGS_COLUMNS) + 1
    await tx.execute(
        f"INSERT INTO bot_settings (workspace_id, {columns}, updated_at, updated_by) VALUES ($1, {places},"
        f" ${last + 1}, ${last + 2}) ON CONFLICT (workspace_id) DO UPDATE SET {updates},"
        " updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by",
        workspace_id, *(values[name] for name in SETTINGS_COLUMNS), at, member_id)
    language = values["language"]
    await tx.execute("UPDATE ai_passages SET language = $2::regconfig WHERE workspace_id = $1"
                     " AND language <> $2::regconfig", workspace_id, language)
    await tx.execute("UPDATE bot_answers SET language = $2::regconfig WHERE workspace_id = $1"
                     " AND language <> $2::regconfig", workspace_id, language)


async def language_known(db: Database | UnitOfWork, name: str) -> bool:
    """Whether PostgreSQL has a text search configuration of this name (pg_ts_config)."""
    return await db.fetchval("SELECT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = $1)", name)


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
