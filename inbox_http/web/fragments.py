"""Parts of a page, rendered alone from the page's own template, for the agent workspace's script (htmx).

A page's template names its parts as Jinja2 blocks (`workspace.html`: the list, the chat pane, the chat's head,
thread, composer and contact card); `block` renders one of them with Jinja2's own API, through the same context a
whole page gets, so a part swapped in is exactly what a reload would show. Written here rather than taken from the
`jinja2-fragments` package: with Quart's async templates it is a few lines. A block that needs a name another part
of the template sets must set it itself: a block rendered alone runs only its own code.

What the script asked for is read off htmx's headers: `HX-Request` (a script's request, answered with parts),
`HX-Target` (the element it swaps), `HX-History-Restore-Request` (the Back button with nothing cached: a whole page).
"""

from __future__ import annotations

from typing import Any

from markupsafe import escape
from quart import Response, current_app, request

from inbox_http.web.pages import page_context


def wanted() -> str | None:
    """The id of the element the script swaps with this request's answer; None when a whole page is wanted."""
    if request.headers.get("HX-Request") != "true" or request.headers.get("HX-History-Restore-Request") == "true":
        return None
    return request.headers.get("HX-Target") or ""


def from_script() -> bool:
    return wanted() is not None


async def block(template_name: str, name: str, **context: Any) -> str:
    """One block of a template, rendered with the context a whole page of it gets."""
    context = page_context(**context)
    await current_app.update_template_context(context)
    template = current_app.jinja_env.get_template(template_name)
    rendered = template.blocks[name](template.new_context(context))
    return "".join([part async for part in rendered])


def answer(*parts: str, status: int = 200, title: str | None = None,
           trigger: str | None = None) -> Response:
    """Parts for the script: the first swapped where it asked, the others out of band by their own ids (each
    carries `hx-swap-oob`). `title` becomes the tab's title; `trigger` (a JSON object) is an event the script
    hears before the swap (HX-Trigger)."""
    head = f"<title>{escape(title)} · Inbox Actors</title>" if title else ""
    response = Response(head + "".join(parts), status=status, content_type="text/html; charset=utf-8")
    if trigger:
        response.headers["HX-Trigger"] = trigger
    return response
