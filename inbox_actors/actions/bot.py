"""The bot's settings and knowledge for every front door (`team/bot_settings.py` holds the rules): its FAQ answers,
persona and hand-off words, on or off. A change also drops this process's cached copy of the workspace's bot, so
the chats it serves follow it at once (other processes within the bot's cache time)."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

import msgspec

from inbox_actors.actions.caller import Caller
from inbox_actors.actions.deps import ActionDeps
from inbox_actors.actions.outcomes import Refused, judged
from inbox_actors.conversations.bot import AnswerView
from inbox_actors.team import bot_settings
from inbox_actors.team.bot_settings import BotSettings

T = TypeVar("T")


async def change_behaviour(deps: ActionDeps, caller: Caller,
                           body: bot_settings.ChangeBehaviour) -> BotSettings | Refused:
    return await _changed(deps, caller, bot_settings.change(
        deps.db, caller.workspace_id, caller.member_id, caller.author, deps.clock.now(),
        persona=_given(body.persona), handoff_message=_given(body.handoff_message)))


async def switch(deps: ActionDeps, caller: Caller, enabled: bool) -> BotSettings | Refused:
    return await _changed(deps, caller, bot_settings.change(
        deps.db, caller.workspace_id, caller.member_id, caller.author, deps.clock.now(), enabled=enabled))


async def add_answer(deps: ActionDeps, caller: Caller, body: bot_settings.NewAnswer) -> AnswerView | Refused:
    return await _changed(deps, caller, bot_settings.add_answer(
        deps.db, caller.workspace_id, caller.member_id, caller.author, body, deps.clock.now()))


async def remove_answer(deps: ActionDeps, caller: Caller,
                        answer_id: int) -> bot_settings.AnswerRemoved | Refused:
    return await _changed(deps, caller, bot_settings.remove_answer(
        deps.db, caller.workspace_id, caller.member_id, caller.author, answer_id, deps.clock.now()))


def _given(value: str | msgspec.UnsetType) -> str | None:
    return None if value is msgspec.UNSET else value


async def _changed(deps: ActionDeps, caller: Caller, change: Awaitable[T]) -> T | Refused:
    result = await judged(change, bot_settings.BotRefusal)
    if not isinstance(result, Refused):
        deps.forget_bot(caller.workspace_id)
    return result
