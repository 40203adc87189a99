"""A member's own settings from the header's settings menu (`settings_menu.html`): `POST /app/settings/time-zone`.

The form binds the declared `set_member_time_zone` (`use_cases/member_settings.py`), whose rule (an IANA name this
machine knows) answers a refusal. The page's script sends it by itself (the browser's `Intl` zone, the first time a
member opens a page, and a zone chosen in the menu) and hears 204, or the refusal's sentence as text; without the
script the form answers a redirect back to the page it was sent from, or the refusal as a page.
"""

from __future__ import annotations

from quart import Blueprint, Quart, Response, redirect, request

from inbox_actors.use_cases import member_settings
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.page_guard import is_script_request, safe_next, signed_in
from inbox_http.web.pages import page

blueprint = Blueprint("web_member_settings", __name__, url_prefix="/app/settings", template_folder="templates")


@blueprint.post("/time-zone")
@signed_in
async def time_zone():
    form = await request.form
    outcome = await run(dependencies().use_case_deps, current_caller(), member_settings.SET_TIME_ZONE,
                        {"time_zone": (form.get("time_zone") or "").strip()}, strict=False)
    if is_script_request():
        if isinstance(outcome, Refused):
            return Response(outcome.message, status=outcome.status, content_type="text/plain; charset=utf-8")
        return Response(b"", status=204)
    if isinstance(outcome, Refused):
        return await page("error.html", outcome.status, message=outcome.message)
    return redirect(safe_next(form.get("next")), 303)


def may_set_time_zone(caller: Caller | None) -> bool:
    """Whether the menu offers the time zone form (a read-only member's pages use their browser's zone)."""
    return caller is not None and member_settings.SET_TIME_ZONE.allows(caller)


def install(app: Quart) -> None:
    app.jinja_env.globals["may_set_time_zone"] = may_set_time_zone
