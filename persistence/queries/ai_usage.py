"""The AI agent's model calls: recorded one by one, summed by day and model, by month for the budget, and read back
with what grounded each sent reply."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from persistence.database import Database, Record, UnitOfWork


async def record_call(db: Database | UnitOfWork, *, workspace_id: int, conversation_id: int | None, model: str,
                      prompt_tokens: int, completion_tokens: int, latency_ms: int, outcome: str, cost_micros: int,
                      grounding: dict[str, Any] | None) -> int:
    # The month's spend grows in the same statement (ai_monthly_spend), so the budget check reads one row.
    return await db.fetchval(
        "WITH call AS (INSERT INTO ai_model_calls (workspace_id, conversation_id, model, prompt_tokens,"
        " completion_tokens, latency_ms, outcome, cost_micros, grounding)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb) RETURNING id, at),"
        " spent AS (INSERT INTO ai_monthly_spend (workspace_id, month, cost_micros)"
        " SELECT $1, date_trunc('month', at AT TIME ZONE 'UTC')::date, $8 FROM call WHERE $8 > 0"
        " ON CONFLICT (workspace_id, month) DO UPDATE SET cost_micros = ai_monthly_spend.cost_micros"
        " + EXCLUDED.cost_micros)"
        " SELECT id FROM call",
        workspace_id, conversation_id, model, prompt_tokens, completion_tokens, latency_ms, outcome, cost_micros,
        msgspec.json.encode(grounding).decode() if grounding is not None else None)


async def cost_this_month(db: Database, workspace_id: int) -> int:
    """The model cost spent since the calendar month began (UTC), by PostgreSQL's clock, in millionths of a dollar."""
    return await db.fetchval(f"SELECT {SPENT_THIS_MONTH}", workspace_id)


# The month's spend of workspace $1 so far, by PostgreSQL's clock.
SPENT_THIS_MONTH = ("COALESCE((SELECT cost_micros FROM ai_monthly_spend WHERE workspace_id = $1"
                    " AND month = date_trunc('month', now() AT TIME ZONE 'UTC')::date), 0)::bigint")


async def allowance(db: Database, workspace_id: int) -> Record:
    """What a turn checks before it calls a model, in one statement: the month's spend, the credit balance, and
    whether the workspace has a pricing sheet to quote from."""
    return await db.fetchrow(
        f"SELECT {SPENT_THIS_MONTH} AS spent,"
        " COALESCE((SELECT balance FROM credit_accounts WHERE workspace_id = $1), 0) AS balance,"
        " EXISTS (SELECT 1 FROM pricing_items WHERE workspace_id = $1) AS has_prices", workspace_id)


async def usage_by_day(db: Database, workspace_id: int, start: datetime, end: datetime) -> list[Record]:
    return await db.fetch(
        "SELECT (at AT TIME ZONE 'UTC')::date AS day, model, count(*) AS calls,"
        " sum(prompt_tokens)::bigint AS prompt_tokens, sum(completion_tokens)::bigint AS completion_tokens,"
        " sum(cost_micros)::bigint AS cost_micros, count(message_id) AS replies,"
        " count(*) FILTER (WHERE outcome IN ('failed', 'timed_out')) AS failures,"
        " (avg(latency_ms))::integer AS average_latency_ms"
        " FROM ai_model_calls WHERE workspace_id = $1 AND at BETWEEN $2 AND $3"
        " GROUP BY 1, 2 ORDER BY 1, 2", workspace_id, start, end)


async def replies_of_chat(db: Database, workspace_id: int, phone: str, limit: int) -> list[Record]:
    """The chat's bot replies with the model call that made each, newest first."""
    return await db.fetch(
        "SELECT m.id AS message_id, m.platform_message_id, m.text, m.sent_at, a.model, a.prompt_tokens,"
        " a.completion_tokens, a.cost_micros, a.latency_ms, a.grounding FROM ai_model_calls a"
        " JOIN messages m ON m.id = a.message_id JOIN conversations c ON c.id = m.conversation_id"
        " WHERE a.workspace_id = $1 AND c.workspace_id = $1 AND c.phone = $2 ORDER BY m.id DESC LIMIT $3",
        workspace_id, phone, limit)


async def groundings(db: Database, workspace_id: int, message_ids: list[int]) -> dict[int, Any]:
    """What grounded each of these sent replies (the chat's thread shows it to agents)."""
    rows = await db.fetch("SELECT message_id, grounding FROM ai_model_calls WHERE workspace_id = $1"
                          " AND message_id = ANY($2::bigint[])", workspace_id, message_ids)
    return {row["message_id"]: msgspec.json.decode(row["grounding"]) for row in rows if row["grounding"]}
