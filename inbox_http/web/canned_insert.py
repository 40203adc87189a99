"""A canned response inserted without the script: `POST /app/chats/<phone>/canned`, the reply form sent by its
Insert button (the list of canned responses beside Send, `formaction`), with what was typed and the one chosen.

It sends nothing and changes nothing: the answer is the workspace with the chat open and the reply box holding
what was typed and the response's text after it, placeholders filled (`composer.with_canned`). The response is
read through the declared list (`canned_responses.LIST`), the chat as the member may see it. With the script the
button inserts in the browser instead, at the caret, and never comes here.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.use_cases.chat_view import ChatView
from inbox_actors.use_cases.outcomes import Refused
from inbox_http.web import composer, workspace
from inbox_http.web.page_guard import WebRefusal, signed_in
from inbox_http.web.pages import refused_page

blueprint = Blueprint("web_canned_insert", __name__, url_prefix="/app/chats", template_folder="templates")


@blueprint.post("/<phone>/canned")
@signed_in
async def insert(phone: str):
    form = await request.form
    view = await workspace.read_chat(phone, opening=False)
    if isinstance(view, Refused):
        return await refused_page(view)
    if not isinstance(view, ChatView):  # a contact without a chat: no reply box, only templates that start one
        raise WebRefusal(409, "This contact has no chat yet: start one with a template.")
    chosen = next((c for c in await composer.canned_choices() if str(c.id) == form.get("canned_id", "")), None)
    if chosen is None:
        raise WebRefusal(404, "No such canned response in this workspace.")
    return await workspace.whole_page(workspace.place(phone), view,
                                      composer=composer.with_canned(form, chosen, view.chat.contact_name))
