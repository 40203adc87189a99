"""One chat: `/app/chats/<phone>` (opening it records a view and clears its unread), the part of it that changes
(`…/live`: header, actions and thread, which the page's script reads again when the chat's events arrive), and the
forms a member acts with (claim, release, transfer, resolve, mark read, reply, template).

Each form is one of the chat use cases every front door calls (`actions/chats.py`), its fields checked by the same
argument types MCP and the connectors use (`actions/catalog.py`), after the same permission the REST routes ask
for. Success answers a redirect back to the chat (so a reload repeats nothing); a refusal shows the chat with its
sentence and the refusal's status.
"""

from __future__ import annotations

from typing import Any

import msgspec
from quart import Blueprint, redirect, request

from inbox_actors.actions import catalog, chat_view, chats, permissions
from inbox_actors.actions.outcomes import Reason, Refused
from inbox_actors.platform.payloads import SendRequest
from inbox_http.services import services
from inbox_http.web.page_guard import current_caller, signed_in
from inbox_http.web.pages import page, refused_page

blueprint = Blueprint("web_chats", __name__, url_prefix="/app/chats", template_folder="templates")

_DONE = {"claim": "You claimed this chat.", "release": "The chat is back in the queue.",
         "transfer": "The chat was transferred.", "resolve": "The chat is resolved.", "read": "Marked read.",
         "reply": "Sent.", "template": "Template sent."}


@blueprint.get("/<phone>")
@signed_in
async def chat(phone: str):
    view = await chat_view.open_chat_view(services().action_deps, current_caller(), phone)
    if isinstance(view, Refused):
        return await refused_page(view)
    return await page("chat.html", chat=view, notice=_DONE.get(request.args.get("done", "")), refusal=None)


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
    if not caller.may(permissions.CHAT_ACTIONS, "POST"):
        return await _refused(phone, Refused(Reason.PERMISSION, "Acting on chats needs the inbox permission.", 403))
    form = await request.form
    outcome = await _ACTIONS[action](phone, form)
    if isinstance(outcome, Refused):
        return await _refused(phone, outcome)
    return redirect(f"/app/chats/{phone}?done={action}", 303)


async def _refused(phone: str, refused: Refused):
    view = await chat_view.chat_view(services().action_deps, current_caller(), phone)
    if isinstance(view, Refused):
        return await refused_page(refused)
    return await page("chat.html", refused.status, chat=view, notice=None, refusal=refused.message)


def _fields(kind: type, values: dict[str, Any]) -> Any:
    """The form's fields as the catalog's argument type, or a `Refused` saying what is wrong."""
    try:
        return msgspec.convert(values, type=kind, strict=False)
    except msgspec.ValidationError as err:
        return Refused(Reason.INVALID, f"Check the form: {err}.", 400, "invalid_arguments")


def _reason(form) -> str | None:
    return (form.get("reason") or "").strip() or None


async def _claim(phone: str, form) -> object:
    return await chats.claim(services().action_deps, current_caller(), phone)


async def _release(phone: str, form) -> object:
    args = _fields(catalog.ChatWithReason, {"phone": phone, "reason": _reason(form)})
    return args if isinstance(args, Refused) else await chats.release(
        services().action_deps, current_caller(), phone, args.reason)


async def _resolve(phone: str, form) -> object:
    args = _fields(catalog.ChatWithReason, {"phone": phone, "reason": _reason(form)})
    return args if isinstance(args, Refused) else await chats.resolve(
        services().action_deps, current_caller(), phone, args.reason)


async def _transfer(phone: str, form) -> object:
    args = _fields(catalog.TransferChat, {"phone": phone, "to_user_id": form.get("to_user_id", ""),
                                          "reason": _reason(form)})
    return args if isinstance(args, Refused) else await chats.transfer(
        services().action_deps, current_caller(), phone, args.to_user_id, args.reason)


async def _read(phone: str, form) -> object:
    return await chats.mark_read(services().action_deps, current_caller(), phone)


async def _reply(phone: str, form) -> object:
    text = (form.get("text") or "").strip()
    args = _fields(catalog.ReplyInChat, {"phone": phone, "text": text})
    return args if isinstance(args, Refused) else await chats.reply(
        services().action_deps, current_caller(), phone, SendRequest(to="", type="text", text=args.text))


async def _template(phone: str, form) -> object:
    name, _, language = (form.get("template") or "").partition("|")
    parameters = [value.strip() for value in form.getlist("parameter")]
    args = _fields(catalog.SendTemplate, {"to": phone, "template": name, "language": language or "en",
                                          "parameters": parameters})
    return args if isinstance(args, Refused) else await chats.reply(
        services().action_deps, current_caller(), phone,
        SendRequest(to="", type="template", template_name=args.template, template_language=args.language,
                    template_parameters=tuple(args.parameters)))


_ACTIONS = {"claim": _claim, "release": _release, "transfer": _transfer, "resolve": _resolve, "read": _read,
            "reply": _reply, "template": _template}
