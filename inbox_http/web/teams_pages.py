"""The workspace's teams: `/app/teams` (every team with its members and whether each is online, and a form to
create one), `/app/teams/<id>` (rename or describe it, put members in and take them out) and
`/app/teams/<id>/delete` (a page that asks before deleting, so a keyboard user confirms as anyone else does,
without a script); `/app/teams/idle-time`, the availability's idle time, `/app/teams/assignment`, automatic
assignment's mode and capacity, and `/app/teams/satisfaction`, the satisfaction survey sent when a chat is resolved
(docs/team.md#satisfaction-surveys): team settings shown on the list.

Each form runs one of the teams' use cases (`use_cases/teams.py`), whose permission and rules (a name unique
whatever its case, at most 100 teams, the fields' lengths) answer with a refusal the page shows; the pages open for
whoever may see the teams (`teams.LIST`: the team overview, `inbox` or `team_management`) and offer changes to
whoever the declarations allow them (`team_management`). The settings menu links here (`may_see_teams`).
"""

from __future__ import annotations

from typing import Any

import msgspec
from quart import Blueprint, redirect, request

from inbox_actors.team.teams import Team
from inbox_actors.use_cases import auto_assignment, availability, satisfaction, team, teams
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import UseCase, run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.composer import form_text
from inbox_http.web.page_guard import WebRefusal, signed_in
from inbox_http.web.pages import page

blueprint = Blueprint("web_teams", __name__, url_prefix="/app/teams", template_folder="templates")

_DONE = {"created": "Team created.", "changed": "Team saved.", "deleted": "Team deleted.",
         "added": "Member added to the team.", "removed": "Member taken out of the team.",
         "idle": "Idle time saved.", "assignment": "Automatic assignment saved.",
         "satisfaction": "Satisfaction survey saved."}


@blueprint.app_template_global()
def may_see_teams(caller: Caller | None) -> bool:
    """Whether the settings menu links to the teams."""
    return caller is not None and teams.LIST.allows(caller)


def _may_change() -> bool:
    return teams.CHANGE.allows(current_caller())


def _require_reading() -> None:
    if not teams.LIST.allows(current_caller()):
        raise WebRefusal(403, f"The teams need the {teams.LIST.needed()} permission.")


def _require_changing() -> None:
    _require_reading()
    if not _may_change():
        raise WebRefusal(403, f"Changing the teams needs the {teams.CHANGE.needed()} permission.")


async def _run(use_case: UseCase, arguments: dict[str, Any]):
    return await run(dependencies().use_case_deps, current_caller(), use_case, arguments, strict=False)


async def _typed() -> dict[str, str]:
    """The form's fields as typed, the description's line breaks as one character each (as the box counted them)."""
    form = await request.form
    return {"name": (form.get("name") or "").strip(), "description": form_text(form, "description"),
            "queue_visible_to_assigned_only": form.get("queue_visible_to_assigned_only") == "on"}


@blueprint.get("")
@signed_in
async def teams_page():
    _require_reading()
    return await _list_page(notice=_DONE.get(request.args.get("done", "")))


@blueprint.post("")
@signed_in
async def create():
    _require_reading()
    typed = await _typed()
    created = await _run(teams.CREATE, typed)
    if isinstance(created, Refused):
        return await _list_page(created, typed=typed)
    return redirect(f"/app/teams/{created.data.id}?done=created", 303)


@blueprint.post("/idle-time")
@signed_in
async def save_idle_time():
    """The workspace's idle time, after which a member with no page open is offline (a team setting)."""
    _require_reading()
    form = await request.form
    saved = await _run(availability.SAVE_SETTINGS, {"idle_seconds": (form.get("idle_seconds") or "").strip()})
    if isinstance(saved, Refused):
        return await _list_page(saved)
    return redirect("/app/teams?done=idle", 303)


@blueprint.post("/assignment")
@signed_in
async def save_assignment():
    """Automatic assignment: how waiting chats are handed to members online, and each one's capacity."""
    _require_reading()
    form = await request.form
    saved = await _run(auto_assignment.SAVE_SETTINGS, {"mode": (form.get("mode") or "").strip(),
                                                       "capacity": (form.get("capacity") or "").strip()})
    if isinstance(saved, Refused):
        return await _list_page(saved)
    return redirect("/app/teams?done=assignment", 303)


@blueprint.post("/satisfaction")
@signed_in
async def save_satisfaction():
    """The satisfaction survey: whether a resolved chat's customer is asked, the question and the thanks."""
    _require_reading()
    form = await request.form
    typed = {"enabled": form.get("enabled") == "on", "question": form.get("question") or "",
             "thanks": form_text(form, "thanks")}
    saved = await _run(satisfaction.SAVE_SETTINGS, typed)
    if isinstance(saved, Refused):
        return await _list_page(saved, survey=typed)
    return redirect("/app/teams?done=satisfaction", 303)


@blueprint.get("/<int:team_id>")
@signed_in
async def team_page(team_id: int):
    _require_reading()
    return await _team_page(team_id, notice=_DONE.get(request.args.get("done", "")))


@blueprint.post("/<int:team_id>")
@signed_in
async def change(team_id: int):
    _require_changing()  # a refusal shows the team's form, which only those who may change it see
    typed = await _typed()
    changed = await _run(teams.CHANGE, {**typed, "team_id": team_id})
    if isinstance(changed, Refused):
        return await _team_page(team_id, changed, typed=typed)
    return redirect(f"/app/teams/{team_id}?done=changed", 303)


@blueprint.post("/<int:team_id>/members")
@signed_in
async def add_member(team_id: int):
    _require_changing()
    form = await request.form
    chosen = (form.get("member_id") or "").strip()
    added = await _run(teams.ADD_MEMBER, {"team_id": team_id, "member_id": chosen if chosen.isdigit() else "0"})
    if isinstance(added, Refused):
        return await _team_page(team_id, added)
    return redirect(f"/app/teams/{team_id}?done=added", 303)


@blueprint.post("/<int:team_id>/members/<int:member_id>/remove")
@signed_in
async def remove_member(team_id: int, member_id: int):
    _require_changing()
    removed = await _run(teams.REMOVE_MEMBER, {"team_id": team_id, "member_id": member_id})
    if isinstance(removed, Refused):
        return await _team_page(team_id, removed)
    return redirect(f"/app/teams/{team_id}?done=removed", 303)


@blueprint.get("/<int:team_id>/delete")
@signed_in
async def confirm_delete(team_id: int):
    _require_changing()
    return await page("teams_delete.html", team=await _team(team_id))


@blueprint.post("/<int:team_id>/delete")
@signed_in
async def delete(team_id: int):
    _require_reading()
    deleted = await _run(teams.DELETE, {"team_id": team_id})
    if isinstance(deleted, Refused):
        return await _list_page(deleted)
    return redirect("/app/teams?done=deleted", 303)


async def _team(team_id: int) -> Team:
    found = await _run(teams.ONE, {"team_id": team_id})
    if isinstance(found, Refused):
        raise WebRefusal(found.status, found.message)
    return found.data


async def _list_page(refused: Refused | None = None, notice: str | None = None, typed: dict | None = None,
                     survey: dict | None = None):
    """The teams, and the create form empty or as typed into a refused one; the survey's form as saved, or as
    typed into a refused one (`survey`)."""
    listed = await _run(teams.LIST, {})
    if isinstance(listed, Refused):  # only a permission, which every page here checked first
        raise WebRefusal(listed.status, listed.message)
    idle = assignment = shown_survey = None
    if availability.SAVE_SETTINGS.allows(current_caller()):
        idle = (await _run(availability.SETTINGS, {})).data.idle_seconds
    if auto_assignment.SAVE_SETTINGS.allows(current_caller()):
        assignment = (await _run(auto_assignment.SETTINGS, {})).data
    if satisfaction.SAVE_SETTINGS.allows(current_caller()):
        shown_survey = survey or msgspec.structs.asdict((await _run(satisfaction.SETTINGS, {})).data)
    return await page("teams.html", refused.status if refused else 200, teams=listed.data.data,
                      may_change=_may_change(), typed={"name": "", "description": ""} | (typed or {}),
                      idle_seconds=idle, assignment=assignment, survey=shown_survey, notice=notice,
                      refusal=refused.message if refused else None)


async def _team_page(team_id: int, refused: Refused | None = None, notice: str | None = None,
                     typed: dict | None = None):
    """One team's page; its form shows it as saved, or as typed into a refused form; the members who could join
    it are offered to whoever may change it."""
    found = await _team(team_id)
    shown = {"name": found.name, "description": found.description,
             "queue_visible_to_assigned_only": found.queue_visible_to_assigned_only} | (typed or {})
    candidates = []
    if _may_change():
        named = await _run(team.MEMBER_NAMES, {})
        inside = {m.user_id for m in found.members}
        candidates = [] if isinstance(named, Refused) else [
            m for m in named.data if m.status != "removed" and m.user_id not in inside]
    return await page("teams_team.html", refused.status if refused else 200, team=found, shown=shown,
                      candidates=candidates, may_change=_may_change(), notice=notice,
                      refusal=refused.message if refused else None)
