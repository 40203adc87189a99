"""A broadcast's use cases: starting one, reading one, and a member's calls on it (approve, reject, cancel, pause,
resume).

Starting stores the broadcast with its whole audience in one transaction (`broadcasts/creation.py`), then launches
it through its actor, or leaves it for the schedule. Sending needs the cloud API switched on, as every send does;
it waits for approval unless the caller holds `campaign_approve`. An Idempotency-Key makes a retry answer the
broadcast the first request made (`replayed`), whoever won a race between the two. A member's call goes to the
broadcast's actor, which owns its status and decides.
"""

from __future__ import annotations

import msgspec

from inbox_actors.actions import permissions
from inbox_actors.actions.caller import Caller
from inbox_actors.actions.chats import sending_refusal
from inbox_actors.actions.deps import ActionDeps
from inbox_actors.actions.outcomes import Reason, Refused, reason_of_status
from inbox_actors.broadcasts import broadcast, creation, schedule
from inbox_actors.broadcasts import views as broadcast_views


NOT_FOUND = Refused(Reason.NOT_FOUND, "No broadcast with this id in the workspace.", 404, "broadcast_not_found")
DECISIONS = broadcast.ACTIONS


class Started(msgspec.Struct, frozen=True):
    view: broadcast_views.BroadcastView
    replayed: bool


async def start(deps: ActionDeps, caller: Caller, order: creation.BulkSend, *, idempotency_key: str | None = None,
                request_hash: bytes | None = None) -> Started | Refused:
    if (refused := sending_refusal(caller)) is not None:
        return refused
    creator = creation.Creator(workspace_id=caller.workspace_id, member_id=caller.member_id, via=caller.author,
                               may_approve=caller.may(permissions.APPROVE_BROADCASTS, "POST"))
    try:
        created = await creation.create_once(deps.db, creator, order, deps.clock.now(),
                                             idempotency_key=idempotency_key, request_hash=request_hash)
    except creation.Refusal as refusal:
        return Refused(reason_of_status(refusal.status), refusal.message, refusal.status, refusal.code)
    row = created.row
    if not created.replayed:
        row = await schedule.launch(deps.actors, created.row)
        if isinstance(row, broadcast.Refused):
            return Refused(Reason.UNAVAILABLE, row.message, row.status, row.code)
    return Started(await broadcast_views.broadcast_view(deps.db, row, deps.clock.now()), created.replayed)


async def find(deps: ActionDeps, caller: Caller, broadcast_id: int):
    """The broadcast's row, if it is one of the caller's workspace (None otherwise)."""
    return await broadcast_views.find_broadcast(deps.db, caller.workspace_id, broadcast_id)


async def view(deps: ActionDeps, caller: Caller, broadcast_id: int) -> broadcast_views.BroadcastView | Refused:
    row = await find(deps, caller, broadcast_id)
    if row is None:
        return NOT_FOUND
    return await broadcast_views.broadcast_view(deps.db, row, deps.clock.now())


async def decide(deps: ActionDeps, caller: Caller, broadcast_id: int, action: str,
                 reason: str | None = None) -> broadcast_views.BroadcastView | Refused:
    """One of DECISIONS on the broadcast, as the caller's member; the broadcast as it now is."""
    if await find(deps, caller, broadcast_id) is None:
        return NOT_FOUND
    row = await deps.actors.ref(broadcast.KIND, broadcast.broadcast_key(caller.workspace_id, broadcast_id)).ask(
        broadcast.Decide(action, member_id=caller.member_id, via=caller.author, reason=reason))
    if isinstance(row, broadcast.Refused):
        return Refused(reason_of_status(row.status), row.message, row.status, row.code)
    if row["status"] == creation.SCHEDULED:
        schedule.scheduled(deps.actors, row["scheduled_at"])
    return await broadcast_views.broadcast_view(deps.db, row, deps.clock.now())
