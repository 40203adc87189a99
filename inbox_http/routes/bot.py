"""The bot's settings, `/api/bot/*` (full API; ours: the spec's scope table names `ai_agent`, `ai_kb_edit`,
`ai_behavior_edit`, `ai_provision` and `ai_audit_view` without the calls). Reading the settings and answers needs
`ai_agent` (or `ai_agent:read`); answers are added and removed with `ai_kb_edit`, the persona and hand-off words
set with `ai_behavior_edit`, the bot switched on or off with `ai_provision`; the hand-off trail needs
`ai_audit_view`. A member's dashboard session may call these with the same permissions. Stable-code errors.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.actions import bot as bot_actions
from inbox_actors.actions import permissions
from inbox_actors.conversations.bot import AnswerView
from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging import parameter_catalog as catalog
from inbox_actors.team import bot_settings
from inbox_http.contract import answers, takes
from inbox_http.encoding import json_response
from inbox_http.guard import accepts, current_caller, guarded, responds
from inbox_http.json_body import read_json_body
from inbox_http.outcome_answers import answer
from inbox_http.services import services

blueprint = Blueprint("bot", __name__, url_prefix="/api/bot")


@blueprint.get("/settings")
@responds(bot_settings.BotSettings)
@guarded(tier=ApiTier.FULL, scopes=permissions.BOT, dashboard=True)
async def read_settings():
    """The bot's settings: on or off, its persona, its hand-off words, who changed them last."""
    return json_response(await bot_settings.settings(services().db, current_caller().workspace_id))


@blueprint.patch("/settings")
@responds(bot_settings.BotSettings)
@guarded(tier=ApiTier.FULL, scopes=permissions.BOT_BEHAVIOUR, dashboard=True)
@takes(bot_settings.ChangeBehaviour)
async def change_behaviour():
    """Set the persona (the name its answers carry; "" for "bot") and the hand-off words ("" for none)."""
    body = await read_json_body(bot_settings.ChangeBehaviour)
    return answer(await bot_actions.change_behaviour(services().action_deps, current_caller(), body))


@blueprint.put("/enabled")
@responds(bot_settings.BotSettings)
@guarded(tier=ApiTier.FULL, scopes=permissions.BOT_PROVISION, dashboard=True)
@takes(bot_settings.SwitchBot)
async def switch():
    """Switch the bot on or off: {enabled}. Off, every customer message goes to a person (`bot_off`)."""
    body = await read_json_body(bot_settings.SwitchBot)
    return answer(await bot_actions.switch(services().action_deps, current_caller(), body.enabled))


@blueprint.get("/answers")
@responds(bot_settings.AnswerList)
@guarded(tier=ApiTier.FULL, scopes=permissions.BOT, dashboard=True)
async def list_answers():
    """The bot's FAQ answers, oldest first: keywords and the answer."""
    return json_response(await bot_settings.answers(services().db, current_caller().workspace_id))


@blueprint.post("/answers")
@responds(AnswerView, 201)
@guarded(tier=ApiTier.FULL, scopes=permissions.BOT_KNOWLEDGE, dashboard=True)
@takes(bot_settings.NewAnswer)
async def add_answer():
    """Add an answer: {keywords (1 to 20 words or phrases), answer (up to 4,096 characters)}."""
    body = await read_json_body(bot_settings.NewAnswer)
    return answer(await bot_actions.add_answer(services().action_deps, current_caller(), body), 201)


@blueprint.delete("/answers/<id:answer_id>")
@responds(bot_settings.AnswerRemoved)
@guarded(tier=ApiTier.FULL, scopes=permissions.BOT_KNOWLEDGE, dashboard=True)
@answers(404)
async def remove_answer(answer_id: int):
    """Remove an answer."""
    return answer(await bot_actions.remove_answer(services().action_deps, current_caller(), answer_id))


@blueprint.get("/handoffs")
@responds(bot_settings.HandoffPage)
@guarded(tier=ApiTier.FULL, scopes=permissions.BOT_AUDIT, dashboard=True)
@accepts(catalog.BOT_HANDOFFS)
async def handoffs():
    """The chats the bot handed to a person, newest first: phone, reason, time (window default 7 days, at most
    90; limit, cursor)."""
    state = services()
    return json_response(await bot_settings.handoffs(state.db, current_caller().workspace_id, request.args,
                                                     state.clock.now()))
