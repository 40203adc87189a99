"""The AI agent's knowledge: articles, the passages their bodies are split into, and the full-text search over those
passages and the FAQ answers, each stemmed in the workspace's language (`bot_settings.language`, else english)."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record, UnitOfWork

# The workspace's text search configuration; $1 is always the workspace's id.
WORKSPACE_LANGUAGE = "COALESCE((SELECT language FROM bot_settings WHERE workspace_id = $1), 'english')"

_ARTICLE = "a.id, a.title, a.created_at, a.updated_at, a.updated_by, m.name AS updated_by_name"
_ARTICLES = "ai_articles a LEFT JOIN members m ON m.id = a.updated_by"


async def list_articles(db: Database, workspace_id: int) -> list[Record]:
    """The workspace's articles, oldest first, with how many passages each has."""
    return await db.fetch(
        f"SELECT {_ARTICLE}, (SELECT count(*) FROM ai_passages p WHERE p.article_id = a.id) AS passages"
        f" FROM {_ARTICLES} WHERE a.workspace_id = $1 ORDER BY a.id", workspace_id)


async def count_articles(q: Database | UnitOfWork, workspace_id: int) -> int:
    return await q.fetchval("SELECT count(*) FROM ai_articles WHERE workspace_id = $1", workspace_id)


async def find_article(q: Database | UnitOfWork, workspace_id: int, article_id: int) -> Record | None:
    return await q.fetchrow(f"SELECT {_ARTICLE}, a.body FROM {_ARTICLES} WHERE a.workspace_id = $1 AND a.id = $2",
                            workspace_id, article_id)


async def passages(q: Database | UnitOfWork, article_id: int) -> list[Record]:
    return await q.fetch("SELECT id, position, heading, text FROM ai_passages WHERE article_id = $1 ORDER BY position",
                         article_id)


async def insert_article(tx: UnitOfWork, workspace_id: int, title: str, body: str, member_id: int | None,
                         at: datetime) -> int:
    return await tx.fetchval(
        "INSERT INTO ai_articles (workspace_id, title, body, created_at, updated_at, updated_by)"
        " VALUES ($1, $2, $3, $4, $4, $5) RETURNING id", workspace_id, title, body, at, member_id)


async def update_article(tx: UnitOfWork, workspace_id: int, article_id: int, title: str, body: str,
                         member_id: int | None, at: datetime) -> None:
    await tx.execute("UPDATE ai_articles SET title = $3, body = $4, updated_at = $5, updated_by = $6"
                     " WHERE workspace_id = $1 AND id = $2", workspace_id, article_id, title, body, at, member_id)


async def lock_article(tx: UnitOfWork, workspace_id: int, article_id: int) -> Record | None:
    """The article's title and body, its row locked until the transaction ends (two saves of it take turns)."""
    return await tx.fetchrow("SELECT title, body FROM ai_articles WHERE workspace_id = $1 AND id = $2 FOR UPDATE",
                             workspace_id, article_id)


async def delete_article(tx: UnitOfWork, workspace_id: int, article_id: int) -> str | None:
    """The removed article's title (its passages go with it); None when there is no such article."""
    return await tx.fetchval("DELETE FROM ai_articles WHERE workspace_id = $1 AND id = $2 RETURNING title",
                             workspace_id, article_id)


async def replace_passages(tx: UnitOfWork, workspace_id: int, article_id: int, headings: list[str],
                           texts: list[str]) -> None:
    """The article's passages, in order, stemmed in the workspace's language as it is now."""
    await tx.execute("DELETE FROM ai_passages WHERE article_id = $1", article_id)
    await tx.execute(
        "INSERT INTO ai_passages (workspace_id, article_id, position, heading, text, language)"
        f" SELECT $1, $2, t.position, t.heading, t.text, {WORKSPACE_LANGUAGE}"
        " FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS t (heading, text, position)",
        workspace_id, article_id, headings, texts)


async def search(db: Database, workspace_id: int, words: str, limit: int) -> list[Record]:
    """Passages and FAQ answers matching `words` (websearch_to_tsquery's syntax, in the workspace's language),
    best first by cover density: a passage's title is its heading (else its article's title), an answer's its
    keywords."""
    return await db.fetch(
        f"WITH q AS (SELECT websearch_to_tsquery({WORKSPACE_LANGUAGE}, $2) AS query)"
        " SELECT 'p' || p.id AS ref, p.id, CASE WHEN p.heading <> '' THEN p.heading ELSE a.title END AS title,"
        " p.text, ts_rank_cd(p.search, q.query) AS rank"
        " FROM q, ai_passages p JOIN ai_articles a ON a.id = p.article_id"
        " WHERE p.workspace_id = $1 AND p.search @@ q.query"
        " UNION ALL"
        " SELECT 'faq' || b.id, b.id, array_to_string(b.keywords, ', '), b.answer, ts_rank_cd(b.search, q.query)"
        " FROM q, bot_answers b WHERE b.workspace_id = $1 AND b.search @@ q.query"
        " ORDER BY rank DESC, id LIMIT $3", workspace_id, words, limit)
