"""The AI agent: a chat's bot answering with a language model, grounded in the workspace's knowledge and prices.

One turn (`respond`, or `try_out` for the admin page's "try it" box, which sends nothing):
1. Decisions that cost nothing come first: the bot switched off; a customer asking for a person (the keyword
   bot's phrase rules); `max_bot_turns` replies in a row; the month's model budget spent; credits short of a
   reply; no knowledge found for the question and no pricing sheet to quote from.
2. The passages that best match the question (knowledge.py) go into the prompt (prompt.py) within the model's
   context budget, and the model is called (at most `concurrent_calls` of the workspace's at once: the model
   gate) with two tools: `quote_price`, answered from the pricing sheets (pricing.py), and `hand_off`.
3. Its answer is sent only if every amount in it was returned by a quote_price call of this turn
   (amount_guardrail.py); otherwise, or when the model fails, times out (`timeout_seconds`, retries included),
   answers unusably or calls hand_off, the chat goes to a person with a reason of its own.

Every model call is recorded with its tokens, latency, outcome and cost (usage.py); the call whose answer is sent
names what grounded it, and the chat links it to the sent message. A turn holds no database connection while the
model thinks: each read and write takes one and gives it back.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import msgspec
import trio

from inbox_actors.ai_agent import knowledge, pricing, usage
from inbox_actors.ai_agent.amount_guardrail import unquoted_amounts
from inbox_actors.ai_agent.knowledge import Passage
from inbox_actors.ai_agent.model import ChatModel, ModelAnswer, ModelFailure, ModelRequest
from inbox_actors.ai_agent.model_gate import GateFull, model_call_place
from inbox_actors.ai_agent.pricing import PriceQuote
from inbox_actors.ai_agent.prompt import HAND_OFF, QUOTE_PRICE, TOOLS, build_messages
from inbox_actors.conversations.bot import (
    DEFAULT_LABEL,
    MAX_ANSWER_LENGTH,
    BotAnswer,
    BotProfile,
    BotQuestion,
    FaqBot,
    HandOff,
    Reply,
    Turn,
    asks_for_person,
)
from inbox_actors.domain import conversation_states as reasons
from inbox_actors.runtime import Directory
from persistence.database import Database

log = logging.getLogger("inbox_actors.ai_agent.agent")

# Model calls in one turn: a quote_price round, its answer, and one more round for a model that quotes twice.
MAX_ROUNDS = 3


class AgentConfig(msgspec.Struct, frozen=True):
    """The service's model settings (docs/operating.md#the-ai-agent)."""

    default_model: str
    timeout_seconds: float = 20.0
    context_tokens: int = 8000
    answer_tokens: int = 500
    concurrent_calls: int = 32
    prices: usage.ModelPrices = usage.ModelPrices()
    # Credits an AI reply costs the workspace (0: replies are not metered).
    reply_credits: int = 0


class TurnRecord(msgspec.Struct):
    """What one turn did: its answer, and what it used and spent (the "try it" box shows it all)."""

    answer: BotAnswer | None = None
    passages: list[Passage] = msgspec.field(default_factory=list)
    quotes: list[PriceQuote] = msgspec.field(default_factory=list)
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_micros: int = 0
    calls: int = 0
    failure: str | None = None


class AiAgent:
    def __init__(self, db: Database, model: ChatModel, config: AgentConfig, faq: FaqBot | None = None) -> None:
        self._db = db
        self._model = model
        self.config = config
        # The keyword bot keeps each workspace's settings cached; the agent reads them through it.
        self._faq = faq if faq is not None else FaqBot(db)

    def forget(self, workspace_id: int) -> None:
        self._faq.forget(workspace_id)

    def statistics(self) -> Any:
        return self._faq.statistics()

    async def respond(self, question: BotQuestion, actors: Directory) -> BotAnswer:
        record = await self._turn(question, actors, trial=False)
        assert record.answer is not None
        return record.answer

    async def try_out(self, workspace_id: int, text: str, actors: Directory) -> TurnRecord:
        """The turn a customer writing `text` would get, sent nowhere; its model calls are recorded as trials."""
        question = BotQuestion(workspace_id=workspace_id, conversation_id=None, turns=(Turn("customer", text),))
        return await self._turn(question, actors, trial=True)

    async def _turn(self, question: BotQuestion, actors: Directory, *, trial: bool) -> TurnRecord:
        workspace_id = question.workspace_id
        profile = await self._faq.profile(workspace_id)
        record = TurnRecord(model=profile.model or self.config.default_model)

        def hand_off(reason: str) -> TurnRecord:
            label = profile.persona or DEFAULT_LABEL
            record.answer = HandOff(reason, message=profile.handoff_message or None, label=label)
            return record

        text = question.text
        if not profile.enabled:
            return hand_off(reasons.BOT_OFF)
        if asks_for_person(text):
            return hand_off(reasons.CUSTOMER_ASKED_FOR_PERSON)
        if question.bot_turns >= profile.max_bot_turns:
            return hand_off(reasons.BOT_TURNS_EXHAUSTED)
        allowance = await usage.allowance(self._db, workspace_id)
        if profile.monthly_budget_micros is not None and allowance.spent_this_month >= profile.monthly_budget_micros:
            return hand_off(reasons.BOT_BUDGET_REACHED)
        if self.config.reply_credits and allowance.balance < self.config.reply_credits:
            return hand_off(reasons.BOT_OUT_OF_CREDITS)
        record.passages = await knowledge.retrieve(self._db, workspace_id, text)
        if not record.passages and not allowance.has_prices:
            return hand_off(reasons.BOT_HAS_NO_ANSWER)
        with trio.move_on_after(self.config.timeout_seconds) as deadline:
            try:
                async with model_call_place(actors, workspace_id, self.config.concurrent_calls):
                    return await self._converse(question, profile, record, hand_off, deadline, trial)
            except GateFull as full:
                log.warning("%s", full)
                return hand_off(reasons.BOT_UNAVAILABLE)
        record.failure = "timed_out"
        return hand_off(reasons.BOT_UNAVAILABLE)

    async def _converse(self, question: BotQuestion, profile: BotProfile, record: TurnRecord, hand_off: Any,
                        deadline: trio.CancelScope, trial: bool) -> TurnRecord:
        config = self.config
        messages, record.passages = build_messages(
            profile, record.passages, question.turns, question.unanswered, context_tokens=config.context_tokens,
            answer_tokens=config.answer_tokens)
        for _ in range(MAX_ROUNDS):
            request = ModelRequest(model=record.model, messages=messages, tools=TOOLS,
                                   temperature=profile.temperature, max_tokens=config.answer_tokens)
            called = await self._call(question, request, record, deadline, trial)
            if called is None:
                return hand_off(reasons.BOT_UNAVAILABLE)
            answer, started = called
            if answer.tool_calls:
                messages.append(_tool_request(answer))
                for call in answer.tool_calls:
                    arguments = call.arguments_or_none()
                    if call.name == HAND_OFF and arguments is not None:
                        await self._note(question, record, answer, started, "handed_off", trial)
                        return hand_off(reasons.BOT_HANDED_OFF)
                    if call.name != QUOTE_PRICE or not isinstance((arguments or {}).get("query"), str):
                        record.failure = "unusable"
                        await self._note(question, record, answer, started, "failed", trial)
                        return hand_off(reasons.BOT_UNAVAILABLE)
                    found = await pricing.quote(self._db, question.workspace_id, arguments["query"])
                    record.quotes.extend(found)
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": msgspec.json.encode(
                        {"items": [msgspec.structs.asdict(quote) for quote in found]}).decode()})
                await self._note(question, record, answer, started, "quoted", trial)
                continue
            reply = (answer.content or "").strip()
            if not reply or len(reply) > MAX_ANSWER_LENGTH:
                record.failure = "unusable"
                await self._note(question, record, answer, started, "failed", trial)
                return hand_off(reasons.BOT_UNAVAILABLE)
            invented = unquoted_amounts(reply, [quote.price for quote in record.quotes])
            if invented:
                record.failure = f"stated amounts no quote returned: {', '.join(invented)}"
                await self._note(question, record, answer, started, "guardrail", trial)
                return hand_off(reasons.BOT_UNQUOTED_AMOUNT)
            call_id = await self._note(question, record, answer, started, "answered", trial,
                                       grounding=_grounding(record))
            record.answer = Reply(reply, label=profile.persona or DEFAULT_LABEL, model_call=call_id)
            return record
        record.failure = "unusable"
        return hand_off(reasons.BOT_UNAVAILABLE)

    async def _call(self, question: BotQuestion, request: ModelRequest, record: TurnRecord,
                    deadline: trio.CancelScope, trial: bool) -> tuple[ModelAnswer, float] | None:
        """One model call, recorded when it fails or is cut short (a person took the chat, the deadline passed)."""
        started = trio.current_time()
        try:
            answer = await self._model.complete(request)
        except ModelFailure as failure:
            record.failure = failure.kind
            await self._record(question, record, "failed", started, trial)
            log.warning("model call for workspace %s failed: %s", question.workspace_id, failure)
            return None
        except trio.Cancelled:
            # Recorded whatever cut it short: the provider may bill a call the agent gave up on.
            with trio.CancelScope(shield=True), trio.move_on_after(2):
                await self._record(question, record, "timed_out" if deadline.cancel_called else "cancelled",
                                   started, trial)
            raise
        record.model = answer.model or record.model
        record.calls += 1
        record.prompt_tokens += answer.prompt_tokens
        record.completion_tokens += answer.completion_tokens
        return answer, started

    async def _note(self, question: BotQuestion, record: TurnRecord, answer: ModelAnswer, started: float,
                    outcome: str, trial: bool, grounding: dict[str, Any] | None = None) -> int:
        """Record the call `answer` came from (begun at `started`), with the tokens it reported."""
        return await self._record(question, record, outcome, started, trial, grounding=grounding,
                                  tokens=(answer.prompt_tokens, answer.completion_tokens))

    async def _record(self, question: BotQuestion, record: TurnRecord, outcome: str, started: float, trial: bool,
                      *, grounding: dict[str, Any] | None = None, tokens: tuple[int, int] = (0, 0)) -> int:
        cost = self.config.prices.cost_micros(record.model, *tokens)
        record.cost_micros += cost
        return await usage.record_call(
            self._db, workspace_id=question.workspace_id, conversation_id=question.conversation_id,
            model=record.model, prompt_tokens=tokens[0], completion_tokens=tokens[1],
            latency_ms=round((trio.current_time() - started) * 1000), outcome="trial" if trial else outcome,
            cost_micros=cost, grounding=grounding)


def _tool_request(answer: ModelAnswer) -> dict[str, Any]:
    """The model's tool calls as the next request repeats them before their results."""
    return {"role": "assistant", "content": answer.content, "tool_calls": [
        {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
        for call in answer.tool_calls]}


def _grounding(record: TurnRecord) -> dict[str, Any]:
    return {"passages": [{"ref": p.ref, "title": p.title} for p in record.passages],
            "prices": [msgspec.structs.asdict(quote) for quote in _unique(record.quotes)]}


def _unique(quotes: Sequence[PriceQuote]) -> list[PriceQuote]:
    seen: dict[int, PriceQuote] = {}
    for quote in quotes:
        seen.setdefault(quote.item_id, quote)
    return list(seen.values())
