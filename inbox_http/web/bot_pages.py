"""The bot for admins: `/app/bot`, its switch, its behaviour (persona, hand-off words), its FAQ answers and the
trail of the chats it handed to a person. Each form is one of the bot's use cases (`actions/bot.py`), whose rules
(an answer's keywords, the lengths) answer with a refusal the page shows; each part is offered only to a member
holding its permission (`permissions.BOT_*`), and the page opens for those who may read the bot's settings.
"""

from __future__ import annotations

from quart import Blueprint, redirect, request

from inbox_actors.actions import bot as bot_actions
from inbox_actors.actions import permissions
from inbox_actors.actions.outcomes import Refused
from inbox_actors.paging.parameters import InvalidParameter
from inbox_actors.team import bot_settings
from inbox_http.services import services
from inbox_http.web.page_guard import WebRefusal, current_caller, signed_in
from inbox_http.web.pages import form_fields, page

blueprint = Blueprint("web_bot", __name__, url_prefix="/app/bot", template_folder="templates")

_DONE = {"on": "The bot is on.", "off": "The bot is off: every customer message goes to a person.",
         "behaviour": "The bot's behaviour is saved.", "added": "Answer added.", "removed": "Answer removed."}


def _may(needs: tuple[str, ...], method: str = "POST") -> bool:
    return current_caller().may(needs, method)


def _require_reading() -> None:
    if not _may(permissions.BOT, "GET"):
        raise WebRefusal(403, "The bot's settings need the ai_agent permission.")


def _require(needs: tuple[str, ...], sentence: str) -> None:
    """A change's permission, for a member who may open the page (the only one that offers the change)."""
    _require_reading()
    if not _may(needs):
        raise WebRefusal(403, sentence)


@blueprint.get("")
@signed_in
async def bot_page():
    _require_reading()
    return await _render(notice=_DONE.get(request.args.get("done", "")))


@blueprint.post("/enabled")
@signed_in
async def switch():
    _require(permissions.BOT_PROVISION, "Switching the bot on or off needs the ai_provision permission.")
    body = form_fields(bot_settings.SwitchBot, {"enabled": (await request.form).get("enabled", "")}, strict=False)
    outcome = body if isinstance(body, Refused) else await bot_actions.switch(
        services().action_deps, current_caller(), body.enabled)
    if isinstance(outcome, Refused):
        return await _render(outcome)
    return redirect(f"/app/bot?done={'on' if outcome.enabled else 'off'}", 303)


@blueprint.post("/behaviour")
@signed_in
async def change_behaviour():
    _require(permissions.BOT_BEHAVIOUR, "The bot's behaviour needs the ai_behavior_edit permission.")
    form = await request.form
    body = form_fields(bot_settings.ChangeBehaviour, {"persona": form.get("persona", ""),
                                                  "handoff_message": form.get("handoff_message", "")})
    if not isinstance(body, Refused):
        body = await bot_actions.change_behaviour(services().action_deps, current_caller(), body)
    if isinstance(body, Refused):
        return await _render(body, typed=form.to_dict())
    return redirect("/app/bot?done=behaviour", 303)


@blueprint.post("/answers")
@signed_in
async def add_answer():
    _require(permissions.BOT_KNOWLEDGE, "The bot's answers need the ai_kb_edit permission.")
    form = await request.form
    # Keywords are typed as the command line takes them, comma-separated; the bot's rules judge each one.
    body = form_fields(bot_settings.NewAnswer, {"keywords": form.get("keywords", "").split(","),
                                            "answer": form.get("answer", "").strip()})
    if not isinstance(body, Refused):
        body = await bot_actions.add_answer(services().action_deps, current_caller(), body)
    if isinstance(body, Refused):
        return await _render(body, typed=form.to_dict())
    return redirect("/app/bot?done=added", 303)


@blueprint.post("/answers/<int:answer_id>/remove")
@signed_in
async def remove_answer(answer_id: int):
    _require(permissions.BOT_KNOWLEDGE, "The bot's answers need the ai_kb_edit permission.")
    outcome = await bot_actions.remove_answer(services().action_deps, current_caller(), answer_id)
    if isinstance(outcome, Refused):
        return await _render(outcome)
    return redirect("/app/bot?done=removed", 303)


async def _render(refused: Refused | None = None, notice: str | None = None, typed: dict | None = None):
    """The page as it is now, with a refusal's sentence and status when a form was refused, and that form's
    fields as they were typed (`typed`)."""
    state, caller = services(), current_caller()
    handoffs, trail_refusal = None, None
    if _may(permissions.BOT_AUDIT, "GET"):
        cursor = request.args.get("handoffs") if request.method == "GET" else None
        try:
            handoffs = await bot_settings.handoffs(state.db, caller.workspace_id,
                                                   {"cursor": cursor} if cursor else {}, state.clock.now())
        except InvalidParameter as err:
            trail_refusal = err.message
    status = refused.status if refused else 400 if trail_refusal else 200
    return await page(
        "bot.html", status,
        settings=await bot_settings.settings(state.db, caller.workspace_id),
        answers=(await bot_settings.answers(state.db, caller.workspace_id)).data,
        handoffs=handoffs, trail_refusal=trail_refusal,
        may_switch=_may(permissions.BOT_PROVISION), may_edit_behaviour=_may(permissions.BOT_BEHAVIOUR),
        may_edit_answers=_may(permissions.BOT_KNOWLEDGE), may_open_chats=_may(permissions.CHAT_CONTENT, "GET"),
        typed=typed or {}, notice=notice, refusal=refused.message if refused else None)
