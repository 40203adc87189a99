"""Starting a broadcast: stored with its whole audience in one transaction (`broadcasts/creation.py`), then
launched through its actor, or left for the schedule. Sending it needs the cloud API switched on, as every send
does; it waits for approval unless the caller holds `campaign_approve`. An Idempotency-Key makes a retry answer the
broadcast the first request made (`replayed`), whoever won a race between the two."""

from __future__ import annotations

import msgspec

from inbox_actors.actions.caller import Caller
from inbox_actors.actions.chats import sending_refusal
from inbox_actors.actions.deps import ActionDeps
from inbox_actors.actions.outcomes import Reason, Refused, reason_of_status
from inbox_actors.broadcasts import broadcast, creation, schedule
from inbox_actors.broadcasts import views as broadcast_views

APPROVERS = ("campaign_approve",)


class Started(msgspec.Struct, frozen=True):
    view: broadcast_views.BroadcastView
    replayed: bool


async def start(deps: ActionDeps, caller: Caller, order: creation.BulkSend, *, idempotency_key: str | None = None,
                request_hash: bytes | None = None) -> Started | Refused:
    if (refused := sending_refusal(caller)) is not None:
        return refused
    creator = creation.Creator(workspace_id=caller.workspace_id, member_id=caller.member_id, via=caller.author,
                               may_approve=caller.may(APPROVERS, "POST"))
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
