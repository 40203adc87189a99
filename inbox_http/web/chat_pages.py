"""One chat: `/app/chats/<phone>` (opening it records a view and clears its unread), the part of it that changes
(`…/live`: header, actions and thread, which the page's script reads again when the chat's events arrive), and the
forms a member acts with (claim, release, transfer, resolve, mark read, reply, template, a note, labels, snooze,
the contact's card).

Each form binds one of the declared use cases every front door calls (`use_cases/chats.py`, `use_cases/contacts.py`):
the runner checks the member's permission and the fields by the declaration's rules. Success answers a redirect
back to the chat (so a reload repeats nothing); a refusal shows the chat with its sentence and the refusal's
status.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from quart import Blueprint, redirect, request

from inbox_actors.live.event_stream import stream_position
from inbox_actors.use_cases import chat_view, chats, contacts
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import UseCase, run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.page_guard import signed_in
from inbox_http.web.pages import page, refused_page

blueprint = Blueprint("web_chats", __name__, url_prefix="/app/chats", template_folder="templates")

_DONE = {"claim": "You claimed this chat.", "release": "The chat is back in the queue.",
         "transfer": "The chat was transferred.", "resolve": "The chat is resolved.", "read": "Marked read.",
         "reply": "Sent.", "template": "Template sent.", "note": "Note added.", "label": "Label added.",
         "unlabel": "Label removed.", "snooze": "Snoozed.", "unsnooze": "Back in the open views.",
         "contact": "Contact saved."}
# What the snooze form offers: hours from now, or None for "until the customer writes".
SNOOZE_CHOICES = {"1h": 1, "4h": 4, "24h": 24, "reply": None}


@blueprint.get("/<phone>")
@signed_in
async def chat(phone: str):
    since = await stream_position(dependencies().db)
    view = await chat_view.open_chat_view(dependencies().use_case_deps, current_caller(), phone)
    if isinstance(view, Refused):
        return await refused_page(view)
    return await page("chat.html", chat=view, live_since=since, notice=_DONE.get(request.args.get("done", "")),
                      refusal=None)


@blueprint.get("/<phone>/live")
@signed_in
async def live(phone: str):
    view = await chat_view.chat_view(dependencies().use_case_deps, current_caller(), phone)
    if isinstance(view, Refused):
        return await refused_page(view)
    return await page("chat_live.html", chat=view)


@blueprint.post("/<phone>/<action>")
@signed_in
async def act(phone: str, action: str):
    """A form's fields as the arguments of the use case it binds, run as the member; the form's own encoding
    (a reason left blank, a template and its language in one choice, hours to snooze) read here, every rule
    the declaration's."""
    bound = _FORMS.get(action)
    if bound is None:
        return await refused_page(chats.no_such_chat())
    use_case, arguments = bound
    outcome = await run(dependencies().use_case_deps, current_caller(), use_case,
                        {**arguments(await request.form), "phone": phone}, strict=False)
    if isinstance(outcome, Refused):
        return await _refused(phone, outcome)
    return redirect(f"/app/chats/{phone}?done={action}", 303)


async def _refused(phone: str, refused: Refused):
    since = await stream_position(dependencies().db)
    view = await chat_view.chat_view(dependencies().use_case_deps, current_caller(), phone)
    if isinstance(view, Refused):
        return await refused_page(refused)
    return await page("chat.html", refused.status, chat=view, live_since=since, notice=None, refusal=refused.message,
                      contact_conflict=refused.code == "version_conflict")


def _filled(form, name: str) -> dict[str, str]:
    """A field the member filled in; one left blank is left out, as the API's caller leaves it out."""
    value = (form.get(name) or "").strip()
    return {name: value} if value else {}


def _nothing(form) -> dict[str, Any]:
    return {}


def _template(form) -> dict[str, Any]:
    name, _, language = (form.get("template") or "").partition("|")
    return {"template": name, "language": language or "en",
            "parameters": [value.strip() for value in form.getlist("parameter")]}


def _snooze(form) -> dict[str, Any]:
    choice = form.get("until") or ""
    if choice not in SNOOZE_CHOICES:
        return {"until": "choose how long"}
    hours = SNOOZE_CHOICES[choice]
    return {} if hours is None else {"until": (dependencies().clock.now() + timedelta(hours=hours)).isoformat()}


def _contact(form) -> dict[str, Any]:
    """The card as typed, judged by the card itself, against the version the form was shown with."""
    name = (form.get("attribute_name") or "").strip()
    return {"version": form.get("version", ""), "name": form.get("name") or "", "email": form.get("email") or "",
            "company": form.get("company") or "", "status": form.get("status") or "",
            "notes": form.get("notes") or "", "opted_out": form.get("opted_out") == "on",
            "tags": [tag.strip() for tag in (form.get("tags") or "").split(",") if tag.strip()],
            **({"attribute": [name, (form.get("attribute_value") or "").strip()]} if name else {})}


# Each form's use case, and how its fields become the use case's arguments.
_FORMS: dict[str, tuple[UseCase, Callable[[Any], dict[str, Any]]]] = {
    "claim": (chats.CLAIM, _nothing),
    "release": (chats.RELEASE, lambda form: _filled(form, "reason")),
    "transfer": (chats.TRANSFER, lambda form: {"to_user_id": form.get("to_user_id", ""), **_filled(form, "reason")}),
    "resolve": (chats.RESOLVE, lambda form: _filled(form, "reason")),
    "read": (chats.MARK_READ, _nothing),
    "reply": (chats.REPLY_TEXT, lambda form: {"text": (form.get("text") or "").strip()}),
    "template": (chats.REPLY_TEMPLATE, _template),
    "note": (chats.ADD_NOTE, lambda form: {"text": form.get("text") or ""}),
    "label": (chats.ADD_LABEL, lambda form: {"label": form.get("label") or ""}),
    "unlabel": (chats.REMOVE_LABEL, lambda form: {"label": form.get("label") or ""}),
    "snooze": (chats.SNOOZE, _snooze),
    "unsnooze": (chats.UNSNOOZE, _nothing),
    "contact": (contacts.EDIT_CARD, _contact),
}
assert set(_FORMS) == set(_DONE), "every form has its notice"
