"""The workspace's teams, its members' availability and automatic assignment, `/api/team/teams*`,
`/api/team/availability*`, `/api/team/me/availability` and `/api/team/assignment` (full API; ours: the
specification's `team_management` scope names the roster and its kin without shapes).

Each call binds one of the teams' or availability's use cases (`use_cases/teams.py`, `use_cases/availability.py`,
where their permissions are declared): reading the teams and everyone's availability is the team overview's
(`inbox` or `team_management`, each with `:read`); changing the teams, the idle time and automatic assignment is
a team setting (`team_management`); a member's own status needs `inbox` (`inbox:read` to read it) and is the
caller's member's (a key's creator). A member's dashboard session may call these with the same permissions.
Stable-code errors; the rules are `inbox_actors/team/teams.py`'s, `inbox_actors/team/presence.py`'s and
`inbox_actors/domain/auto_assignment.py`'s.
"""

from __future__ import annotations

from quart import Blueprint

from inbox_actors.domain.plans import ApiTier
from inbox_actors.team.assignment_settings import AssignmentSettings
from inbox_actors.team.presence import AvailabilitySettings, MemberAvailability, TeamAvailability
from inbox_actors.team.teams import Team, TeamList
from inbox_actors.use_cases import auto_assignment, availability, teams
from inbox_http.contract import answers, body_of, takes
from inbox_http.guard import guarded, responds
from inbox_http.outcome_answers import run_route

blueprint = Blueprint("teams", __name__, url_prefix="/api/team")


@blueprint.get("/teams")
@responds(TeamList)
@guarded(tier=ApiTier.FULL, use_case=teams.LIST, dashboard=True)
async def list_teams():
    """The workspace's teams by name, each with its members (and whether each is online, busy or offline)."""
    return await run_route(teams.LIST)


@blueprint.post("/teams")
@responds(Team, 201)
@guarded(tier=ApiTier.FULL, use_case=teams.CREATE, dashboard=True)
@takes(body_of(teams.CREATE, path=()))
@answers(409)
async def create_team():
    """Create a team: {name, description?}; a name is unique in the workspace whatever its case (at most 100
    teams)."""
    return await run_route(teams.CREATE, 201, body=True)


@blueprint.get("/teams/<id:team_id>")
@responds(Team)
@guarded(tier=ApiTier.FULL, use_case=teams.ONE, dashboard=True)
@answers(404)
async def read_team(team_id: int):
    """One team with its members."""
    return await run_route(teams.ONE, team_id=team_id)


@blueprint.patch("/teams/<id:team_id>")
@responds(Team)
@guarded(tier=ApiTier.FULL, use_case=teams.CHANGE, dashboard=True)
@takes(body_of(teams.CHANGE, path=("team_id",)))
@answers(404, 409)
async def change_team(team_id: int):
    """Rename or describe a team: {name?, description?}; a field left out keeps its value."""
    return await run_route(teams.CHANGE, body=True, team_id=team_id)


@blueprint.delete("/teams/<id:team_id>")
@responds(Team)
@guarded(tier=ApiTier.FULL, use_case=teams.DELETE, dashboard=True)
@answers(404)
async def delete_team(team_id: int):
    """Delete a team; its members stay in the workspace. The answer is the team as it was."""
    return await run_route(teams.DELETE, team_id=team_id)


@blueprint.put("/teams/<id:team_id>/members/<id:member_id>")
@responds(Team)
@guarded(tier=ApiTier.FULL, use_case=teams.ADD_MEMBER, dashboard=True)
@answers(404, 409)
async def add_team_member(team_id: int, member_id: int):
    """Put a member in a team (one already in it stays); the answer is the team."""
    return await run_route(teams.ADD_MEMBER, team_id=team_id, member_id=member_id)


@blueprint.delete("/teams/<id:team_id>/members/<id:member_id>")
@responds(Team)
@guarded(tier=ApiTier.FULL, use_case=teams.REMOVE_MEMBER, dashboard=True)
@answers(404)
async def remove_team_member(team_id: int, member_id: int):
    """Take a member out of a team (404 not_in_team if they are not in it); the answer is the team."""
    return await run_route(teams.REMOVE_MEMBER, team_id=team_id, member_id=member_id)


@blueprint.get("/members/<id:member_id>/teams")
@responds(TeamList)
@guarded(tier=ApiTier.FULL, use_case=teams.MEMBERS_TEAMS, dashboard=True)
@answers(404)
async def members_teams(member_id: int):
    """The teams a member is in, by name."""
    return await run_route(teams.MEMBERS_TEAMS, member_id=member_id)


@blueprint.get("/availability")
@responds(TeamAvailability)
@guarded(tier=ApiTier.FULL, use_case=availability.EVERYONE, dashboard=True)
async def team_availability():
    """Every member's availability now: online, busy or offline, what they chose and why they are offline if
    they are; the idle time, and whether the business hours are open."""
    return await run_route(availability.EVERYONE)


@blueprint.get("/availability/settings")
@responds(AvailabilitySettings)
@guarded(tier=ApiTier.FULL, use_case=availability.SETTINGS, dashboard=True)
async def read_availability_settings():
    """The idle time: how long after a member's last page closed they count as offline."""
    return await run_route(availability.SETTINGS)


@blueprint.put("/availability/settings")
@responds(AvailabilitySettings)
@guarded(tier=ApiTier.FULL, use_case=availability.SAVE_SETTINGS, dashboard=True)
@takes(body_of(availability.SAVE_SETTINGS, path=()))
async def save_availability_settings():
    """Set the idle time: {idle_seconds} (5 to 86,400); it applies to every member at once."""
    return await run_route(availability.SAVE_SETTINGS, body=True)


@blueprint.get("/me/availability")
@responds(MemberAvailability)
@guarded(tier=ApiTier.FULL, use_case=availability.MINE, dashboard=True)
@answers(404)
async def my_availability():
    """The calling member's availability (a key's: its creator's)."""
    return await run_route(availability.MINE)


@blueprint.put("/me/availability")
@responds(MemberAvailability)
@guarded(tier=ApiTier.FULL, use_case=availability.CHOOSE, dashboard=True)
@takes(body_of(availability.CHOOSE, path=()))
@answers(404)
async def choose_availability():
    """Choose the calling member's status: {status: online | busy | offline}. Choosing counts as being seen; a
    choice made outside the business hours holds until the next opening."""
    return await run_route(availability.CHOOSE, body=True)


@blueprint.get("/assignment")
@responds(AssignmentSettings)
@guarded(tier=ApiTier.FULL, use_case=auto_assignment.SETTINGS, dashboard=True)
async def read_assignment_settings():
    """Automatic assignment: how waiting chats are handed to members who are online (off, round_robin or
    least_busy), and the open chats a member holds at most."""
    return await run_route(auto_assignment.SETTINGS)


@blueprint.put("/assignment")
@responds(AssignmentSettings)
@guarded(tier=ApiTier.FULL, use_case=auto_assignment.SAVE_SETTINGS, dashboard=True)
@takes(body_of(auto_assignment.SAVE_SETTINGS, path=()))
async def save_assignment_settings():
    """Set automatic assignment: {mode: off | round_robin | least_busy, capacity? (1 to 1,000, default 10)}. Chats
    already waiting are handed out at once."""
    return await run_route(auto_assignment.SAVE_SETTINGS, body=True)
