"""One chat: `/app/chats/<phone>` (opening it records a view and clears its unread), the part of it that changes
(`…/live`: header, actions and thread, which the page's script reads again when the chat's events arrive), and the
forms a member acts with (claim, release, transfer, resolve, mark read, reply, template, a note, labels, snooze,
the contact's card).

Each form is one of the chat use cases every front door calls (`actions/chats.py`), its fields checked by the same
argument types MCP and the connectors use (`actions/catalog.py`), after the same permission the REST routes ask
for. Success answers a redirect back to the chat (so a reload repeats nothing); a refusal shows the chat with its
sentence and the refusal's status.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from quart import Blueprint, redirect, request

from inbox_actors.actions import catalog, chat_view, chats, contacts, permissions
from inbox_actors.actions.outcomes import Reason, Refused, reason_of_status
from inbox_actors.contacts.contact_card import ContactRefusal, EditContact
from inbox_actors.live.event_stream import stream_position
from inbox_actors.platform.payloads import SendRequest
from inbox_http.services import services
from inbox_http.web.page_guard import current_caller, signed_in
from inbox_http.web.pages import form_fields, page, refused_page

blueprint = Blueprint("web_chats", __name__, url_prefix="/app/chats", template_folder="templates")

_DONE = {"claim": "You claimed this chat.", "release": "The chat is back in the queue.",
         "transfer": "The chat was transferred.", "resolve": "The chat is resolved.", "read": "Marked read.",
         "reply": "Sent.", "template": "Template sent.", "note": "Note added.", "label": "Label added.",
         "unlabel": "Label removed.", "snooze": "Snoozed.", "unsnooze": "Back in the open views.",
         "contact": "Contact saved."}
# What the snooze form offers: hours from now, or None for "until the customer writes".
SNOOZE_CHOICES = {"1h": 1, "4h": 4, "24h": 24, "reply": None}
VERSION_CONFLICT = ("Someone else changed this contact while you were editing it. The card shows their version; "
                    "nothing you typed was saved, so make your change again on it.")


@blueprint.get("/<phone>")
@signed_in
async def chat(phone: str):
    since = await stream_position(services().db)
    view = await chat_view.open_chat_view(services().action_deps, current_caller(), phone)
    if isinstance(view, Refused):
        return await refused_page(view)
    return await page("chat.html", chat=view, live_since=since, notice=_DONE.get(request.args.get("done", "")),
                      refusal=None)


@blueprint.get("/<phone>/live")
@signed_in
async def live(phone: str):
    view = await chat_view.chat_view(services().action_deps, current_caller(), phone)
    if isinstance(view, Refused):
        return await refused_page(view)
    return await page("chat_live.html", chat=view)


@blueprint.post("/<phone>/<action>")
@signed_in
async def act(phone: str, action: str):
    caller = current_caller()
    if action not in _DONE:
        return await refused_page(chats.no_such_chat())
    needs = permissions.CONTACTS if action == "contact" else permissions.CHAT_ACTIONS
    if not caller.may(needs, "POST"):
        return await _refused(phone, Refused(Reason.PERMISSION, f"This needs the {needs[0]} permission.", 403))
    form = await request.form
    outcome = await _ACTIONS[action](phone, form)
    if isinstance(outcome, Refused):
        return await _refused(phone, outcome)
    return redirect(f"/app/chats/{phone}?done={action}", 303)


async def _refused(phone: str, refused: Refused):
    since = await stream_position(services().db)
    view = await chat_view.chat_view(services().action_deps, current_caller(), phone)
    if isinstance(view, Refused):
        return await refused_page(refused)
    return await page("chat.html", refused.status, chat=view, live_since=since, notice=None, refusal=refused.message,
                      contact_conflict=refused.code == "version_conflict")


def _reason(form) -> str | None:
    return (form.get("reason") or "").strip() or None


async def _claim(phone: str, form) -> object:
    return await chats.claim(services().action_deps, current_caller(), phone)


async def _release(phone: str, form) -> object:
    args = form_fields(catalog.ChatWithReason, {"phone": phone, "reason": _reason(form)})
    return args if isinstance(args, Refused) else await chats.release(
        services().action_deps, current_caller(), phone, args.reason)


async def _resolve(phone: str, form) -> object:
    args = form_fields(catalog.ChatWithReason, {"phone": phone, "reason": _reason(form)})
    return args if isinstance(args, Refused) else await chats.resolve(
        services().action_deps, current_caller(), phone, args.reason)


async def _transfer(phone: str, form) -> object:
    args = form_fields(catalog.TransferChat, {"phone": phone, "to_user_id": form.get("to_user_id", ""),
                                          "reason": _reason(form)}, strict=False)
    return args if isinstance(args, Refused) else await chats.transfer(
        services().action_deps, current_caller(), phone, args.to_user_id, args.reason)


async def _read(phone: str, form) -> object:
    return await chats.mark_read(services().action_deps, current_caller(), phone)


async def _reply(phone: str, form) -> object:
    text = (form.get("text") or "").strip()
    args = form_fields(catalog.ReplyInChat, {"phone": phone, "text": text})
    return args if isinstance(args, Refused) else await chats.reply(
        services().action_deps, current_caller(), phone, SendRequest(to="", type="text", text=args.text))


async def _template(phone: str, form) -> object:
    name, _, language = (form.get("template") or "").partition("|")
    parameters = [value.strip() for value in form.getlist("parameter")]
    args = form_fields(catalog.SendTemplate, {"to": phone, "template": name, "language": language or "en",
                                          "parameters": parameters}, strict=False)
    return args if isinstance(args, Refused) else await chats.reply(
        services().action_deps, current_caller(), phone,
        SendRequest(to="", type="template", template_name=args.template, template_language=args.language,
                    template_parameters=tuple(args.parameters)))


async def _note(phone: str, form) -> object:
    return await chats.add_note(services().action_deps, current_caller(), phone, form.get("text") or "")


async def _label(phone: str, form) -> object:
    return await chats.label(services().action_deps, current_caller(), phone, form.get("label") or "", add=True)


async def _unlabel(phone: str, form) -> object:
    return await chats.label(services().action_deps, current_caller(), phone, form.get("label") or "", add=False)


async def _snooze(phone: str, form) -> object:
    choice = form.get("until") or ""
    if choice not in SNOOZE_CHOICES:
        return Refused(Reason.INVALID, "Choose how long to snooze the chat.", 400, "invalid_arguments")
    hours = SNOOZE_CHOICES[choice]
    until = None if hours is None else services().clock.now() + timedelta(hours=hours)
    return await chats.snooze(services().action_deps, current_caller(), phone, until)


async def _unsnooze(phone: str, form) -> object:
    return await chats.unsnooze(services().action_deps, current_caller(), phone)


async def _contact(phone: str, form) -> object:
    """The card's fields as typed, judged by the card itself, against the version the form was shown with: a
    change made meanwhile by someone else is never overwritten."""
    version = form.get("version", "")
    if not version.isdigit():
        return Refused(Reason.INVALID, "Reload the page and edit the contact again.", 400, "invalid_arguments")
    edit = EditContact(
        name=(form.get("name") or "").strip(), email=(form.get("email") or "").strip() or None,
        company=(form.get("company") or "").strip() or None, status=(form.get("status") or "").strip(),
        notes=(form.get("notes") or "").strip() or None,
        tags=tuple(tag.strip() for tag in (form.get("tags") or "").split(",") if tag.strip()),
        opted_out=form.get("opted_out") == "on", expected_version=int(version), actor=current_caller().author,
        **_attribute(form))
    saved = await contacts.change(services().action_deps, current_caller(), phone, edit)
    if isinstance(saved, ContactRefusal):
        if saved.code == "version_conflict":
            return Refused(Reason.REFUSED, VERSION_CONFLICT, saved.status, saved.code)
        return Refused(reason_of_status(saved.status), saved.sentence, saved.status, saved.code or "contact_refused")
    return saved


def _attribute(form) -> dict[str, Any]:
    """One custom attribute set (or, with no value, removed) along with the card, when the form names one."""
    name = (form.get("attribute_name") or "").strip()
    if not name:
        return {}
    value = (form.get("attribute_value") or "").strip()
    return {"attributes": {name: value or None}}


_ACTIONS = {"claim": _claim, "release": _release, "transfer": _transfer, "resolve": _resolve, "read": _read,
            "reply": _reply, "template": _template, "note": _note, "label": _label, "unlabel": _unlabel,
            "snooze": _snooze, "unsnooze": _unsnooze, "contact": _contact}
