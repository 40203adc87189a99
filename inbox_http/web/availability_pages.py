"""A member's availability in the web app: the switch in the header's settings menu (`settings_menu.html`),
`POST /app/availability`, and `GET /app/availability/team`, everyone's availability for the pages that show it
(the roster, the teams), which their script asks again every POLL_SECONDS.

The switch binds the declared `set_my_availability` (`use_cases/availability.py`): the page's script sends it by
itself and hears the sentence that says what the member is now; without the script the form answers a redirect
back to the page it was sent from, or the refusal as a page. The menu shows the switch to whoever may choose
(`inbox`), with their availability as it is now (`availability_for`).
"""

from __future__ import annotations

import msgspec
from quart import Blueprint, Response, redirect, request

from inbox_actors.team.presence import Availability
from inbox_actors.use_cases import availability
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.page_guard import WebRefusal, is_script_request, safe_next, signed_in
from inbox_http.web.pages import page
from persistence.database import DatabaseUnavailable

blueprint = Blueprint("web_availability", __name__, url_prefix="/app/availability", template_folder="templates")

POLL_SECONDS = 15
LABELS = {"online": "Online", "busy": "Busy", "offline": "Offline"}
_WHY = {"no_open_page": "no inbox of yours has been open for the idle time",
        "outside_business_hours": "the workspace is outside its business hours",
        "not_active": "your membership is suspended"}


class Shown(msgspec.Struct, frozen=True):
    """One member's availability as a page shows it."""

    status: str
    label: str
    title: str


@blueprint.app_template_global()
async def availability_for(caller: Caller | None) -> Availability | None:
    """The member's availability now, for the settings menu's switch; None when they may not choose one, or when
    the database cannot say (the page that says so still renders, without the switch)."""
    if caller is None or not availability.CHOOSE.allows(caller):
        return None
    try:
        mine = await run(dependencies().use_case_deps, caller, availability.MINE, {})
    except DatabaseUnavailable:
        return None
    return None if isinstance(mine, Refused) else mine.data


@blueprint.app_template_global()
def availability_sentence(found: Availability) -> str:
    """What the member is now, and why not what they chose."""
    now = f"You are {found.status}"
    if found.reason == "chosen" or found.status == found.chosen:
        return f"{now}."
    return f"{now}: {_WHY.get(found.reason, found.reason)} (you chose {found.chosen})."


@blueprint.app_template_global()
def availability_title(found: Availability) -> str:
    """The reason beside a member's status on the roster, for a pointer's title and a screen reader."""
    if found.status == found.chosen:
        return LABELS[found.status]
    why = {"no_open_page": "no page open", "outside_business_hours": "outside business hours",
           "not_active": "not active", "chosen": "chosen"}[found.reason]
    return f"{LABELS[found.status]} ({why}; chose {found.chosen})"


@blueprint.post("")
@signed_in
async def choose():
    form = await request.form
    outcome = await run(dependencies().use_case_deps, current_caller(), availability.CHOOSE,
                        {"status": (form.get("status") or "").strip()}, strict=False)
    if is_script_request():
        if isinstance(outcome, Refused):
            return Response(outcome.message, status=outcome.status, content_type="text/plain; charset=utf-8")
        return Response(availability_sentence(outcome.data), content_type="text/plain; charset=utf-8")
    if isinstance(outcome, Refused):
        return await page("error.html", outcome.status, message=outcome.message)
    return redirect(safe_next(form.get("next")), 303)


@blueprint.get("/team")
@signed_in
async def everyone():
    """Everyone's availability, by member id: what the roster's and the teams' script writes into their rows."""
    found = await run(dependencies().use_case_deps, current_caller(), availability.EVERYONE, {})
    if isinstance(found, Refused):
        raise WebRefusal(found.status, found.message)
    shown = {str(one.user_id): Shown(one.status, LABELS[one.status], availability_title(one))
             for one in found.data.data}
    return Response(msgspec.json.encode(shown), content_type="application/json")
