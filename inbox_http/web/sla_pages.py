"""The SLA policy for admins: `/app/sla`, how long a customer may wait for a person and the business hours that
clock runs in, saved whole through the team's use case (`team.SAVE_SLA`), which checks the member's permission and
whose rules (the target's range, a known time zone, openings that do not overlap) answer with a refusal the page
shows. Reading it is `team.SLA_POLICY`'s permission.

The form is SaveSla's fields as a person types them: the target as a number and a unit, each weekday's openings as
pairs of `HH:MM` boxes (the saved ones and one empty pair more, up to the day's limit: saving makes room for
another), holidays one date a line.
"""

from __future__ import annotations

from dataclasses import dataclass

from quart import Blueprint, redirect, request
from werkzeug.datastructures import MultiDict

from inbox_actors.domain.business_hours import DAYS, MAX_OPENINGS_PER_DAY
from inbox_actors.team import sla
from inbox_actors.use_cases import team
from inbox_actors.use_cases.outcomes import Reason, Refused
from inbox_actors.use_cases.use_case import run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.page_guard import WebRefusal, signed_in
from inbox_http.web.pages import page

blueprint = Blueprint("web_sla", __name__, url_prefix="/app/sla", template_folder="templates")

DAY_NAMES = dict(zip(DAYS, ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")))
# The target's units, largest first: a saved target shows in the largest unit that divides it.
UNITS = (("days", 86400), ("hours", 3600), ("minutes", 60), ("seconds", 1))
AROUND_THE_CLOCK, IN_BUSINESS_HOURS = "around_the_clock", "business_hours"
_DONE = {"saved": "SLA policy saved; waits that start from now on follow it."}


@dataclass(frozen=True)
class PolicyForm:
    """What the form's boxes show: a saved policy, or what was typed into a refused one."""

    amount: str
    unit: str
    clock: str
    time_zone: str
    weekly: dict[str, list[tuple[str, str]]]
    holidays: str


def _require_reading() -> None:
    if not team.SLA_POLICY.allows(current_caller()):
        raise WebRefusal(403, f"The SLA policy needs the {team.SLA_POLICY.needed()} permission.")


@blueprint.get("")
@signed_in
async def sla_page():
    _require_reading()
    policy = await sla.read_policy(dependencies().db, current_caller().workspace_id)
    return await _render(policy, _saved_form(policy), notice=_DONE.get(request.args.get("done", "")))


@blueprint.post("")
@signed_in
async def save():
    _require_reading()
    form = await request.form
    arguments = _policy_arguments(form)
    outcome = arguments if isinstance(arguments, Refused) else await run(
        dependencies().use_case_deps, current_caller(), team.SAVE_SLA, arguments, strict=False)
    if isinstance(outcome, Refused):
        policy = await sla.read_policy(dependencies().db, current_caller().workspace_id)
        return await _render(policy, _typed_form(form), outcome)
    return redirect("/app/sla?done=saved", 303)


def _policy_arguments(form: MultiDict) -> dict | Refused:
    """The form as SaveSla's fields, or a `Refused` saying what is wrong with the target's boxes, which SaveSla
    does not know (a number and a unit); the use case judges the rest."""
    amount = form.get("amount", "").strip()
    seconds = dict(UNITS).get(form.get("unit", ""), 0)
    if amount and (not (amount.isascii() and amount.isdigit()) or not seconds):
        return Refused(Reason.INVALID, "Check the form: the target is a whole number of seconds, minutes, hours or "
                                       "days, or empty for no target.", 400)
    values: dict = {"sla_seconds": int(amount) * seconds if amount else None}
    if form.get("clock") == IN_BUSINESS_HOURS:
        values["business_hours"] = {
            "time_zone": form.get("time_zone", "").strip(),
            "weekly": {day: openings for day in DAYS if (openings := _openings(form, day))},
            "holidays": form.get("holidays", "").split()}
    return values


def _openings(form: MultiDict, day: str) -> list[dict[str, str]]:
    """A day's filled pairs of boxes in order; a pair left empty is no opening."""
    pairs = zip(form.getlist(f"open-{day}"), form.getlist(f"close-{day}"))
    return [{"open": opening.strip(), "close": closing.strip()} for opening, closing in pairs
            if opening.strip() or closing.strip()]


def _saved_form(policy: sla.SlaPolicy) -> PolicyForm:
    seconds, amount, unit = policy.sla_seconds, "", "minutes"
    if seconds is not None:
        unit, size = next((name, size) for name, size in UNITS if seconds % size == 0)
        amount = str(seconds // size)
    hours = policy.business_hours or {}
    weekly = {day: [(o["open"], o["close"]) for o in hours.get("weekly", {}).get(day, [])] for day in DAYS}
    return PolicyForm(amount=amount, unit=unit,
                      clock=IN_BUSINESS_HOURS if policy.business_hours else AROUND_THE_CLOCK,
                      time_zone=hours.get("time_zone", ""), weekly=weekly,
                      holidays="\n".join(hours.get("holidays", [])))


def _typed_form(form: MultiDict) -> PolicyForm:
    weekly = {day: [(o["open"], o["close"]) for o in _openings(form, day)] for day in DAYS}
    return PolicyForm(amount=form.get("amount", ""), unit=form.get("unit", "minutes"),
                      clock=form.get("clock", AROUND_THE_CLOCK), time_zone=form.get("time_zone", ""),
                      weekly=weekly, holidays=form.get("holidays", ""))


async def _render(policy: sla.SlaPolicy, shown: PolicyForm, refused: Refused | None = None,
                  notice: str | None = None):
    # One empty pair more than a day has, up to the limit: room for one new opening per save, no script needed.
    slots = {day: shown.weekly[day] + [("", "")] * (len(shown.weekly[day]) < MAX_OPENINGS_PER_DAY) for day in DAYS}
    return await page("sla.html", refused.status if refused else 200, policy=policy, form=shown, slots=slots,
                      day_names=DAY_NAMES, units=[name for name, _ in UNITS],
                      around_the_clock=AROUND_THE_CLOCK, in_business_hours=IN_BUSINESS_HOURS,
                      notice=notice, refusal=refused.message if refused else None)
