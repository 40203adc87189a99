"""The workspace's label set as use cases: listing it, creating, renaming or recolouring, deleting a label.

The rules are the label set's (`labels/label_set.py`: names unique whatever their case, at most MAX_LABELS, a
rename or deletion carried to every chat that has the label); a refusal of theirs answers with its status, code
and sentence. Reading the set needs what reading chats does, since a member labels chats from it; changing it is
a setting. Putting a label on a chat is a chat's use case (`chat_organising.ADD_LABEL`).
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from inbox_actors.labels import label_set
from inbox_actors.labels.label_set import Colour, CreateLabel, Name
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.chat_reads import NoArguments
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import BIGINT_MAX
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused, judged
from inbox_actors.use_cases.use_case import Kind, UseCase, done

# Any whole number: one no label has (0, beyond bigint) is answered as any missing label is, 404 not_found.
LabelId = Annotated[int, msgspec.Meta(description="The label's id.")]
NO_SUCH_LABEL = Refused(Reason.NOT_FOUND, "No such label in this workspace.", 404, "not_found")


class LabelChange(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A field left out keeps its value."""

    label_id: LabelId
    name: Name | msgspec.UnsetType = msgspec.UNSET
    colour: Colour | msgspec.UnsetType = msgspec.UNSET


class OneLabel(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    label_id: LabelId


async def _list(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(await label_set.labels(deps.db, caller.workspace_id))


async def _create(deps: UseCaseDeps, caller: Caller, a: CreateLabel) -> Outcome:
    return done(await judged(label_set.create(deps.db, caller.workspace_id, caller.member_id, caller.author, a,
                                              deps.clock.now()), label_set.LabelRefusal))


async def _change(deps: UseCaseDeps, caller: Caller, a: LabelChange) -> Outcome:
    """A new name replaces the old one on every chat that has it."""
    if not _may_exist(a.label_id):
        return NO_SUCH_LABEL
    change = label_set.ChangeLabel(name=a.name, colour=a.colour)
    return done(await judged(label_set.change(deps.db, caller.workspace_id, caller.member_id, caller.author,
                                              a.label_id, change, deps.clock.now()), label_set.LabelRefusal))


async def _delete(deps: UseCaseDeps, caller: Caller, a: OneLabel) -> Outcome:
    """The label comes off every chat that has it."""
    if not _may_exist(a.label_id):
        return NO_SUCH_LABEL
    return done(await judged(label_set.delete(deps.db, caller.workspace_id, caller.member_id, caller.author,
                                              a.label_id, deps.clock.now()), label_set.LabelRefusal))


def _may_exist(label_id: int) -> bool:
    return 1 <= label_id <= BIGINT_MAX


# -- the declarations ----------------------------------------------------------------------------------------

LIST = UseCase("list_labels", NoArguments, permissions.CHAT_CONTENT, Kind.READ, _list)
CREATE = UseCase("create_label", CreateLabel, permissions.SETTINGS, Kind.WRITE, _create)
CHANGE = UseCase("change_label", LabelChange, permissions.SETTINGS, Kind.WRITE, _change)
DELETE = UseCase("delete_label", OneLabel, permissions.SETTINGS, Kind.WRITE, _delete)
