"""The AI agent's usage and cost: what every model call is recorded with, what a turn may still spend, and the
reads of `ai_audit_view` (usage by day and model, a chat's replies with what grounded them).

Cost is the tokens the model reported times the model's price per million tokens (INBOX_MODEL_PRICES), kept in
millionths of a US dollar; a model with no price costs nothing on the books (docs/ai-agent.md#costs-and-credits).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

import msgspec

from inbox_actors.paging.windows import REPLIES_AND_MESSAGES, Window, window
from persistence.database import Database
from persistence.queries import ai_usage as queries
from persistence.queries import credits as credit_queries

record_call = queries.record_call


class ModelPrices(msgspec.Struct, frozen=True):
    """US dollars per million prompt and completion tokens, by model name."""

    by_model: dict[str, tuple[float, float]] = msgspec.field(default_factory=dict)

    def cost_micros(self, model: str, prompt_tokens: int, completion_tokens: int) -> int:
        # A dollar per million tokens is a millionth of a dollar per token.
        prompt_price, completion_price = self.by_model.get(model, (0.0, 0.0))
        return round(prompt_tokens * prompt_price + completion_tokens * completion_price)


def parse_prices(text: str) -> ModelPrices:
    """`model=prompt/completion` pairs separated by commas, in dollars per million tokens:
    "gpt-4o-mini=0.15/0.60,simulated-grounded=0.15/0.60"."""
    prices: dict[str, tuple[float, float]] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        model, _, figures = item.rpartition("=")
        prompt, _, completion = figures.partition("/")
        try:
            pair = (float(prompt), float(completion))
        except ValueError:
            raise ValueError(f"{item!r} is not model=prompt/completion dollars per million tokens") from None
        if not model or not all(0 <= value < 10_000 for value in pair):
            raise ValueError(f"{item!r} is not model=prompt/completion dollars per million tokens")
        prices[model] = pair
    return ModelPrices(prices)


class Allowance(msgspec.Struct, frozen=True):
    spent_this_month: int
    balance: int
    has_prices: bool


async def allowance(db: Database, workspace_id: int) -> Allowance:
    """What a turn checks before it calls a model: the month's cost so far, the credit balance, and whether the
    workspace has a pricing sheet to quote from."""
    row = await queries.allowance(db, workspace_id)
    return Allowance(row["spent"], row["balance"], row["has_prices"])


# -- the reads of ai_audit_view -----------------------------------------------------------------------------


class UsageDay(msgspec.Struct, frozen=True):
    day: date
    model: str
    calls: int
    replies: int
    failures: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    average_latency_ms: int


class UsageTotals(msgspec.Struct, frozen=True):
    calls: int
    replies: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    spent_this_month_usd: float
    credit_balance: int


class Usage(msgspec.Struct, frozen=True):
    data: list[UsageDay]
    totals: UsageTotals
    window: Window


def dollars(micros: int) -> float:
    return round(micros / 1_000_000, 6)


async def usage_by_day(db: Database, workspace_id: int, args: Mapping[str, str | None], now: datetime) -> Usage:
    """Model calls by day (UTC) and model in the window (default the last 7 days, at most 90)."""
    span = window(dict(args), now, REPLIES_AND_MESSAGES)
    rows = await queries.usage_by_day(db, workspace_id, span.start, span.end)
    days = [UsageDay(day=row["day"], model=row["model"], calls=row["calls"], replies=row["replies"],
                     failures=row["failures"], prompt_tokens=row["prompt_tokens"],
                     completion_tokens=row["completion_tokens"], cost_usd=dollars(row["cost_micros"]),
                     average_latency_ms=row["average_latency_ms"] or 0) for row in rows]
    spent = await queries.cost_this_month(db, workspace_id)
    balance = await credit_queries.balance(db, workspace_id)
    totals = UsageTotals(calls=sum(d.calls for d in days), replies=sum(d.replies for d in days),
                         prompt_tokens=sum(d.prompt_tokens for d in days),
                         completion_tokens=sum(d.completion_tokens for d in days),
                         cost_usd=dollars(sum(row["cost_micros"] for row in rows)),
                         spent_this_month_usd=dollars(spent), credit_balance=balance)
    return Usage(days, totals, span)


class GroundedReply(msgspec.Struct, frozen=True):
    message_id: str | None
    text: str | None
    sent_at: datetime | None
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_ms: int
    passages: list[dict[str, Any]]
    prices: list[dict[str, Any]]


class GroundedReplies(msgspec.Struct, frozen=True):
    data: list[GroundedReply]


async def replies_of_chat(db: Database, workspace_id: int, phone: str, limit: int) -> GroundedReplies:
    rows = await queries.replies_of_chat(db, workspace_id, phone, limit)
    replies = []
    for row in rows:
        grounding = msgspec.json.decode(row["grounding"]) if row["grounding"] else {}
        replies.append(GroundedReply(
            message_id=row["platform_message_id"], text=row["text"], sent_at=row["sent_at"], model=row["model"],
            prompt_tokens=row["prompt_tokens"], completion_tokens=row["completion_tokens"],
            cost_usd=dollars(row["cost_micros"]), latency_ms=row["latency_ms"],
            passages=grounding.get("passages", []), prices=grounding.get("prices", [])))
    return GroundedReplies(replies)
