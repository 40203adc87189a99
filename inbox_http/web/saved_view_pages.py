"""A member's saved views: `POST /app/inbox/saved-views?view=…&label=…` saves the list's view and filters (those of
its address) under a name, from the list's view menu; `/app/inbox/saved-views` lists them to rename or delete
(`…/<id>`, `…/<id>/delete`). Each form runs one of the declared `use_cases/saved_views.py`, whose rules (a name
unique among the member's whatever its case, at most 50, the filters' own rules) answer with a sentence the page
shows beside the form, what was typed kept.

Without the script each form answers a redirect (the list, now with the view in its menu; the list of saved views);
with it, saving answers the list pane.
"""

from __future__ import annotations

from typing import Any

import msgspec
from quart import Blueprint, redirect, request

from inbox_actors.use_cases import saved_views
from inbox_actors.use_cases.inbox_views import VIEW_TITLES, ListFilter, default_view
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import UseCase, decode_arguments, run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web import fragments, workspace
from inbox_http.web.list_tools import saved_url
from inbox_http.web.page_guard import WebRefusal, signed_in
from inbox_http.web.pages import page

blueprint = Blueprint("web_saved_views", __name__, url_prefix="/app/inbox/saved-views",
                      template_folder="templates")

_DONE = {"renamed": "Saved view renamed.", "deleted": "Saved view deleted."}


async def _run(use_case: UseCase, arguments: dict[str, Any]):
    return await run(dependencies().use_case_deps, current_caller(), use_case, arguments, strict=False)


def _require(use_case: UseCase) -> None:
    if not use_case.allows(current_caller()):
        raise WebRefusal(403, "Saved views need the inbox or contacts permission.")


@blueprint.post("")
@signed_in
async def save():
    """The list's view and filters, as its address gives them, under the typed name."""
    form = await request.form
    where = workspace.place(phone="")
    name = form.get("name") or ""
    filters = decode_arguments(ListFilter, {"view": where.view, **where.filters}, strict=False)
    outcome = filters if isinstance(filters, Refused) else await _run(
        saved_views.SAVE, {"name": name, "filters": msgspec.to_builtins(filters)})
    if isinstance(outcome, Refused):
        refused = {"saved_refusal": outcome.message, "saved_name": name}
        if fragments.from_script():
            return await workspace.list_part(where, "list_pane", outcome.status, **refused)
        return await workspace.whole_page(where, None, outcome.status, tools=refused)
    if fragments.from_script():
        return await workspace.list_part(where, "list_pane")
    return redirect(saved_url(outcome.data, default_view(current_caller()).value), 303)


@blueprint.get("")
@signed_in
async def saved_page():
    _require(saved_views.LIST)
    return await _list_page(notice=_DONE.get(request.args.get("done", "")))


@blueprint.post("/<id:view_id>")
@signed_in
async def rename(view_id: int):
    name = (await request.form).get("name") or ""
    outcome = await _run(saved_views.CHANGE, {"view_id": view_id, "name": name})
    if isinstance(outcome, Refused):
        return await _list_page(outcome.status, refusal=outcome.message, refused_id=view_id, typed=name)
    return redirect("/app/inbox/saved-views?done=renamed", 303)


@blueprint.post("/<id:view_id>/delete")
@signed_in
async def delete(view_id: int):
    outcome = await _run(saved_views.DELETE, {"view_id": view_id})
    if isinstance(outcome, Refused):
        return await _list_page(outcome.status, refusal=outcome.message)
    return redirect("/app/inbox/saved-views?done=deleted", 303)


async def _list_page(status: int = 200, **context: Any):
    caller = current_caller()
    default = default_view(caller).value
    views = await saved_views.saved_views(dependencies().use_case_deps, caller)
    return await page("saved_views.html", status, views=[(view, saved_url(view, default)) for view in views],
                      may_change=saved_views.CHANGE.allows(caller), limit=saved_views.MAX_SAVED_VIEWS,
                      max_name=saved_views.MAX_NAME, titles=VIEW_TITLES, default=default,
                      **context)
