"""The bot's use cases: reading its settings, answers and hand-off trail, the AI agent's usage and grounded replies,
trying the agent out, and the team's changes (its behaviour, on or off, adding and removing FAQ answers); the
agent's articles and pricing sheets are `ai_knowledge.py`'s and `pricing_sheets.py`'s. `bot/settings.py` holds the
rules and the audit records; a change also drops this process's cached copy of the workspace's bot, so the chats it
serves follow it at once (other processes within the bot's cache time). The operator's command line runs the
answers' use cases too, recorded as no member.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Annotated, TypeVar

import msgspec
import trio

from inbox_actors.ai_agent import usage
from inbox_actors.bot import settings
from inbox_actors.conversations import bot
from inbox_actors.paging import parameters
from inbox_actors.paging.parameters import MAX_PAGE
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import BIGINT_MAX, MULTI_LINE, ONE_LINE, ChatPhone, Cursor, Text
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused, judged
from inbox_actors.use_cases.use_case import Kind, UseCase, rule

T = TypeVar("T")

# A broken rule below keeps the code the API has always answered for a body it cannot take (REST's
# `invalid_body`); the sentence says what the field needs. The bot's own rules (a keyword naming a hand-off
# phrase, an answer blank once trimmed) answer `invalid_answer` from `conversations/bot.py`.
_KEYWORDS = (f"keywords must be a list of 1 to {bot.MAX_KEYWORDS} keywords, words or phrases on one line, any one of "
             "which asks for the answer.")
_ANSWER = (f"The answer must be 1 to {bot.MAX_ANSWER_LENGTH:,} characters, with no control characters but line "
           "breaks and tabs.")


# -- arguments -----------------------------------------------------------------------------------------------


class NoArguments(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A read of the caller's workspace takes no arguments."""


class ChangeBehaviour(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What is left out is kept."""

    persona: Annotated[str, msgspec.Meta(
        max_length=settings.MAX_PERSONA, pattern=ONE_LINE,
        extra=rule("invalid_arguments", f"persona must be at most {settings.MAX_PERSONA} characters on one line "
                                        "(empty for \"bot\")."))] | msgspec.UnsetType = msgspec.UNSET
    handoff_message: Annotated[str, msgspec.Meta(
        max_length=settings.MAX_HANDOFF_MESSAGE, pattern=MULTI_LINE,
        extra=rule("invalid_arguments", f"handoff_message must be at most {settings.MAX_HANDOFF_MESSAGE:,} "
                                        "characters, with no control characters but line breaks and tabs (empty "
                                        "for none)."))] | msgspec.UnsetType = msgspec.UNSET


    system_prompt: Annotated[str, msgspec.Meta(
        max_length=settings.MAX_SYSTEM_PROMPT, pattern=MULTI_LINE,
        extra=rule("invalid_arguments", f"system_prompt must be at most {settings.MAX_SYSTEM_PROMPT:,} characters, "
                                        "with no control characters but line breaks and tabs."))
    ] | msgspec.UnsetType = msgspec.UNSET
    tone: Annotated[str, msgspec.Meta(
        pattern=f"^(?:{'|'.join(settings.TONES)})$",
        extra=rule("invalid_arguments", f"tone must be one of {', '.join(settings.TONES)}."))
    ] | msgspec.UnsetType = msgspec.UNSET
    answer_length: Annotated[str, msgspec.Meta(
        pattern=f"^(?:{'|'.join(settings.ANSWER_LENGTHS)})$",
        extra=rule("invalid_arguments", f"answer_length must be one of {', '.join(settings.ANSWER_LENGTHS)}."))
    ] | msgspec.UnsetType = msgspec.UNSET
    customer_language: bool | msgspec.UnsetType = msgspec.UNSET
    language: Annotated[str, msgspec.Meta(
        pattern=f"^(?:{'|'.join(settings.LANGUAGES)})$",
        extra=rule("invalid_language", "language must be one of PostgreSQL's text search configurations: "
                                       f"{', '.join(settings.LANGUAGES)}."))
    ] | msgspec.UnsetType = msgspec.UNSET
    model: Annotated[str, msgspec.Meta(
        max_length=settings.MAX_MODEL_NAME, pattern=ONE_LINE,
        extra=rule("invalid_arguments", f"model must be at most {settings.MAX_MODEL_NAME} characters on one line "
                                        "(empty for the service's default model)."))
    ] | msgspec.UnsetType = msgspec.UNSET
    temperature: Annotated[float, msgspec.Meta(
        ge=0, le=2, extra=rule("invalid_arguments", "temperature must be a number from 0 to 2."))
    ] | msgspec.UnsetType = msgspec.UNSET
    max_bot_turns: Annotated[int, msgspec.Meta(
        ge=1, le=settings.MAX_BOT_TURNS,
        extra=rule("invalid_arguments", f"max_bot_turns must be 1 to {settings.MAX_BOT_TURNS}."))
    ] | msgspec.UnsetType = msgspec.UNSET
    monthly_budget_usd: Annotated[float, msgspec.Meta(
        ge=0, le=settings.MAX_MONTHLY_BUDGET_USD,
        extra=rule("invalid_arguments", f"monthly_budget_usd must be 0 to {settings.MAX_MONTHLY_BUDGET_USD:,} US "
                                        "dollars, or null for no limit."))
    ] | None | msgspec.UnsetType = msgspec.UNSET


class SwitchBot(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    enabled: bool


class NewAnswer(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    keywords: Annotated[list[Annotated[str, msgspec.Meta(pattern=ONE_LINE)]], msgspec.Meta(
        min_length=1, max_length=bot.MAX_KEYWORDS, extra=rule("invalid_arguments", _KEYWORDS))]
    answer: Annotated[str, msgspec.Meta(min_length=1, max_length=bot.MAX_ANSWER_LENGTH, pattern=MULTI_LINE,
                                        extra=rule("invalid_arguments", _ANSWER))]


class OneAnswer(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    # 0 too: an id beyond a bigint reaches here as 0 (the API's path converter), which no answer has: not found.
    answer_id: Annotated[int, msgspec.Meta(ge=0, le=BIGINT_MAX, description="The answer's id.")]


class HandoffWindow(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The REST route reads its query (with the aliases `from` and `until`) by the same rules; a page or a tool
    names the fields."""

    since: Annotated[str, msgspec.Meta(max_length=40, description="ISO 8601 date-time or YYYY-MM-DD (start of "
                                                                  "that UTC day).")] | None = None
    to: Annotated[str, msgspec.Meta(max_length=40, description="The window's end (default now).")] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_PAGE, description=f"How many, 1 to {MAX_PAGE} (default "
                                                                      f"{settings.DEFAULT_LIMIT}).")] | None = None
    cursor: Cursor | None = None


class UsageWindow(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The REST route reads its query (`from`, `to`) by the window rules; a page or a tool names the fields."""

    since: Annotated[str, msgspec.Meta(max_length=40, description="ISO 8601 date-time or YYYY-MM-DD (start of "
                                                                  "that UTC day); default 7 days ago.")] | None = None
    to: Annotated[str, msgspec.Meta(max_length=40, description="The window's end (default now).")] | None = None


class ChatReplies(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: ChatPhone
    # As the query gives it, read by the paging rules (an out-of-range or non-numeric limit is 400 invalid_limit).
    limit: Annotated[str, msgspec.Meta(max_length=20, description=f"How many, 1 to {MAX_PAGE} (default "
                                                                  f"{settings.DEFAULT_LIMIT}).")] | None = None


class TryText(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    text: Text


class TrialPassage(msgspec.Struct, frozen=True):
    ref: str
    title: str
    text: str


class Trial(msgspec.Struct, frozen=True):
    """What the AI agent would do with a customer's message: its reply, or the hand-over and why; what it used
    and what it cost. Nothing was sent."""

    outcome: str
    """reply or handoff"""
    reply: str | None
    handoff_reason: str | None
    model: str
    passages: list[TrialPassage]
    prices: list[dict]
    prompt_tokens: int
    completion_tokens: int
    model_calls: int
    cost_usd: float
    elapsed_ms: int
    failure: str | None


# -- handlers ------------------------------------------------------------------------------------------------


async def _settings(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(await settings.settings(deps.db, caller.workspace_id))


async def _answers(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(await settings.answers(deps.db, caller.workspace_id))


async def _handoffs(deps: UseCaseDeps, caller: Caller, a: HandoffWindow) -> Outcome:
    given = {name: str(value) for name, value in msgspec.structs.asdict(a).items() if value is not None}
    return Done(await settings.handoffs(deps.db, caller.workspace_id, given, deps.clock.now()))


async def _change_behaviour(deps: UseCaseDeps, caller: Caller, a: ChangeBehaviour) -> Outcome:
    given = {name: value for name, value in msgspec.structs.asdict(a).items() if value is not msgspec.UNSET}
    return await _changed(deps, caller, settings.change(
        deps.db, caller.workspace_id, _member(caller), caller.author, deps.clock.now(), **given))


async def _switch(deps: UseCaseDeps, caller: Caller, a: SwitchBot) -> Outcome:
    return await _changed(deps, caller, settings.change(
        deps.db, caller.workspace_id, _member(caller), caller.author, deps.clock.now(), enabled=a.enabled))


async def _add_answer(deps: UseCaseDeps, caller: Caller, a: NewAnswer) -> Outcome:
    return await _changed(deps, caller, settings.add_answer(
        deps.db, caller.workspace_id, _member(caller), caller.author, a.keywords, a.answer, deps.clock.now()))


async def _remove_answer(deps: UseCaseDeps, caller: Caller, a: OneAnswer) -> Outcome:
    return await _changed(deps, caller, settings.remove_answer(
        deps.db, caller.workspace_id, _member(caller), caller.author, a.answer_id, deps.clock.now()))


async def _usage(deps: UseCaseDeps, caller: Caller, a: UsageWindow) -> Outcome:
    given = {"from": a.since, "to": a.to}
    return Done(await usage.usage_by_day(deps.db, caller.workspace_id, given, deps.clock.now()))


async def _replies(deps: UseCaseDeps, caller: Caller, a: ChatReplies) -> Outcome:
    limit = parameters.limit(a.limit, settings.DEFAULT_LIMIT)
    return Done(await usage.replies_of_chat(deps.db, caller.workspace_id, a.phone, limit))


async def _try(deps: UseCaseDeps, caller: Caller, a: TryText) -> Outcome:
    if deps.agent is None:
        return Refused(Reason.REFUSED, "This service has no language model (INBOX_MODEL_URL is \"none\", or a real "
                                       "platform runs without INBOX_MODEL_URL): the keyword FAQ bot answers, and "
                                       "there is no AI agent to try.", 409, "no_model")
    started = trio.current_time()
    turn = await deps.agent.try_out(caller.workspace_id, a.text, deps.actors)
    answer = turn.answer
    return Done(Trial(
        outcome="reply" if isinstance(answer, bot.Reply) else "handoff",
        reply=answer.text if isinstance(answer, bot.Reply) else None,
        handoff_reason=answer.reason if isinstance(answer, bot.HandOff) else None, model=turn.model,
        passages=[TrialPassage(p.ref, p.title, p.text) for p in turn.passages],
        prices=[msgspec.structs.asdict(quote) for quote in turn.quotes], prompt_tokens=turn.prompt_tokens,
        completion_tokens=turn.completion_tokens, model_calls=turn.calls, cost_usd=usage.dollars(turn.cost_micros),
        elapsed_ms=round((trio.current_time() - started) * 1000), failure=turn.failure))


def _member(caller: Caller) -> int | None:
    """Who the records name as having acted: the operator is no member (the audit log's NULL, `via` "cli")."""
    return None if caller.is_operator else caller.member_id


async def _changed(deps: UseCaseDeps, caller: Caller, change: Awaitable[T]) -> Outcome:
    result = await judged(change, settings.BotRefusal)
    if isinstance(result, Refused):
        return result
    deps.forget_bot(caller.workspace_id)
    return Done(result)


# -- the declarations ----------------------------------------------------------------------------------------

SETTINGS = UseCase("get_bot_settings", NoArguments, permissions.BOT, Kind.READ, _settings)
ANSWERS = UseCase("list_bot_answers", NoArguments, permissions.BOT, Kind.READ, _answers)
HANDOFFS = UseCase("list_bot_handoffs", HandoffWindow, permissions.BOT_AUDIT, Kind.READ, _handoffs)
CHANGE_BEHAVIOUR = UseCase("change_bot_behaviour", ChangeBehaviour, permissions.BOT_BEHAVIOUR, Kind.WRITE,
                           _change_behaviour)
SWITCH = UseCase("switch_bot", SwitchBot, permissions.BOT_PROVISION, Kind.WRITE, _switch)
ADD_ANSWER = UseCase("add_bot_answer", NewAnswer, permissions.BOT_KNOWLEDGE, Kind.WRITE, _add_answer)
USAGE = UseCase("get_bot_usage", UsageWindow, permissions.BOT_AUDIT, Kind.READ, _usage)
REPLIES = UseCase("list_bot_replies", ChatReplies, permissions.BOT_AUDIT, Kind.READ, _replies)
TRY = UseCase("try_bot", TryText, permissions.BOT_BEHAVIOUR, Kind.WRITE, _try)
REMOVE_ANSWER = UseCase("remove_bot_answer", OneAnswer, permissions.BOT_KNOWLEDGE, Kind.WRITE, _remove_answer)
