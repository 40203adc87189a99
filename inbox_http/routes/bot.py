"""The bot's settings, `/api/bot/*` (full API; ours: the spec's scope table names `ai_agent`, `ai_kb_edit`,
`ai_behavior_edit`, `ai_provision` and `ai_audit_view` without the calls). Each call binds one of the bot's use
cases (`use_cases/bot.py`: their permissions and rules): reading the settings and answers, the answers added and
removed, the persona and hand-off words set, the bot switched on or off, and the hand-off trail. A member's
dashboard session may call these with the same permissions. Stable-code errors.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.ai_agent import usage
from inbox_actors.bot import settings
from inbox_actors.conversations.bot import AnswerView
from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging import parameter_catalog as catalog
from inbox_actors.use_cases import bot
from inbox_http.contract import answers, body_of, takes
from inbox_http.dependencies import dependencies
from inbox_http.encoding import json_response
from inbox_http.guard import accepts, current_caller, guarded, responds
from inbox_http.outcome_answers import run_route

blueprint = Blueprint("bot", __name__, url_prefix="/api/bot")


@blueprint.get("/settings")
@responds(settings.BotSettings)
@guarded(tier=ApiTier.FULL, use_case=bot.SETTINGS, dashboard=True)
async def read_settings():
    """The bot's settings: on or off, its persona, its hand-off words, who changed them last."""
    return await run_route(bot.SETTINGS)


@blueprint.patch("/settings")
@responds(settings.BotSettings)
@guarded(tier=ApiTier.FULL, use_case=bot.CHANGE_BEHAVIOUR, dashboard=True)
@takes(body_of(bot.CHANGE_BEHAVIOUR, path=()))
async def change_behaviour():
    """Set the persona (the name its answers carry; "" for "bot") and the hand-off words ("" for none)."""
    return await run_route(bot.CHANGE_BEHAVIOUR, body=True)


@blueprint.put("/enabled")
@responds(settings.BotSettings)
@guarded(tier=ApiTier.FULL, use_case=bot.SWITCH, dashboard=True)
@takes(body_of(bot.SWITCH, path=()))
async def switch():
    """Switch the bot on or off: {enabled}. Off, every customer message goes to a person (`bot_off`)."""
    return await run_route(bot.SWITCH, body=True)


@blueprint.get("/answers")
@responds(settings.AnswerList)
@guarded(tier=ApiTier.FULL, use_case=bot.ANSWERS, dashboard=True)
async def list_answers():
    """The bot's FAQ answers, oldest first: keywords and the answer."""
    return await run_route(bot.ANSWERS)


@blueprint.post("/answers")
@responds(AnswerView, 201)
@guarded(tier=ApiTier.FULL, use_case=bot.ADD_ANSWER, dashboard=True)
@takes(body_of(bot.ADD_ANSWER, path=()))
async def add_answer():
    """Add an answer: {keywords (1 to 20 words or phrases), answer (up to 4,096 characters)}."""
    return await run_route(bot.ADD_ANSWER, 201, body=True)


@blueprint.delete("/answers/<id:answer_id>")
@responds(settings.AnswerRemoved)
@guarded(tier=ApiTier.FULL, use_case=bot.REMOVE_ANSWER, dashboard=True)
@answers(404)
async def remove_answer(answer_id: int):
    """Remove an answer."""
    return await run_route(bot.REMOVE_ANSWER, answer_id=answer_id)


@blueprint.get("/handoffs")
@responds(settings.HandoffPage)
@guarded(tier=ApiTier.FULL, use_case=bot.HANDOFFS, dashboard=True)
@accepts(catalog.BOT_HANDOFFS)
async def handoffs():
    """The chats the bot handed to a person, newest first: phone, reason, time (window default 7 days, at most
    90; limit, cursor)."""
    # The query as given, read by the trail's own rules: `from`/`until` as aliases, and a cursor that remembers
    # every parameter of its call (`paging/cursors.fingerprint`).
    state = dependencies()
    return json_response(await settings.handoffs(state.db, current_caller().workspace_id, request.args,
                                                 state.clock.now()))


@blueprint.get("/usage")
@responds(usage.Usage)
@guarded(tier=ApiTier.FULL, use_case=bot.USAGE, dashboard=True)
@accepts(catalog.BOT_USAGE)
async def read_usage():
    """The AI agent's model calls by day (UTC) and model: calls, replies, failures, tokens, cost in US dollars and
    average latency; totals with the month's spend and the credit balance (window default 7 days, at most 90)."""
    return await run_route(bot.USAGE, since=request.args.get("from", request.args.get("since")),
                           to=request.args.get("to", request.args.get("until")))


@blueprint.get("/chats/<phone>/replies")
@responds(usage.GroundedReplies)
@guarded(tier=ApiTier.FULL, use_case=bot.REPLIES, dashboard=True)
@accepts(catalog.BOT_REPLIES)
@answers(404)
async def chat_replies(phone: str):
    """The AI agent's replies in one chat, newest first: each with the model, tokens, cost, latency, and what
    grounded it (the knowledge passages and the price rows its quote_price calls returned)."""
    return await run_route(bot.REPLIES, phone=phone, limit=request.args.get("limit"))


@blueprint.post("/try")
@responds(bot.Trial)
@guarded(tier=ApiTier.FULL, use_case=bot.TRY, dashboard=True)
@takes(body_of(bot.TRY, path=()))
async def try_agent():
    """Try the AI agent: {text} as a customer would write it. Answers what it would reply or why it would hand
    over, the passages and prices it used, tokens, cost and time. Nothing is sent; the model calls are recorded as
    trials in the usage."""
    return await run_route(bot.TRY, body=True)
