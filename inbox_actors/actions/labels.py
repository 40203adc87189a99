"""The workspace's label set: listing, creating, renaming or recolouring, deleting (`team/labels.py` holds the
rules). Putting a label on a chat is a chat action (`chats.label`)."""

from __future__ import annotations

from inbox_actors.actions.caller import Caller
from inbox_actors.actions.deps import ActionDeps
from inbox_actors.actions.outcomes import Refused, judged
from inbox_actors.team import labels


async def create(deps: ActionDeps, caller: Caller, body: labels.CreateLabel) -> labels.LabelView | Refused:
    return await judged(labels.create(deps.db, caller.workspace_id, caller.member_id, caller.author, body,
                                      deps.clock.now()), labels.LabelRefusal)


async def change(deps: ActionDeps, caller: Caller, label_id: int,
                 body: labels.ChangeLabel) -> labels.LabelView | Refused:
    return await judged(labels.change(deps.db, caller.workspace_id, caller.member_id, caller.author, label_id,
                                      body, deps.clock.now()), labels.LabelRefusal)


async def delete(deps: ActionDeps, caller: Caller, label_id: int) -> labels.LabelDeleted | Refused:
    return await judged(labels.delete(deps.db, caller.workspace_id, caller.member_id, caller.author, label_id,
                                      deps.clock.now()), labels.LabelRefusal)

