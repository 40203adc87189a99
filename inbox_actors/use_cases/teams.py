"""A workspace's teams as use cases: listing them with their members, a member's teams, creating, renaming or
describing, deleting a team, and putting a member in or taking one out.

Seeing the teams is the team overview's (`inbox` or `team_management`, each with `:read`): whoever works the chats
sees who is on which team, as they see whom a chat can go to. Changing them is a team setting (`team_management`),
as the roster is. The fields' rules are the structs' here, each with its own code and sentence; the set's (a name
unique whatever its case, at most MAX_TEAMS, members of the workspace) are `team/teams.py`'s.
"""

from __future__ import annotations

from typing import Annotated, TypeVar

import msgspec

from inbox_actors.team import teams
from inbox_actors.team.teams import MAX_DESCRIPTION, MAX_NAME, TeamRefusal
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.chat_reads import NoArguments
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import BIGINT_MAX, FILLED_LINE, MULTI_LINE
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused, judged
from inbox_actors.use_cases.use_case import Kind, UseCase, done, rule

TeamName = Annotated[str, msgspec.Meta(
    min_length=1, max_length=MAX_NAME, pattern=FILLED_LINE, examples=["Billing"],
    description="The team's name, unique in the workspace whatever its case.",
    extra=rule("invalid_team_name", f"A team's name is 1 to {MAX_NAME} characters on one line."))]
Description = Annotated[str, msgspec.Meta(
    max_length=MAX_DESCRIPTION, pattern=MULTI_LINE, examples=["Refunds, invoices and plan changes."],
    description="What the team does (up to 500 characters; empty for none).",
    extra=rule("invalid_description", f"A team's description is at most {MAX_DESCRIPTION} characters, with no "
                                      "control characters but line breaks and tabs."))]
# Any whole number: one no team or member has (0, beyond bigint) is answered as any missing one is, 404.
TeamId = Annotated[int, msgspec.Meta(description="The team's id.")]
MemberId = Annotated[int, msgspec.Meta(description="The member's user id.")]
QueueVisible = Annotated[bool, msgspec.Meta(
    description="Whether the team's members limited to assigned chats also see (and may take) the chats waiting in "
                "its queue; false: they see only the chats they hold.",
    extra=rule("invalid_queue_visibility", "queue_visible_to_assigned_only is true or false."))]
Given = TypeVar("Given")
NO_SUCH_TEAM = Refused(Reason.NOT_FOUND, teams.NOT_FOUND.message, 404, "not_found")
NO_SUCH_MEMBER = Refused(Reason.NOT_FOUND, teams.NO_SUCH_MEMBER.message, 404, "not_found")


class NewTeam(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: TeamName
    description: Description = ""
    queue_visible_to_assigned_only: QueueVisible = False


class TeamChange(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A field left out keeps its value."""

    team_id: TeamId
    name: TeamName | msgspec.UnsetType = msgspec.UNSET
    description: Description | msgspec.UnsetType = msgspec.UNSET
    queue_visible_to_assigned_only: QueueVisible | msgspec.UnsetType = msgspec.UNSET


class OneTeam(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    team_id: TeamId


class TeamMembership(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    team_id: TeamId
    member_id: MemberId


class OneMember(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    member_id: MemberId


async def _list(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(await teams.teams(deps.db, caller.workspace_id))


async def _members_teams(deps: UseCaseDeps, caller: Caller, a: OneMember) -> Outcome:
    if not _may_exist(a.member_id):
        return NO_SUCH_MEMBER
    return done(await judged(teams.members_teams(deps.db, caller.workspace_id, a.member_id), TeamRefusal))


async def _one(deps: UseCaseDeps, caller: Caller, a: OneTeam) -> Outcome:
    if not _may_exist(a.team_id):
        return NO_SUCH_TEAM
    return done(await judged(teams.one(deps.db, caller.workspace_id, a.team_id), TeamRefusal))


async def _create(deps: UseCaseDeps, caller: Caller, a: NewTeam) -> Outcome:
    return done(await judged(teams.create(deps.db, caller.workspace_id, _member(caller), caller.author, a.name,
                                          a.description, a.queue_visible_to_assigned_only, deps.clock.now()),
                             TeamRefusal))


async def _change(deps: UseCaseDeps, caller: Caller, a: TeamChange) -> Outcome:
    if not _may_exist(a.team_id):
        return NO_SUCH_TEAM
    return done(await judged(teams.change(deps.db, caller.workspace_id, _member(caller), caller.author, a.team_id,
                                          _given(a.name), _given(a.description),
                                          _given(a.queue_visible_to_assigned_only), deps.clock.now()), TeamRefusal))


async def _delete(deps: UseCaseDeps, caller: Caller, a: OneTeam) -> Outcome:
    if not _may_exist(a.team_id):
        return NO_SUCH_TEAM
    return done(await judged(teams.delete(deps.db, caller.workspace_id, _member(caller), caller.author, a.team_id,
                                          deps.clock.now()), TeamRefusal))


async def _add_member(deps: UseCaseDeps, caller: Caller, a: TeamMembership) -> Outcome:
    if not _may_exist(a.team_id):
        return NO_SUCH_TEAM
    if not _may_exist(a.member_id):
        return NO_SUCH_MEMBER
    return done(await judged(teams.add_member(deps.db, caller.workspace_id, _member(caller), caller.author,
                                              a.team_id, a.member_id, deps.clock.now()), TeamRefusal))


async def _remove_member(deps: UseCaseDeps, caller: Caller, a: TeamMembership) -> Outcome:
    if not _may_exist(a.team_id):
        return NO_SUCH_TEAM
    if not _may_exist(a.member_id):
        return NO_SUCH_MEMBER
    return done(await judged(teams.remove_member(deps.db, caller.workspace_id, _member(caller), caller.author,
                                                 a.team_id, a.member_id, deps.clock.now()), TeamRefusal))


def _member(caller: Caller) -> int | None:
    """Who the records name: the member, or nobody for the operator's command line."""
    return None if caller.is_operator else caller.member_id


def _given(value: Given | msgspec.UnsetType) -> Given | None:
    return None if value is msgspec.UNSET else value


def _may_exist(number: int) -> bool:
    return 1 <= number <= BIGINT_MAX


# -- the declarations ----------------------------------------------------------------------------------------

LIST = UseCase("list_teams", NoArguments, permissions.TEAM_OVERVIEW, Kind.READ, _list)
ONE = UseCase("get_team", OneTeam, permissions.TEAM_OVERVIEW, Kind.READ, _one)
MEMBERS_TEAMS = UseCase("list_members_teams", OneMember, permissions.TEAM_OVERVIEW, Kind.READ, _members_teams)
CREATE = UseCase("create_team", NewTeam, permissions.TEAM_SETTINGS, Kind.WRITE, _create)
CHANGE = UseCase("change_team", TeamChange, permissions.TEAM_SETTINGS, Kind.WRITE, _change)
DELETE = UseCase("delete_team", OneTeam, permissions.TEAM_SETTINGS, Kind.WRITE, _delete)
ADD_MEMBER = UseCase("add_team_member", TeamMembership, permissions.TEAM_SETTINGS, Kind.WRITE, _add_member)
REMOVE_MEMBER = UseCase("remove_team_member", TeamMembership, permissions.TEAM_SETTINGS, Kind.WRITE,
                        _remove_member)
