"""Automatic assignment's settings as use cases: reading them, and saving how waiting chats are handed out (off, round
robin or least busy) and each member's capacity. A team setting (`team_management`, reads also `:read`), recorded in
the team audit log; saving wakes the workspace's assignment desk, so chats already waiting are handed out at once.
The rule is `domain/auto_assignment.py`'s, the desk `team/assignment_desk.py`.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from inbox_actors.domain.auto_assignment import MAX_CAPACITY, MIN_CAPACITY, Mode
from inbox_actors.team import assignment_desk, assignment_settings
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.chat_reads import NoArguments
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Done, Outcome
from inbox_actors.use_cases.use_case import Kind, UseCase, rule

AssignmentMode = Annotated[Mode, msgspec.Meta(
    description="off (members take chats from the queue themselves), round_robin (to the member given a chat "
                "longest ago) or least_busy (to the member holding the fewest open chats).",
    extra=rule("invalid_mode", "mode is off, round_robin or least_busy."))]
Capacity = Annotated[int, msgspec.Meta(
    ge=MIN_CAPACITY, le=MAX_CAPACITY, examples=[10],
    description="Open chats a member holds at most before automatic assignment passes them by.",
    extra=rule("invalid_capacity", f"capacity is a whole number from {MIN_CAPACITY} to {MAX_CAPACITY:,}."))]


class AssignmentChoice(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    mode: AssignmentMode
    capacity: Capacity = 10


async def _settings(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(await assignment_settings.read_settings(deps.db, caller.workspace_id))


async def _save(deps: UseCaseDeps, caller: Caller, a: AssignmentChoice) -> Outcome:
    member = None if caller.is_operator else caller.member_id
    saved = await assignment_settings.save_settings(deps.db, caller.workspace_id, member, caller.author, a.mode,
                                                    a.capacity, deps.clock.now())
    assignment_desk.look(deps.actors, caller.workspace_id)
    return Done(saved)


# -- the declarations ----------------------------------------------------------------------------------------

SETTINGS = UseCase("get_assignment_settings", NoArguments, permissions.TEAM_SETTINGS, Kind.READ, _settings)
SAVE_SETTINGS = UseCase("save_assignment_settings", AssignmentChoice, permissions.TEAM_SETTINGS, Kind.WRITE, _save)
