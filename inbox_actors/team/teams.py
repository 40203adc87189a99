"""A workspace's teams: named groups of its members (Billing, Tier 2, Spanish), a member in any number of them.

A per-workspace setting written in one transaction each, like the label set: creating, renaming or describing,
deleting a team and putting a member in or taking one out are recorded in the team audit log (subject
`team:<id>`). The fields' shapes (lengths, characters) are the use cases' argument structs'
(`use_cases/teams.py`); what needs more than a field's shape is refused here with a `TeamRefusal`: a name another
team has whatever its case (409 team_name_taken), more than MAX_TEAMS (409 too_many_teams), a name of spaces only,
a team or member the workspace does not have (404), a removed member (409 member_removed), a member not in the team
(404 not_in_team). Members who were removed from the workspace are left out of every team's list.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from inbox_actors.domain import team_audit
from inbox_actors.domain.team_ref import TeamRef
from inbox_actors.team import presence
from persistence.database import Database, Record, UnitOfWork
from persistence.queries import team_audit as audit_queries
from persistence.queries import teams as queries

MAX_NAME = 60
MAX_DESCRIPTION = 500
MAX_TEAMS = 100
"""Enough for every queue a support desk splits its work into, and a list a page and a picker show whole."""


class TeamMember(msgspec.Struct, frozen=True):
    user_id: int
    name: str
    status: str
    """The member's standing on the roster: active or suspended."""
    availability: presence.Status
    """online, busy or offline now (docs/team.md#availability)."""
    added_at: datetime


class Team(msgspec.Struct, frozen=True):
    id: int
    name: str
    description: str
    queue_visible_to_assigned_only: bool
    """Whether its members limited to assigned chats also see (and may take) the chats waiting in its queue."""
    members: list[TeamMember]
    """Oldest member first."""
    created_by: int | None
    """The member who made it (null: the operator's command line)."""
    updated_by: int | None
    created_at: datetime
    updated_at: datetime
    """When its name, description, queue's visibility or members last changed."""


class TeamList(msgspec.Struct, frozen=True):
    data: list[Team]


class TeamRefusal(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


NOT_FOUND = TeamRefusal(404, "not_found", "No such team in this workspace.")
NO_SUCH_MEMBER = TeamRefusal(404, "not_found", "No such member in this workspace.")
MEMBER_REMOVED = TeamRefusal(409, "member_removed", "This member was removed from the workspace; removal is final.")
NOT_IN_TEAM = TeamRefusal(404, "not_in_team", "This member is not in the team.")


async def teams(db: Database, workspace_id: int, member_id: int | None = None) -> TeamList:
    """The teams by name, each with its members (only the teams `member_id` is in, when given)."""
    return TeamList(await _views(db, workspace_id, await queries.list_teams(db, workspace_id, member_id)))


async def team_names(db: Database, workspace_id: int) -> list[TeamRef]:
    """The workspace's teams by name, without their members: what a chat can be routed to."""
    return [TeamRef(row["id"], row["name"]) for row in await queries.list_teams(db, workspace_id)]


async def members_teams(db: Database, workspace_id: int, member_id: int) -> TeamList:
    """The teams a member of the workspace is in, by name."""
    if await queries.workspace_member(db, workspace_id, member_id) is None:
        raise NO_SUCH_MEMBER
    return await teams(db, workspace_id, member_id)


async def one(db: Database, workspace_id: int, team_id: int) -> Team:
    row = await queries.find_team(db, workspace_id, team_id)
    if row is None:
        raise NOT_FOUND
    return (await _views(db, workspace_id, [row]))[0]


async def create(db: Database, workspace_id: int, member_id: int | None, via: str, name: str, description: str,
                 queue_visible: bool, now: datetime) -> Team:
    name = _name(name)
    async with db.transaction() as tx:
        await queries.lock_teams(tx, workspace_id)
        if await queries.count_teams(tx, workspace_id) >= MAX_TEAMS:
            raise TeamRefusal(409, "too_many_teams", f"A workspace has at most {MAX_TEAMS} teams; delete one first.")
        row = await queries.insert_team(tx, workspace_id, name, description, queue_visible, member_id)
        if row is None:
            raise _taken(name)
        await _audit(tx, workspace_id, member_id, via, team_audit.TEAM_CREATED, row["id"], now,
                     {"name": name, "queue_visible_to_assigned_only": queue_visible})
    return await one(db, workspace_id, row["id"])


async def change(db: Database, workspace_id: int, member_id: int | None, via: str, team_id: int, name: str | None,
                 description: str | None, queue_visible: bool | None, now: datetime) -> Team:
    """A field given as None keeps its value; a change that changes nothing records nothing."""
    name = None if name is None else _name(name)
    async with db.transaction() as tx:
        row = await queries.find_team(tx, workspace_id, team_id, for_update=True)
        if row is None:
            raise NOT_FOUND
        name = row["name"] if name is None else name
        description = row["description"] if description is None else description
        queue_visible = row["queue_visible_to_assigned_only"] if queue_visible is None else queue_visible
        if name.lower() != row["name"].lower():
            # Judged under the lock creation takes, so that a rename and a creation of one name cannot both pass.
            await queries.lock_teams(tx, workspace_id)
            if await queries.name_taken(tx, workspace_id, name, team_id):
                raise _taken(name)
        changed = [field for field, value in (("name", name), ("description", description),
                                              ("queue_visible_to_assigned_only", queue_visible)) if value != row[field]]
        if changed:
            await queries.update_team(tx, team_id, name, description, queue_visible, member_id)
            await _audit(tx, workspace_id, member_id, via, team_audit.TEAM_CHANGED, team_id, now,
                         {"name": name, "from": row["name"], "changed": changed})
    return await one(db, workspace_id, team_id)


async def delete(db: Database, workspace_id: int, member_id: int | None, via: str, team_id: int,
                 now: datetime) -> Team:
    """The team as it was before it was deleted; its members stay in the workspace."""
    async with db.transaction() as tx:
        row = await _team_for_update(tx, workspace_id, team_id)
        before = (await _views(tx, workspace_id, [row]))[0]
        await queries.delete_team(tx, team_id)
        await _audit(tx, workspace_id, member_id, via, team_audit.TEAM_DELETED, team_id, now,
                     {"name": row["name"], "members": [m.user_id for m in before.members]})
    return before


async def add_member(db: Database, workspace_id: int, by: int | None, via: str, team_id: int, member_id: int,
                     now: datetime) -> Team:
    """Put a member in the team; one already in it stays, and nothing is recorded."""
    async with db.transaction() as tx:
        await _team_for_update(tx, workspace_id, team_id)
        member = await queries.workspace_member(tx, workspace_id, member_id)
        if member is None:
            raise NO_SUCH_MEMBER
        if member["status"] == "removed":
            raise MEMBER_REMOVED
        if await queries.add_team_member(tx, team_id, member_id, by):
            await queries.touch_team(tx, team_id, by)
            await _audit(tx, workspace_id, by, via, team_audit.TEAM_MEMBER_ADDED, team_id, now,
                         {"member_id": member_id, "name": member["name"]})
    return await one(db, workspace_id, team_id)


async def remove_member(db: Database, workspace_id: int, by: int | None, via: str, team_id: int, member_id: int,
                        now: datetime) -> Team:
    """Take a member out of the team (they stay in the workspace and in their other teams)."""
    async with db.transaction() as tx:
        await _team_for_update(tx, workspace_id, team_id)
        member = await queries.workspace_member(tx, workspace_id, member_id)
        if member is None:
            raise NO_SUCH_MEMBER
        if not await queries.remove_team_member(tx, team_id, member_id):
            raise NOT_IN_TEAM
        await queries.touch_team(tx, team_id, by)
        await _audit(tx, workspace_id, by, via, team_audit.TEAM_MEMBER_REMOVED, team_id, now,
                     {"member_id": member_id, "name": member["name"]})
    return await one(db, workspace_id, team_id)


async def _views(db: Database | UnitOfWork, workspace_id: int, rows: list[Record]) -> list[Team]:
    """The teams with their members and each member's availability: three reads, whatever the number of teams."""
    listed = await queries.team_members(db, [row["id"] for row in rows]) if rows else []
    available = await presence.of_members(db, workspace_id, sorted({m["member_id"] for m in listed})) \
        if listed else {}
    by_team: dict[int, list[TeamMember]] = {}
    for m in listed:
        by_team.setdefault(m["team_id"], []).append(TeamMember(
            m["member_id"], m["name"], m["status"], available[m["member_id"]].status, m["added_at"]))
    return [Team(row["id"], row["name"], row["description"], row["queue_visible_to_assigned_only"],
                 by_team.get(row["id"], []), row["created_by"], row["updated_by"], row["created_at"],
                 row["updated_at"]) for row in rows]


async def _team_for_update(tx: UnitOfWork, workspace_id: int, team_id: int) -> Record:
    row = await queries.find_team(tx, workspace_id, team_id, for_update=True)
    if row is None:
        raise NOT_FOUND
    return row


def _name(raw: str) -> str:
    """On one line with single spaces (its shape is the argument's rule)."""
    name = " ".join(raw.split())
    if not name:
        raise TeamRefusal(400, "invalid_team_name", "A team's name needs more than spaces.")
    return name


def _taken(name: str) -> TeamRefusal:
    return TeamRefusal(409, "team_name_taken", f"The workspace already has a team named {name} (names are the same "
                                               "whatever their case).")


async def _audit(tx: UnitOfWork, workspace_id: int, member_id: int | None, via: str, action: str, team_id: int,
                 now: datetime, details: dict) -> None:
    await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=member_id, via=via, action=action,
                               subject=team_audit.team_subject(team_id), details=details)
