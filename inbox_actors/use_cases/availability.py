"""Availability as use cases: a member's own status (reading it, choosing online, busy or offline), everyone's
availability, and the workspace's idle time.

A member's status is their own, whatever member the arguments could name (there is no member argument), and is for
whoever works chats: choosing it needs `inbox` (reading it, `inbox:read` too). Everyone's availability is the team
overview's (`inbox` or `team_management`, each with `:read`), as the hand-off queue is; the idle time is a team
setting (`team_management`), recorded in the team audit log. The rule that makes a member offline is
`team/presence.py`'s.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from inbox_actors.team import assignment_desk, presence
from inbox_actors.team.presence import MAX_IDLE_SECONDS, MIN_IDLE_SECONDS
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.chat_reads import NoArguments
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused
from inbox_actors.use_cases.use_case import Kind, UseCase, rule

Status = Annotated[presence.Status, msgspec.Meta(
    description="online (taking chats), busy (at work, not taking new chats) or offline.",
    extra=rule("invalid_status", "A status is online, busy or offline."))]
IdleSeconds = Annotated[int, msgspec.Meta(
    ge=MIN_IDLE_SECONDS, le=MAX_IDLE_SECONDS, examples=[300],
    description="How long after a member's last page closed they count as offline: 5 to 86,400 seconds.",
    extra=rule("invalid_idle_seconds", f"idle_seconds is a whole number of seconds from {MIN_IDLE_SECONDS} to "
                                       f"{MAX_IDLE_SECONDS:,}."))]
NOBODY = Refused(Reason.NOT_FOUND, "Availability is a member's own: no member of this workspace calls.", 404,
                 "not_found")


class StatusChoice(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    status: Status


class IdleSetting(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    idle_seconds: IdleSeconds


async def _mine(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    if caller.is_operator:
        return NOBODY
    found = await presence.availability(deps.db, caller.workspace_id, [caller.member_id])
    return Done(found.data[0]) if found.data else NOBODY


async def _choose(deps: UseCaseDeps, caller: Caller, a: StatusChoice) -> Outcome:
    if caller.is_operator:
        return NOBODY
    await presence.choose(deps.db, caller.workspace_id, caller.member_id, a.status)
    # Online again: chats waiting may go to them now (busy or offline: the desk's next round passes them by).
    assignment_desk.look(deps.actors, caller.workspace_id)
    return await _mine(deps, caller, NoArguments())


async def _everyone(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(await presence.availability(deps.db, caller.workspace_id))


async def _settings(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(await presence.read_settings(deps.db, caller.workspace_id))


async def _save_settings(deps: UseCaseDeps, caller: Caller, a: IdleSetting) -> Outcome:
    member = None if caller.is_operator else caller.member_id
    return Done(await presence.save_settings(deps.db, caller.workspace_id, member, caller.author, a.idle_seconds,
                                             deps.clock.now()))


# -- the declarations ----------------------------------------------------------------------------------------

MINE = UseCase("get_my_availability", NoArguments, permissions.CHAT_ACTIONS, Kind.READ, _mine)
CHOOSE = UseCase("set_my_availability", StatusChoice, permissions.CHAT_ACTIONS, Kind.WRITE, _choose)
EVERYONE = UseCase("team_availability", NoArguments, permissions.TEAM_OVERVIEW, Kind.READ, _everyone)
SETTINGS = UseCase("get_availability_settings", NoArguments, permissions.TEAM_SETTINGS, Kind.READ, _settings)
SAVE_SETTINGS = UseCase("save_availability_settings", IdleSetting, permissions.TEAM_SETTINGS, Kind.WRITE,
                        _save_settings)
