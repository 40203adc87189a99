"""The roster for admins: `/app/team` (who is on the team, adding a member and inviting them, suspending and
reactivating) and `/app/team/members/<id>` (role, permissions, assigned-only). Each form runs one of the team use
cases (`use_cases/team.py`), which checks the member's permission and the form's fields, and whose rules (only an
admin makes an admin, permissions within the caller's own, one active admin kept) answer with a refusal the page
shows; a page offers an action only to a member its declaration allows. An invite link is shown once, on the page
that made it.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, redirect, request

from inbox_actors.domain import scopes as scope_rules
from inbox_actors.team import roster
from inbox_actors.use_cases import team
from inbox_actors.use_cases.outcomes import Outcome, Refused
from inbox_actors.use_cases.use_case import UseCase, run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.page_guard import WebRefusal, signed_in
from inbox_http.web.pages import page, refused_page

blueprint = Blueprint("web_team", __name__, url_prefix="/app/team", template_folder="templates")

# What a permissions form offers: every scope, each with its read-only variant where it has one.
GRANTABLE = [(base, f"{base}:read" if has_read else None) for base, has_read in scope_rules.SCOPES.items()]
# The roster page lists this many members (the lists' largest page); a larger team reads GET /api/team/members.
ROSTER_PAGE = 200
_DONE = {"added": "Member added.", "changed": "Changes saved.", "suspended": "Member suspended; signed out at once.",
         "reactivated": "Member reactivated."}
# The roster's actions, each offered to a member its use case allows.
_OFFERED = {"add": team.ADD_MEMBER, "invite": team.INVITE_MEMBER, "suspend": team.SUSPEND_MEMBER,
            "reactivate": team.REACTIVATE_MEMBER}
# A status change's form: its use case, and the notice it ends with.
_STATUS_CHANGES = {"suspend": (team.SUSPEND_MEMBER, "suspended"), "reactivate": (team.REACTIVATE_MEMBER, "reactivated")}


def _require_reading(use_case: UseCase) -> None:
    if not use_case.allows(current_caller()):
        raise WebRefusal(403, f"The team's roster needs the {use_case.needed()} permission.")


async def _run(use_case: UseCase, arguments: dict[str, Any]) -> Outcome:
    return await run(dependencies().use_case_deps, current_caller(), use_case, arguments, strict=False)


@blueprint.get("")
@signed_in
async def roster_page():
    _require_reading(team.MEMBERS)
    return await _roster(notice=_DONE.get(request.args.get("done", "")))


@blueprint.post("/members")
@signed_in
async def add():
    _require_reading(team.MEMBERS)
    form = await request.form
    added = await _run(team.ADD_MEMBER, {
        "name": form.get("name", "").strip(), "email": form.get("email", "").strip() or None,
        "role": form.get("role", "agent"), "assigned_only": form.get("assigned_only") == "on"})
    if isinstance(added, Refused):
        return await _roster(added)
    if added.data.email is None:
        return redirect("/app/team?done=added", 303)
    return await _invite_page(added.data.user_id)


@blueprint.post("/members/<int:member_id>/invite")
@signed_in
async def invite(member_id: int):
    _require_reading(team.MEMBERS)
    return await _invite_page(member_id)


@blueprint.post("/members/<int:member_id>/<any(suspend, reactivate):change>")
@signed_in
async def set_status(member_id: int, change: str):
    _require_reading(team.MEMBERS)
    use_case, done = _STATUS_CHANGES[change]
    outcome = await _run(use_case, {"member_id": member_id})
    if isinstance(outcome, Refused):
        return await _roster(outcome)
    return redirect(f"/app/team?done={done}", 303)


@blueprint.get("/members/<int:member_id>")
@signed_in
async def member_page(member_id: int):
    _require_reading(team.MEMBER)
    found = await _run(team.MEMBER, {"member_id": member_id})
    if isinstance(found, Refused):
        return await refused_page(found)
    return await page("team_member.html", member=found.data, grantable=GRANTABLE,
                      may_change=team.CHANGE_MEMBER.allows(current_caller()),
                      notice=_DONE.get(request.args.get("done", "")), refusal=None)


@blueprint.post("/members/<int:member_id>")
@signed_in
async def change(member_id: int):
    _require_reading(team.MEMBER)
    form = await request.form
    chosen = form.getlist("permission")
    refused = await _run(team.CHANGE_MEMBER, {
        "member_id": member_id, "role": form.get("role", "agent"), "assigned_only": form.get("assigned_only") == "on",
        **({"permissions": chosen} if form.get("role") != "admin" else {})})
    if not isinstance(refused, Refused):
        return redirect(f"/app/team/members/{member_id}?done=changed", 303)
    found = await _run(team.MEMBER, {"member_id": member_id})
    if isinstance(found, Refused):
        return await refused_page(refused)
    return await page("team_member.html", refused.status, member=found.data, grantable=GRANTABLE,
                      may_change=team.CHANGE_MEMBER.allows(current_caller()), notice=None, refusal=refused.message)


async def _invite_page(member_id: int):
    made = await _run(team.INVITE_MEMBER, {"member_id": member_id})
    if isinstance(made, Refused):
        return await _roster(made)
    link = f"{request.scheme}://{request.host}{made.data.path}"
    return await page("team_invite.html", 201, invite=made.data, link=link)


async def _roster(refused: Refused | None = None, notice: str | None = None):
    """The roster, with the actions the member may take, and what refused the last one if anything did."""
    caller = current_caller()
    members = await roster.roster(dependencies().db, caller.workspace_id, {"status": "all", "limit": str(ROSTER_PAGE)},
                                  dependencies().clock.now())
    return await page("team.html", refused.status if refused else 200, members=members.data,
                      offers={name: use_case.allows(caller) for name, use_case in _OFFERED.items()}, notice=notice,
                      refusal=refused.message if refused else None)
