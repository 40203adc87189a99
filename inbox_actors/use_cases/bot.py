"""The bot's use cases: reading its settings, answers and hand-off trail, and the team's changes (its behaviour, on
or off, adding and removing FAQ answers). `bot/settings.py` holds the rules and the audit records; a change also
drops this process's cached copy of the workspace's bot, so the chats it serves follow it at once (other processes
within the bot's cache time). The operator's command line runs the answers' use cases too, recorded as no member.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Annotated, TypeVar

import msgspec

from inbox_actors.bot import settings
from inbox_actors.conversations import bot
from inbox_actors.paging.parameters import MAX_PAGE
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import BIGINT_MAX, MULTI_LINE, ONE_LINE, Cursor
from inbox_actors.use_cases.outcomes import Done, Outcome, Refused, judged
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


# -- handlers ------------------------------------------------------------------------------------------------


async def _settings(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(await settings.settings(deps.db, caller.workspace_id))


async def _answers(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(await settings.answers(deps.db, caller.workspace_id))


async def _handoffs(deps: UseCaseDeps, caller: Caller, a: HandoffWindow) -> Outcome:
    given = {name: str(value) for name, value in msgspec.structs.asdict(a).items() if value is not None}
    return Done(await settings.handoffs(deps.db, caller.workspace_id, given, deps.clock.now()))


async def _change_behaviour(deps: UseCaseDeps, caller: Caller, a: ChangeBehaviour) -> Outcome:
    return await _changed(deps, caller, settings.change(
        deps.db, caller.workspace_id, _member(caller), caller.author, deps.clock.now(),
        persona=_given(a.persona), handoff_message=_given(a.handoff_message)))


async def _switch(deps: UseCaseDeps, caller: Caller, a: SwitchBot) -> Outcome:
    return await _changed(deps, caller, settings.change(
        deps.db, caller.workspace_id, _member(caller), caller.author, deps.clock.now(), enabled=a.enabled))


async def _add_answer(deps: UseCaseDeps, caller: Caller, a: NewAnswer) -> Outcome:
    return await _changed(deps, caller, settings.add_answer(
        deps.db, caller.workspace_id, _member(caller), caller.author, a.keywords, a.answer, deps.clock.now()))


async def _remove_answer(deps: UseCaseDeps, caller: Caller, a: OneAnswer) -> Outcome:
    return await _changed(deps, caller, settings.remove_answer(
        deps.db, caller.workspace_id, _member(caller), caller.author, a.answer_id, deps.clock.now()))


def _member(caller: Caller) -> int | None:
    """Who the records name as having acted: the operator is no member (the audit log's NULL, `via` "cli")."""
    return None if caller.is_operator else caller.member_id


def _given(value: str | msgspec.UnsetType) -> str | None:
    return None if value is msgspec.UNSET else value


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
REMOVE_ANSWER = UseCase("remove_bot_answer", OneAnswer, permissions.BOT_KNOWLEDGE, Kind.WRITE, _remove_answer)
