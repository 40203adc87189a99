"""The workspace's label set: listing, creating, renaming or recolouring, deleting (`team/labels.py` holds the
rules). Putting a label on a chat is a chat action (`chats.label`)."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from inbox_actors.actions.caller import Caller
from inbox_actors.actions.deps import ActionDeps
from inbox_actors.actions.outcomes import Refused, reason_of_status
from inbox_actors.team import labels

T = TypeVar("T")


async def create(deps: ActionDeps, caller: Caller, body: labels.CreateLabel) -> labels.LabelView | Refused:
    return await _judged(labels.create(deps.db, caller.workspace_id, caller.member_id, caller.author, body,
                                       deps.clock.now()))


async def change(deps: ActionDeps, caller: Caller, label_id: int,
                 body: labels.ChangeLabel) -> labels.LabelView | Refused:
    return await _judged(labels.change(deps.db, caller.workspace_id, caller.member_id, caller.author, label_id,
                                       body, deps.clock.now()))


async def delete(deps: ActionDeps, caller: Caller, label_id: int) -> labels.LabelDeleted | Refused:
    return await _judged(labels.delete(deps.db, caller.workspace_id, caller.member_id, caller.author, label_id,
                                       deps.clock.now()))


async def _judged(change: Awaitable[T]) -> T | Refused:
    try:
        return await change
    except labels.LabelRefusal as refusal:
        return Refused(reason_of_status(refusal.status), refusal.message, refusal.status, refusal.code)
