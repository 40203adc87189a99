"""The bot for admins, its first page: `/app/bot` (the AI agent: its switch, its behaviour, the "try it" box, its
usage and cost, and the trail of the chats it handed to a person). Its knowledge (FAQ answers, articles) and its
prices are the pages beside it, `bot_knowledge_pages.py` and `bot_price_pages.py`, which share the helpers here:
the three open for those who may read the bot's settings (`bot.SETTINGS`).

Each form is one of the bot's use cases (`use_cases/bot.py`), run as the member: the runner checks the member's
permission and the arguments, the bot's rules refuse with a sentence the page shows beside the form as it was
typed. Each part is offered only to a member its declaration allows.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, redirect, request

from inbox_actors.bot.settings import ANSWER_LENGTHS, LANGUAGES, MAX_BOT_TURNS, TONES
from inbox_actors.use_cases import bot, chats
from inbox_actors.use_cases.outcomes import Outcome, Refused
from inbox_actors.use_cases.use_case import UseCase, run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.page_guard import WebRefusal, signed_in
from inbox_http.web.pages import page
from inbox_http.web.usage_chart import cost_chart, usd

blueprint = Blueprint("web_bot", __name__, url_prefix="/app/bot", template_folder="templates")

_DONE = {"on": "The bot is on.", "off": "The bot is off: every customer message goes to a person.",
         "behaviour": "The bot's behaviour is saved."}


# -- what the bot's three pages share ------------------------------------------------------------------------


def require_reading() -> None:
    if not bot.SETTINGS.allows(current_caller()):
        raise WebRefusal(403, f"The bot's settings need the {bot.SETTINGS.needed()} permission.")


async def run_form(use_case: UseCase, arguments: dict[str, Any]) -> Outcome:
    """A form's use case, run as the member (a form sends text: "true" stands for true, "12" for 12)."""
    return await run(dependencies().use_case_deps, current_caller(), use_case, arguments, strict=False)


async def read(use_case: UseCase, arguments: dict[str, Any] | None = None) -> Any:
    """What a read the page shows answers; its refusal (a permission, a missing article) is the page's."""
    outcome = await run_form(use_case, arguments or {})
    if isinstance(outcome, Refused):
        raise WebRefusal(outcome.status, outcome.message)
    return outcome.data


def text_of(form, name: str) -> str:
    """A textarea's text: a browser sends its line breaks as CRLF (the form encoding's), saved as the API's "\n"."""
    return form.get(name, "").replace("\r\n", "\n")


def done_notice(notices: dict[str, str]) -> str | None:
    """The sentence a redirect after a form asks for (`?done=`), if it names one."""
    return notices.get(request.args.get("done", ""))


# -- the agent's page ----------------------------------------------------------------------------------------


@blueprint.get("")
@signed_in
async def bot_page():
    require_reading()
    return await _render(notice=done_notice(_DONE))


@blueprint.post("/enabled")
@signed_in
async def switch():
    require_reading()
    outcome = await run_form(bot.SWITCH, {"enabled": (await request.form).get("enabled", "")})
    if isinstance(outcome, Refused):
        return await _render(outcome)
    return redirect(f"/app/bot?done={'on' if outcome.data.enabled else 'off'}", 303)


@blueprint.post("/behaviour")
@signed_in
async def change_behaviour():
    require_reading()
    form = await request.form
    # An unticked box is not sent at all: its absence is false, and the page shows it as typed.
    typed = form.to_dict() | {"customer_language": "on" if form.get("customer_language") else ""}
    budget = form.get("monthly_budget_usd", "").strip()
    outcome = await run_form(bot.CHANGE_BEHAVIOUR, {
        **{name: form.get(name, "") for name in ("persona", "tone", "answer_length", "model")},
        **{name: text_of(form, name) for name in ("handoff_message", "system_prompt")},
        **{name: form.get(name, "").strip() for name in ("language", "temperature", "max_bot_turns")},
        "customer_language": bool(typed["customer_language"]),
        "monthly_budget_usd": budget or None})  # empty: no limit
    if isinstance(outcome, Refused):
        return await _render(outcome, typed=typed)
    return redirect("/app/bot?done=behaviour", 303)


@blueprint.post("/try")
@signed_in
async def try_agent():
    """A trial is shown on the page that answers the form, as nothing of it is kept to show again (its model
    calls are on the books, and its reply was sent to nobody)."""
    require_reading()
    text = text_of(await request.form, "text").strip()
    outcome = await run_form(bot.TRY, {"text": text})
    if isinstance(outcome, Refused):
        return await _render(outcome, typed={"text": text})
    return await _render(typed={"text": text}, trial=outcome.data)


async def _render(refused: Refused | None = None, notice: str | None = None, typed: dict | None = None,
                  trial: bot.Trial | None = None):
    """The page as it is now, with a refusal's sentence and status when a form was refused, that form's fields
    as they were typed (`typed`), and a trial's outcome when one was asked for."""
    caller = current_caller()
    handoffs, trail_refusal = None, None
    if bot.HANDOFFS.allows(caller):
        cursor = request.args.get("handoffs") if request.method == "GET" else None
        trail = await run_form(bot.HANDOFFS, {"cursor": cursor} if cursor else {})
        if isinstance(trail, Refused):
            trail_refusal = trail.message
        else:
            handoffs = trail.data
    usage = await read(bot.USAGE) if bot.USAGE.allows(caller) else None
    settings = dependencies().settings
    status = refused.status if refused else 400 if trail_refusal else 200
    return await page(
        "bot.html", status, here="agent", settings=await read(bot.SETTINGS), handoffs=handoffs,
        trail_refusal=trail_refusal, usage=usage, chart=cost_chart(usage) if usage else None, usd=usd, trial=trial,
        tones=TONES, answer_lengths=ANSWER_LENGTHS, languages=LANGUAGES, max_bot_turns=MAX_BOT_TURNS,
        default_model=settings.model if settings.has_model else "the service's default",
        may_switch=bot.SWITCH.allows(caller), may_edit_behaviour=bot.CHANGE_BEHAVIOUR.allows(caller),
        may_try=bot.TRY.allows(caller), may_open_chats=chats.SHOW.allows(caller),
        typed=typed or {}, notice=notice, refusal=refused.message if refused else None)
