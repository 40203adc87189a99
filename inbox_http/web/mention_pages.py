"""A member's mentions in internal notes: `/app/mentions` (the notes that mention them, newest first, the ones not
seen yet marked; `?unseen=1` those alone), `POST /app/mentions/seen` (theirs in one chat, `phone`, or in every chat,
seen), and for the pages' script `/app/mentions/count` (how many not seen yet, JSON) and `/app/mentions/members`
(whom a note may mention and what the note box's picker inserts for each, JSON).

Each binds a declared use case (`use_cases/mentions.py`); opening a chat also marks its mentions seen (the chat's
own `open`). Without the script the seen form answers a redirect back to the page; with it, 204.
"""

from __future__ import annotations

from typing import Any

import msgspec
from quart import Blueprint, Response, redirect, request

from inbox_actors.use_cases import mentions
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import UseCase, run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.page_guard import is_script_request, signed_in
from inbox_http.web.pages import page, refused_page

blueprint = Blueprint("web_mentions", __name__, url_prefix="/app/mentions", template_folder="templates")


async def _run(use_case: UseCase, arguments: dict[str, Any]):
    return await run(dependencies().use_case_deps, current_caller(), use_case, arguments, strict=False)


def _json(value: Any) -> Response:
    return Response(msgspec.json.encode(value), content_type="application/json")


@blueprint.get("")
@signed_in
async def mentions_page():
    unseen_only = request.args.get("unseen") == "1"
    listed = await _run(mentions.MY_MENTIONS, {"unseen_only": unseen_only})
    if isinstance(listed, Refused):
        return await refused_page(listed)
    seen = request.args.get("done") == "seen"
    return await page("mentions.html", mentions=listed.data, unseen_only=unseen_only,
                      may_mark=mentions.MARK_MENTIONS_SEEN.allows(current_caller()),
                      notice="Every mention is marked seen." if seen else None)


@blueprint.get("/count")
@signed_in
async def count():
    counted = await _run(mentions.UNSEEN_MENTIONS, {})
    if isinstance(counted, Refused):
        return await refused_page(counted)
    return _json(counted.data)


@blueprint.get("/members")
@signed_in
async def members():
    """The active members, by name, with what the picker inserts for each (a JSON array)."""
    listed = await _run(mentions.MENTIONABLE, {})
    if isinstance(listed, Refused):
        return await refused_page(listed)
    return _json(listed.data)


@blueprint.post("/seen")
@signed_in
async def mark_seen():
    form = await request.form
    phone = (form.get("phone") or "").strip()
    marked = await _run(mentions.MARK_MENTIONS_SEEN, {"phone": phone} if phone else {})
    if is_script_request():
        if isinstance(marked, Refused):
            return Response(marked.message, status=marked.status, content_type="text/plain; charset=utf-8")
        return Response(b"", status=204)
    if isinstance(marked, Refused):
        return await refused_page(marked)
    return redirect("/app/mentions?done=seen", 303)
