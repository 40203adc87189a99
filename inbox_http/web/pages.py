"""How the web app answers: its pages rendered from the package's templates, its headers, its refusals.

Every answer under /app carries a Content-Security-Policy that allows only this service's own script and style
sheet (no inline script or style, nothing from elsewhere), is never cached, and is not framed. Templates are
Jinja2 with autoescaping: whatever a customer or a member typed is text on the page, never markup.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import msgspec
from markupsafe import escape
from quart import Quart, Response, g, render_template, request

from inbox_actors.use_cases import (
    bot,
    broadcasts,
    canned_responses,
    keys,
    labels,
    mentions,
    team,
    team_reports,
    webhook_settings,
)
from inbox_actors.use_cases.outcomes import Reason, Refused
from inbox_http.dependencies import dependencies
from inbox_http.web.page_guard import WebRefusal, is_script_request

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
# The sections the header links to, each with the use case its page reads (None: any member); a member sees only
# the ones they may open.
SECTIONS = (
    ("/app/inbox", "Inbox", None),
    ("/app/mentions", "Mentions", mentions.MY_MENTIONS),
    ("/app/team", "Team", team.MEMBERS),
    ("/app/reports", "Reports", team_reports.REPORT),
    ("/app/bot", "Bot", bot.SETTINGS),
    ("/app/labels", "Labels", labels.LIST),
    ("/app/canned", "Canned responses", canned_responses.LIST),
    ("/app/sla", "SLA", team.SLA_POLICY),
    ("/app/broadcasts", "Broadcasts", broadcasts.LIST),
    ("/app/keys", "API keys", keys.LIST),
    ("/app/webhooks", "Webhooks", webhook_settings.READ),
)
STATE_NAMES = {"AI_ONLY": "With the bot", "HANDOFF_PENDING": "Waiting for a person", "HUMAN_ACTIVE": "With a person"}
_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


def page_context(**context: Any) -> dict[str, Any]:
    """What every page and every part of one is rendered with: who is signed in, if anyone, and the time."""
    return {"caller": g.get("caller"), "session": g.get("session"), "csrf": g.get("csrf"),
            "now": dependencies().clock.now(), **context}


async def page(template: str, status: int = 200, **context: Any) -> Response:
    """A page for whoever is signed in, if anyone."""
    body = await render_template(template, **page_context(**context))
    return Response(body, status=status, content_type="text/html; charset=utf-8")


def form_fields(kind: type, values: dict[str, Any], *, strict: bool = True) -> Any:
    """A form's fields as an action's argument type (the one the API and the catalog decode into, so the field
    rules are theirs), or a `Refused` (400) saying what is wrong. Not `strict`: text such as "true" or "12" stands
    for the value it names, as a form can only send text."""
    try:
        return msgspec.convert(values, type=kind, strict=strict)
    except msgspec.ValidationError as err:
        return Refused(Reason.INVALID, f"Check the form: {err}.", 400, "invalid_arguments")


async def refused_page(refused: Refused) -> Response:
    """A refusal as a page, or, to the workspace's script, as a sentence where the chat's notices go."""
    if _from_htmx():
        return _notice_alert(refused.status, refused.message)
    return await page("error.html", refused.status, message=refused.message)


def _from_htmx() -> bool:
    return is_script_request() and request.headers.get("HX-Request") == "true"


def _notice_alert(status: int, message: str) -> Response:
    """A refusal the workspace's script shows where the chat's notices go, whichever part it meant to swap."""
    response = Response(f'<p class="refusal" role="alert">{escape(message)}</p>', status=status,
                        content_type="text/html; charset=utf-8")
    response.headers["HX-Retarget"] = "#notice"
    response.headers["HX-Reswap"] = "innerHTML"
    return response


def install_web(app: Quart) -> None:
    app.jinja_env.filters["ago"] = ago
    app.jinja_env.filters["clock"] = clock
    app.jinja_env.filters["duration"] = duration
    app.jinja_env.globals["state_names"] = STATE_NAMES
    app.jinja_env.globals["sections_for"] = sections_for

    @app.after_request
    async def web_headers(response: Response) -> Response:
        if request.path.startswith("/app"):
            for name, value in _HEADERS.items():
                response.headers.setdefault(name, value)
            if not request.path.startswith("/app/static/"):
                response.headers["Cache-Control"] = "no-store"
        return response

    @app.errorhandler(WebRefusal)
    async def web_refusal(refusal: WebRefusal) -> Response:
        if _from_htmx() and refusal.status != 401:
            return _notice_alert(refusal.status, refusal.message)
        if is_script_request():
            # 401 included: the script keeps what was typed and offers to sign in again.
            return Response(refusal.message, status=refusal.status, content_type="text/plain; charset=utf-8")
        return await page("error.html", refusal.status, message=refusal.message)


def sections_for(caller) -> list[tuple[str, str]]:
    return [(path, title) for path, title, reads in SECTIONS if reads is None or reads.allows(caller)]


def ago(moment: datetime | None) -> str:
    """"3 min ago"-style, as a list shows it."""
    if moment is None:
        return ""
    seconds = max(0, int((dependencies().clock.now() - moment).total_seconds()))
    return f"{duration(seconds)} ago" if seconds >= 60 else "just now"


def duration(seconds: int | None) -> str:
    if seconds is None:
        return ""
    sign, seconds = ("-" if seconds < 0 else ""), abs(seconds)
    if seconds < 60:
        return f"{sign}{seconds} s"
    if seconds < 3600:
        return f"{sign}{seconds // 60} min"
    if seconds < 86400:
        return f"{sign}{seconds // 3600} h {seconds % 3600 // 60} min"
    return f"{sign}{seconds // 86400} d"


def clock(moment: datetime | None) -> str:
    """A message's time in UTC, as the thread shows it (the API's times are UTC too)."""
    if moment is None:
        return ""
    return moment.astimezone(timezone.utc).strftime("%d %b %H:%M")
