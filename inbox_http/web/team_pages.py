"""The roster for admins: `/app/team` (who is on the team, adding a member and inviting them, suspending and
reactivating) and `/app/team/members/<id>` (role, permissions, assigned-only). Each form is one of the team use
cases (`actions/team.py`), whose rules (only an admin makes an admin, permissions within the caller's own, one
active admin kept) answer with a refusal the page shows. An invite link is shown once, on the page that made it.
"""

from __future__ import annotations

from quart import Blueprint, redirect, request

from inbox_actors.actions import permissions, team
from inbox_actors.actions.outcomes import Refused
from inbox_actors.domain import scopes as scope_rules
from inbox_actors.team import roster
from inbox_http.services import services
from inbox_http.web.page_guard import WebRefusal, current_caller, signed_in
from inbox_http.web.pages import form_fields, page, refused_page

blueprint = Blueprint("web_team", __name__, url_prefix="/app/team", template_folder="templates")

# What a permissions form offers: every scope, each with its read-only variant where it has one.
GRANTABLE = [(base, f"{base}:read" if has_read else None) for base, has_read in scope_rules.SCOPES.items()]
# The roster page lists this many members (the lists' largest page); a larger team reads GET /api/team/members.
ROSTER_PAGE = 200
_DONE = {"added": "Member added.", "changed": "Changes saved.", "suspended": "Member suspended; signed out at once.",
         "reactivated": "Member reactivated."}


def _may(method: str) -> bool:
    return current_caller().may(permissions.TEAM_SETTINGS, method)


def _require(method: str) -> None:
    if not _may(method):
        raise WebRefusal(403, "The team's roster needs the team_management permission.")


@blueprint.get("")
@signed_in
async def roster_page():
    _require("GET")
    caller = current_caller()
    members = await roster.roster(services().db, caller.workspace_id, {"status": "all", "limit": str(ROSTER_PAGE)},
                                  services().clock.now())
    return await page("team.html", members=members.data, may_change=_may("POST"),
                      notice=_DONE.get(request.args.get("done", "")), refusal=None)


@blueprint.post("/members")
@signed_in
async def add():
    _require("POST")
    form = await request.form
    body = form_fields(roster.AddMember, {
        "name": form.get("name", "").strip(), "email": form.get("email", "").strip() or None,
        "role": form.get("role", "agent"), "assigned_only": form.get("assigned_only") == "on"})
    if isinstance(body, Refused):
        return await _roster_refused(body)
    added = await team.add_member(services().action_deps, current_caller(), body)
    if isinstance(added, Refused):
        return await _roster_refused(added)
    if added.email is None:
        return redirect("/app/team?done=added", 303)
    return await _invite_page(added.user_id, 201)


@blueprint.post("/members/<int:member_id>/invite")
@signed_in
async def invite(member_id: int):
    _require("POST")
    return await _invite_page(member_id, 201)


@blueprint.post("/members/<int:member_id>/<any(suspend, reactivate):change>")
@signed_in
async def set_status(member_id: int, change: str):
    _require("POST")
    act = team.suspend_member if change == "suspend" else team.reactivate_member
    outcome = await act(services().action_deps, current_caller(), member_id)
    if isinstance(outcome, Refused):
        return await _roster_refused(outcome)
    return redirect(f"/app/team?done={'suspended' if change == 'suspend' else 'reactivated'}", 303)


@blueprint.get("/members/<int:member_id>")
@signed_in
async def member_page(member_id: int):
    _require("GET")
    found = await team.member(services().action_deps, current_caller(), member_id)
    if isinstance(found, Refused):
        return await refused_page(found)
    return await page("team_member.html", member=found, grantable=GRANTABLE, may_change=_may("POST"),
                      notice=_DONE.get(request.args.get("done", "")), refusal=None)


@blueprint.post("/members/<int:member_id>")
@signed_in
async def change(member_id: int):
    _require("POST")
    form = await request.form
    chosen = form.getlist("permission")
    body = form_fields(roster.ChangeMember, {
        "role": form.get("role", "agent"), "assigned_only": form.get("assigned_only") == "on",
        **({"permissions": chosen} if form.get("role") != "admin" else {})})
    refused = body if isinstance(body, Refused) else await team.change_member(
        services().action_deps, current_caller(), member_id, body)
    if not isinstance(refused, Refused):
        return redirect(f"/app/team/members/{member_id}?done=changed", 303)
    found = await team.member(services().action_deps, current_caller(), member_id)
    if isinstance(found, Refused):
        return await refused_page(refused)
    return await page("team_member.html", refused.status, member=found, grantable=GRANTABLE, may_change=True,
                      notice=None, refusal=refused.message)


async def _invite_page(member_id: int, status: int):
    made = await team.invite_member(services().action_deps, current_caller(), member_id)
    if isinstance(made, Refused):
        return await _roster_refused(made)
    link = f"{request.scheme}://{request.host}{made.path}"
    return await page("team_invite.html", status, invite=made, link=link)


async def _roster_refused(refused: Refused):
    caller = current_caller()
    members = await roster.roster(services().db, caller.workspace_id, {"status": "all", "limit": str(ROSTER_PAGE)},
                                  services().clock.now())
    return await page("team.html", refused.status, members=members.data, may_change=_may("POST"), notice=None,
                      refusal=refused.message)
