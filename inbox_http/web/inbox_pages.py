"""The inbox: `/app/inbox?view=…&q=…&cursor=…`, and its list alone (`/app/inbox/list`, what the page's script
reads again when the workspace's events say a chat changed). The views and their rules are
`use_cases/inbox_views.py`'s."""

from __future__ import annotations

from urllib.parse import urlencode

from quart import Blueprint, request

from inbox_actors.live.event_stream import stream_position
from inbox_actors.use_cases import inbox_views
from inbox_actors.use_cases.inbox_views import VIEW_TITLES, View
from inbox_actors.use_cases.outcomes import Refused
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.page_guard import signed_in
from inbox_http.web.pages import page, refused_page

blueprint = Blueprint("web_inbox", __name__, url_prefix="/app", template_folder="templates")

_MAX_SEARCH = 200


@blueprint.get("/inbox")
@signed_in
async def inbox():
    return await _render("inbox.html", live_since=await stream_position(dependencies().db))


@blueprint.get("/inbox/list")
@signed_in
async def inbox_list():
    return await _render("inbox_list.html")


async def _render(template: str, **context):
    caller = current_caller()
    views = inbox_views.views_for(caller)
    # A member limited to their own chats starts with them; others with what waits for the team.
    default = View.MINE if caller.only_assigned_to is not None else (
        View.QUEUE if View.QUEUE in views else View.OPEN)
    view = request.args.get("view") or default.value
    search = (request.args.get("q") or "")[:_MAX_SEARCH]
    outcome = await inbox_views.inbox(dependencies().use_case_deps, caller, view, search=search,
                                      cursor=request.args.get("cursor"))
    if isinstance(outcome, Refused):
        return await refused_page(outcome)
    base = {"view": outcome.view.value, **({"q": outcome.search} if outcome.search else {})}
    cursor = request.args.get("cursor")
    return await page(template, inbox=outcome, titles=VIEW_TITLES, **context,
                      list_url="/app/inbox/list?" + urlencode({**base, **({"cursor": cursor} if cursor else {})}),
                      more_url="/app/inbox?" + urlencode({**base, "cursor": outcome.next_cursor or ""}))
