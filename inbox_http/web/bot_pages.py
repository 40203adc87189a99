"""The bot for admins: `/app/bot`, its switch, its behaviour (persona, hand-off words), its FAQ answers and the
trail of the chats it handed to a person. Each form is one of the bot's use cases (`use_cases/bot.py`), run as the
member: the runner checks the member's permission and the arguments, the bot's rules (an answer's keywords, the
lengths) refuse with a sentence the page shows. Each part is offered only to a member its declaration allows, and
the page opens for those who may read the bot's settings (`bot.SETTINGS`).
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, redirect, request

from inbox_actors.use_cases import bot, chats
from inbox_actors.use_cases.outcomes import Outcome, Refused
from inbox_actors.use_cases.use_case import UseCase, run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.page_guard import WebRefusal, signed_in
from inbox_http.web.pages import page

blueprint = Blueprint("web_bot", __name__, url_prefix="/app/bot", template_folder="templates")

_DONE = {"on": "The bot is on.", "off": "The bot is off: every customer message goes to a person.",
         "behaviour": "The bot's behaviour is saved.", "added": "Answer added.", "removed": "Answer removed."}


def _require_reading() -> None:
    if not bot.SETTINGS.allows(current_caller()):
        raise WebRefusal(403, f"The bot's settings need the {bot.SETTINGS.needed()} permission.")


async def _run(use_case: UseCase, arguments: dict[str, Any]) -> Outcome:
    """A form's use case, run as the member (a form sends text: "true" stands for true)."""
    return await run(dependencies().use_case_deps, current_caller(), use_case, arguments, strict=False)


@blueprint.get("")
@signed_in
async def bot_page():
    _require_reading()
    return await _render(notice=_DONE.get(request.args.get("done", "")))


@blueprint.post("/enabled")
@signed_in
async def switch():
    _require_reading()
    outcome = await _run(bot.SWITCH, {"enabled": (await request.form).get("enabled", "")})
    if isinstance(outcome, Refused):
        return await _render(outcome)
    return redirect(f"/app/bot?done={'on' if outcome.data.enabled else 'off'}", 303)


@blueprint.post("/behaviour")
@signed_in
async def change_behaviour():
    _require_reading()
    form = await request.form
    outcome = await _run(bot.CHANGE_BEHAVIOUR, {"persona": form.get("persona", ""),
                                                "handoff_message": form.get("handoff_message", "")})
    if isinstance(outcome, Refused):
        return await _render(outcome, typed=form.to_dict())
    return redirect("/app/bot?done=behaviour", 303)


@blueprint.post("/answers")
@signed_in
async def add_answer():
    _require_reading()
    form = await request.form
    # Keywords are typed as the command line takes them, comma-separated; the bot's rules judge each one.
    outcome = await _run(bot.ADD_ANSWER, {"keywords": form.get("keywords", "").split(","),
                                          "answer": form.get("answer", "").strip()})
    if isinstance(outcome, Refused):
        return await _render(outcome, typed=form.to_dict())
    return redirect("/app/bot?done=added", 303)


@blueprint.post("/answers/<int:answer_id>/remove")
@signed_in
async def remove_answer(answer_id: int):
    _require_reading()
    outcome = await _run(bot.REMOVE_ANSWER, {"answer_id": answer_id})
    if isinstance(outcome, Refused):
        return await _render(outcome)
    return redirect("/app/bot?done=removed", 303)


async def _render(refused: Refused | None = None, notice: str | None = None, typed: dict | None = None):
    """The page as it is now, with a refusal's sentence and status when a form was refused, and that form's
    fields as they were typed (`typed`)."""
    caller = current_caller()
    handoffs, trail_refusal = None, None
    if bot.HANDOFFS.allows(caller):
        cursor = request.args.get("handoffs") if request.method == "GET" else None
        trail = await _run(bot.HANDOFFS, {"cursor": cursor} if cursor else {})
        if isinstance(trail, Refused):
            trail_refusal = trail.message
        else:
            handoffs = trail.data
    status = refused.status if refused else 400 if trail_refusal else 200
    return await page(
        "bot.html", status, settings=await _read(bot.SETTINGS), answers=(await _read(bot.ANSWERS)).data,
        handoffs=handoffs, trail_refusal=trail_refusal,
        may_switch=bot.SWITCH.allows(caller), may_edit_behaviour=bot.CHANGE_BEHAVIOUR.allows(caller),
        may_edit_answers=bot.ADD_ANSWER.allows(caller), may_open_chats=chats.SHOW.allows(caller),
        typed=typed or {}, notice=notice, refusal=refused.message if refused else None)


async def _read(use_case: UseCase) -> Any:
    """What a read the page shows answers (the page opens only for a member who may read the bot)."""
    outcome = await _run(use_case, {})
    if isinstance(outcome, Refused):
        raise WebRefusal(outcome.status, outcome.message)
    return outcome.data
