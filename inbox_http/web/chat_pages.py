"""One chat, open in the agent workspace: `/app/chats/<phone>?view=…` (opening it records a view and clears its
unread), the parts of it that change (`…/live`: its head and thread, which the page's script reads again when the
chat's events arrive; `…/composer`), its customer's files (`…/media/<message id>`, the Reporting API's media
read with the member's session), and the forms a member acts with (claim, release, transfer, resolve, mark
read, reply, template, a note, labels, snooze, the contact's card). A contact who has no chat yet opens at the same
address (`NewChat`), with the templates that start a chat (`start`: `chats.SEND_TEMPLATE`, which makes it).

Each form binds one of the declared use cases every front door calls (`use_cases/chats.py`, `use_cases/contacts.py`):
the runner checks the member's permission and the fields by the declaration's rules. Without the script, success
answers a redirect back to the chat (so a reload repeats nothing) and a refusal shows the chat with its sentence
and the refusal's status. With it, the answer is the parts of the chat the action changed, swapped in place; a
composed message (reply, template, note) carries its own key and goes once (`composer.py`), and a refused one
comes back with its text and the sentence beside it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from quart import Blueprint, redirect, request

from inbox_actors.use_cases import chat_organising, chats, contacts, reports
from inbox_actors.use_cases.chat_view import ChatView
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import UseCase, run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.media_answer import media_response
from inbox_http.web import attachments, composer, fragments, workspace
from inbox_http.web.page_guard import signed_in
from inbox_http.web.pages import refused_page
from inbox_http.web.workspace import COMPOSER, CONTACT, HEAD, NOTICE, THREAD

blueprint = Blueprint("web_chats", __name__, url_prefix="/app/chats", template_folder="templates")

_DONE = {"claim": "You claimed this chat.", "release": "The chat is back in the queue.",
         "transfer": "The chat was transferred.", "resolve": "The chat is resolved.", "read": "Marked read.",
         "reply": "Sent.", "template": "Template sent.", "note": "Note added.", "label": "Label added.",
         "unlabel": "Label removed.", "snooze": "Snoozed.", "unsnooze": "Back in the open views.",
         "contact": "Contact saved.", "start": "Template sent.", "team": "The chat is in that team's queue."}
# What the snooze form offers: hours from now, or None for "until the customer writes".
SNOOZE_CHOICES = {"1h": 1, "4h": 4, "24h": 24, "reply": None}


@blueprint.get("/<phone>")
@signed_in
async def chat(phone: str):
    where = workspace.place(phone)
    target = fragments.wanted()
    if target == "list-pane":
        return await workspace.list_part(where, "list_pane")
    view = await workspace.read_chat(phone, opening=True)
    if isinstance(view, Refused):
        return await refused_page(view)
    if target == "chat-pane":
        return await workspace.chat_pane(where, view)
    return await workspace.whole_page(where, view, notice=_DONE.get(request.args.get("done", "")))


@blueprint.get("/<phone>/live")
@signed_in
async def live(phone: str):
    view = await workspace.read_chat(phone, opening=False)
    if isinstance(view, Refused):
        return await refused_page(view)
    if not isinstance(view, ChatView):  # a contact without a chat yet: the pane, whole
        return await workspace.chat_pane(workspace.place(phone), view)
    return await workspace.chat_parts(workspace.place(phone), view, (HEAD, THREAD))


@blueprint.get("/<phone>/composer")
@signed_in
async def composer_part(phone: str):
    view = await workspace.read_chat(phone, opening=False)
    if isinstance(view, Refused):
        return await refused_page(view)
    if not isinstance(view, ChatView):
        return await workspace.chat_pane(workspace.place(phone), view)
    return await workspace.chat_parts(workspace.place(phone), view, (COMPOSER,))


@blueprint.get("/<phone>/media/<int:message_id>")
@signed_in
async def media(phone: str, message_id: int):
    """A customer's file in the chat, as the Reporting API's media read answers it, for the member's session."""
    outcome = await run(dependencies().use_case_deps, current_caller(), reports.MEDIA,
                        {"phone": phone, "message_id": message_id})
    if isinstance(outcome, Refused):
        return await refused_page(outcome)
    return media_response(outcome.data)


@blueprint.post("/<phone>/<action>")
@signed_in
async def act(phone: str, action: str):
    """A form's fields as the arguments of the use case it binds, run as the member; the form's own encoding
    (a reason left blank, a template and its language in one choice, hours to snooze, a text area's line breaks)
    read here, every rule the declaration's."""
    bound = _FORMS.get(action)
    if bound is None:
        return await refused_page(chats.no_such_chat())
    use_case, arguments = bound
    form = await request.form
    # A reply that carries a file is the reply with an attachment (attachments.py).
    use_case, given = await attachments.attached(action, form) or (use_case, arguments(form))
    outcome = await composer.run_composed(use_case, {**given, _PHONE_FIELD.get(action, "phone"): phone})
    where = workspace.place(phone)
    if isinstance(outcome, Refused):
        return await _refused(where, action, form, outcome)
    if not fragments.from_script():
        return redirect(f"/app/chats/{phone}?{where.query(done=action)}", 303)
    view = await workspace.read_chat(phone, opening=False)
    if isinstance(view, Refused):  # the action took the chat out of this member's sight
        return await workspace.chat_pane(where, None, notice=_DONE[action])
    if action in _WHOLE_PANE or not isinstance(view, ChatView):
        return await workspace.chat_pane(where, view, notice=_DONE[action])
    draft = _DRAFTS.get(action)
    return await workspace.chat_parts(where, view, _CHANGES[action], notice=_DONE[action],
                                      trigger=json.dumps({"inbox:sent": {"draft": draft}}) if draft else None)


async def _refused(where: workspace.Place, action: str, form, refused: Refused):
    """The chat with the refusal: beside the box for a composed message (its text kept), on the contact card for
    the card, above the chat for the rest."""
    view = await workspace.read_chat(where.phone or "", opening=False)
    if isinstance(view, Refused):
        return await refused_page(refused)
    if action in _WHOLE_PANE or not isinstance(view, ChatView):
        if not fragments.from_script():
            return await workspace.whole_page(where, view, refused.status, refusal=refused.message)
        response = await workspace.chat_pane(where, view, refusal=refused.message)
        response.status_code = refused.status
        return response
    pane: dict[str, Any] = {}
    if action in _COMPOSED:
        pane["composer"] = composer.refused(_COMPOSED[action](form), _as_typed(form), refused)
    elif action == "contact":
        pane.update(contact_refusal=refused.message, contact_conflict=refused.code == "version_conflict")
    else:
        pane["refusal"] = refused.message
    if not fragments.from_script():
        return await workspace.whole_page(where, view, refused.status, **pane)
    return await workspace.chat_parts(where, view, _CHANGES[action], refused.status, **pane)


def _as_typed(form) -> dict[str, Any]:
    """A refused composer form's fields, to show them again: its values (a template's in order), text areas
    with the line breaks they were typed with."""
    return {name: form.getlist(name) if name == "parameter" else composer.form_text(form, name) for name in form}


def _filled(form, name: str) -> dict[str, str]:
    """A field the member filled in; one left blank is left out, as the API's caller leaves it out."""
    value = (form.get(name) or "").strip()
    return {name: value} if value else {}


def _nothing(form) -> dict[str, Any]:
    return {}


def _template(form) -> dict[str, Any]:
    name, _, language = (form.get("template") or "").partition("|")
    return {"template": name, "language": language or "en",
            "parameters": [value.strip() for value in form.getlist("parameter")], **composer.key_of(form)}


def _start(form) -> dict[str, Any]:
    """A template to a contact without a chat: the API's template send (`to` is the page's phone), unkeyed."""
    return {name: value for name, value in _template(form).items() if name != composer.KEY_FIELD}


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


def _team_choice(form) -> int | str | None:
    """The team chosen: its id, or none for the workspace's own queue (anything else is refused as typed)."""
    chosen = (form.get("team_id") or "").strip()
    return None if chosen in ("", "none") else int(chosen) if chosen.isdigit() else chosen


# Each form's use case, and how its fields become the use case's arguments.
_FORMS: dict[str, tuple[UseCase, Callable[[Any], dict[str, Any]]]] = {
    "claim": (chats.CLAIM, _nothing),
    "release": (chats.RELEASE, lambda form: _filled(form, "reason")),
    "transfer": (chats.TRANSFER, lambda form: {"to_user_id": form.get("to_user_id", ""), **_filled(form, "reason")}),
    "resolve": (chats.RESOLVE, lambda form: _filled(form, "reason")),
    "read": (chats.MARK_READ, _nothing),
    "reply": (chats.REPLY_TEXT, lambda form: {"text": composer.form_text(form, "text").strip(),
                                              **composer.key_of(form)}),
    "template": (chats.REPLY_TEMPLATE, _template),
    "note": (chat_organising.ADD_NOTE,
             lambda form: {"text": composer.form_text(form, "text"), **composer.key_of(form)}),
    "label": (chat_organising.ADD_LABEL, lambda form: {"label": form.get("label") or ""}),
    "unlabel": (chat_organising.REMOVE_LABEL, lambda form: {"label": form.get("label") or ""}),
    "snooze": (chat_organising.SNOOZE, _snooze),
    "team": (chat_organising.ROUTE_TO_TEAM, lambda form: {"team_id": _team_choice(form), **_filled(form, "reason")}),
    "unsnooze": (chat_organising.UNSNOOZE, _nothing),
    "contact": (contacts.EDIT_CARD, _contact),
    "start": (chats.SEND_TEMPLATE, _start),
}
# The argument the page's phone is, where it is not `phone`.
_PHONE_FIELD = {"start": "to"}
# The actions whose answer is the whole chat pane: starting a chat turns a contact's pane into the chat's.
_WHOLE_PANE = {"start"}
# The composed messages, and which of the composer's forms each was sent from.
_COMPOSED: dict[str, Callable[[Any], str]] = {
    "reply": lambda form: "reply", "note": lambda form: "note",
    "template": lambda form: f"template:{form.get('template') or ''}"}
# The draft (kept in the browser per chat) a composed message's success ends.
_DRAFTS = {"reply": "reply", "note": "note"}
# The parts of the chat each action changes: what its answer swaps.
_COMPOSED_PARTS = (COMPOSER, THREAD, HEAD, NOTICE)
_CHANGES: dict[str, tuple[str, ...]] = {
    **{action: (HEAD, NOTICE) for action in ("claim", "release", "transfer", "resolve", "read", "label", "unlabel",
                                             "snooze", "unsnooze", "team")},
    **{action: _COMPOSED_PARTS for action in _COMPOSED}, "contact": (CONTACT, NOTICE), "start": ()}
assert set(_FORMS) == set(_DONE) == set(_CHANGES), "every form has its notice and its parts"
