"""The bot's stored answers: keywords of a question -> the answer."""

from __future__ import annotations

from persistence.database import Database, Record, UnitOfWork


async def insert_answer(tx: UnitOfWork, *, workspace_id: int, keywords: list[str], answer: str) -> Record:
    return await tx.fetchrow(
        # Stemmed in the workspace's language, as the AI agent's knowledge is (queries/ai_knowledge.py).
        "INSERT INTO bot_answers (workspace_id, keywords, answer, language)"
        " VALUES ($1, $2, $3, COALESCE((SELECT language FROM bot_settings WHERE workspace_id = $1), 'english'))"
        " RETURNING id, workspace_id, keywords, answer, created_at",
        workspace_id, keywords, answer,
    )


async def list_answers(db: Database | UnitOfWork, workspace_id: int) -> list[Record]:
    """The workspace's answers, oldest first."""
    return await db.fetch(
        "SELECT id, workspace_id, keywords, answer, created_at FROM bot_answers WHERE workspace_id = $1 ORDER BY id",
        workspace_id,
    )


async def delete_answer(tx: UnitOfWork, workspace_id: int, answer_id: int) -> bool:
    status = await tx.execute("DELETE FROM bot_answers WHERE workspace_id = $1 AND id = $2", workspace_id, answer_id)
    return status == "DELETE 1"
