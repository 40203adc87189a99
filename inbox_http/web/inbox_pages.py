"""The inbox: `/app/inbox?view=…&label=…&q=…&cursor=…`, the agent workspace with no chat open (`workspace.py`), and
its list alone: `/app/inbox/list?view=…&chat=…`, what the page's script reads again when the workspace's events say
a chat changed. The views, their filters and their rules are `use_cases/inbox_views.py`'s. `&bulk=<key>` shows the
report of the member's bulk action with that key (where the bulk form's redirect lands: `bulk_pages.py`)."""

from __future__ import annotations

from quart import Blueprint

from inbox_http.web import bulk_pages, fragments, workspace
from inbox_http.web.page_guard import signed_in

blueprint = Blueprint("web_inbox", __name__, url_prefix="/app", template_folder="templates")


@blueprint.get("/inbox")
@signed_in
async def inbox():
    where = workspace.place(phone="")
    target = fragments.wanted()
    if target == "list-pane":
        return await workspace.list_part(where, "list_pane")
    if target == "chat-pane":  # the chat closed (a phone's way back to the list)
        return await workspace.chat_pane(where, None)
    return await workspace.whole_page(where, None, tools=await bulk_pages.report_tools())


@blueprint.get("/inbox/list")
@signed_in
async def inbox_list():
    return await workspace.list_part(workspace.place(), "list_body")
