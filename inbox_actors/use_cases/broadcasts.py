"""A broadcast's use cases: starting one, reading one, and a member's calls on it (approve, reject, cancel, pause,
resume).

Starting stores the broadcast with its whole audience in one transaction (`broadcasts/creation.py`), then launches
it through its actor, or leaves it for the schedule. Sending needs the cloud API switched on, as every send does;
it waits for approval unless the caller holds `campaign_approve`. An Idempotency-Key makes a retry answer the
broadcast the first request made (`replayed`), whoever won a race between the two. A member's call goes to the
broadcast's actor, which owns its status and decides.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec

from inbox_actors.broadcasts import broadcast, creation, schedule
from inbox_actors.broadcasts import views as broadcast_views
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.chat_reads import PAGE_LIMIT, query
from inbox_actors.use_cases.chats import Language, Parameters, TemplateName, sending_refusal
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import BIGINT_MAX, ONE_LINE, Cursor, Phone, Tag
from inbox_actors.use_cases.fields import Reason as ReasonText
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused, reason_of_status
from inbox_actors.use_cases.use_case import Kind, UseCase, rule

NOT_FOUND = Refused(Reason.NOT_FOUND, "No broadcast with this id in the workspace.", 404, "broadcast_not_found")
MAX_BROADCAST_PHONES = 1000
BroadcastStatus = Literal["pending_approval", "scheduled", "sending", "paused", "completed", "cancelled", "rejected"]
# An id no broadcast can have (0: the URL's digits beyond any row, `IdConverter`) names no broadcast.
BroadcastId = Annotated[int, msgspec.Meta(ge=1, le=BIGINT_MAX, description="The broadcast's id.",
                                          extra=rule(NOT_FOUND.code, NOT_FOUND.message, 404))]


class ListBroadcasts(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    status: Annotated[BroadcastStatus, msgspec.Meta(description="Only broadcasts in this status.")] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=PAGE_LIMIT, description="How many broadcasts, 1 to 50.")] = 20
    cursor: Cursor | None = None


class OneBroadcast(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    broadcast_id: BroadcastId


class Decision(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    broadcast_id: BroadcastId
    reason: ReasonText | None = None
    """Why (kept with the broadcast when rejected, and in the team audit log)."""


class SendBroadcast(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    template: Annotated[TemplateName, msgspec.Meta(description="The approved template's name (see "
                                                               "list_templates).")]
    language: Language = "en"
    parameters: Annotated[Parameters, msgspec.Meta(description="The template's parameters, the same for every "
                                                               "recipient.")] = []
    phones: Annotated[list[Phone], msgspec.Meta(max_length=MAX_BROADCAST_PHONES,
                                                description="Recipients by phone (up to 1,000; for more, address "
                                                            "contacts by tags).")] = []
    tags: Annotated[list[Tag], msgspec.Meta(max_length=20, description="Also every contact having all these "
                                                                       "tags.")] = []
    contact_status: Annotated[str, msgspec.Meta(min_length=1, max_length=100, pattern=ONE_LINE,
                                                description="With tags: only contacts in this status.")] | None = None
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=ONE_LINE,
                                      description="A name for the team's broadcast list.")] | None = None
    scheduled_at: Annotated[datetime, msgspec.Meta(tz=True, description="When to send (ISO 8601 with a time zone); "
                                                               "now when left out.")] | None = None


class StartBroadcast(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The spec's bulk send as its body gives it (`creation.BulkSend`), with the Idempotency-Key that makes a
    retry answer the broadcast the first request made."""

    order: creation.BulkSend
    idempotency_key: str | None = None
    request_hash: bytes | None = None


class Started(msgspec.Struct, frozen=True):
    view: broadcast_views.BroadcastView
    replayed: bool


async def start(deps: UseCaseDeps, caller: Caller, order: creation.BulkSend, *, idempotency_key: str | None = None,
                request_hash: bytes | None = None) -> Started | Refused:
    if (refused := sending_refusal(caller)) is not None:
        return refused
    creator = creation.Creator(workspace_id=caller.workspace_id, member_id=caller.member_id, via=caller.author,
                               may_approve=APPROVE.allows(caller))
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


async def find(deps: UseCaseDeps, caller: Caller, broadcast_id: int):
    """The broadcast's row, if it is one of the caller's workspace (None otherwise)."""
    return await broadcast_views.find_broadcast(deps.db, caller.workspace_id, broadcast_id)


async def view(deps: UseCaseDeps, caller: Caller, broadcast_id: int) -> broadcast_views.BroadcastView | Refused:
    row = await find(deps, caller, broadcast_id)
    if row is None:
        return NOT_FOUND
    return await broadcast_views.broadcast_view(deps.db, row, deps.clock.now())


async def _decide(deps: UseCaseDeps, caller: Caller, broadcast_id: int, action: str,
                  reason: str | None = None) -> Outcome:
    """One of `broadcast.DECISIONS` on the broadcast, as the caller's member; the broadcast as it now is."""
    reason = reason.strip() or None if reason is not None else None
    if await find(deps, caller, broadcast_id) is None:
        return NOT_FOUND
    row = await deps.actors.ref(broadcast.KIND, broadcast.broadcast_key(caller.workspace_id, broadcast_id)).ask(
        broadcast.Decide(action, member_id=caller.member_id, via=caller.author, reason=reason))
    if isinstance(row, broadcast.Refused):
        return Refused(reason_of_status(row.status), row.message, row.status, row.code)
    if row["status"] == creation.SCHEDULED:
        schedule.scheduled(deps.actors, row["scheduled_at"])
    return Done(await broadcast_views.broadcast_view(deps.db, row, deps.clock.now()))


async def _approve(deps: UseCaseDeps, caller: Caller, a: OneBroadcast) -> Outcome:
    return await _decide(deps, caller, a.broadcast_id, "approve")


async def _reject(deps: UseCaseDeps, caller: Caller, a: Decision) -> Outcome:
    return await _decide(deps, caller, a.broadcast_id, "reject", a.reason)


async def _cancel(deps: UseCaseDeps, caller: Caller, a: Decision) -> Outcome:
    return await _decide(deps, caller, a.broadcast_id, "cancel", a.reason)


async def _pause(deps: UseCaseDeps, caller: Caller, a: OneBroadcast) -> Outcome:
    return await _decide(deps, caller, a.broadcast_id, "pause")


async def _resume(deps: UseCaseDeps, caller: Caller, a: OneBroadcast) -> Outcome:
    return await _decide(deps, caller, a.broadcast_id, "resume")


async def _show(deps: UseCaseDeps, caller: Caller, a: OneBroadcast) -> Outcome:
    found = await view(deps, caller, a.broadcast_id)
    return found if isinstance(found, Refused) else Done(found)


async def _list(deps: UseCaseDeps, caller: Caller, a: ListBroadcasts) -> Outcome:
    return Done(await broadcast_views.list_broadcasts(deps.db, caller.workspace_id,
                                                      query(status=a.status, limit=a.limit, cursor=a.cursor)))


async def _start(deps: UseCaseDeps, caller: Caller, a: StartBroadcast) -> Outcome:
    started = await start(deps, caller, a.order, idempotency_key=a.idempotency_key, request_hash=a.request_hash)
    return started if isinstance(started, Refused) else Done(started)


async def _send(deps: UseCaseDeps, caller: Caller, a: SendBroadcast) -> Outcome:
    """A broadcast as a tool starts it; its refusal says whether a broadcast was stored."""
    audience = (creation.AudienceFilter(tags=list(a.tags), status=a.contact_status)
                if a.tags or a.contact_status is not None else None)
    order = creation.BulkSend(template=creation.TemplateOrder(name=a.template, language=a.language,
                                                              parameters=list(a.parameters)),
                              recipients=list(a.phones), filter=audience, name=a.name, scheduled_at=a.scheduled_at)
    started = await start(deps, caller, order)
    if isinstance(started, Refused):
        if started.reason is Reason.UNAVAILABLE:
            return msgspec.structs.replace(started, message=f"The broadcast was stored but did not start "
                                                            f"({started.code}): {started.message}")
        return msgspec.structs.replace(started, message=f"No broadcast made ({started.code}): {started.message}")
    return Done(started.view)


# -- the declarations ----------------------------------------------------------------------------------------

LIST = UseCase("list_broadcasts", ListBroadcasts, permissions.CAMPAIGNS, Kind.READ, _list)
SHOW = UseCase("get_broadcast", OneBroadcast, permissions.CAMPAIGNS, Kind.READ, _show)
SEND = UseCase("send_broadcast", SendBroadcast, permissions.CAMPAIGNS, Kind.WRITE, _send)
START = UseCase("start_broadcast", StartBroadcast, permissions.CAMPAIGNS, Kind.WRITE, _start)
APPROVE = UseCase("approve_broadcast", OneBroadcast, permissions.APPROVE_BROADCASTS, Kind.WRITE, _approve)
REJECT = UseCase("reject_broadcast", Decision, permissions.APPROVE_BROADCASTS, Kind.WRITE, _reject)
CANCEL = UseCase("cancel_broadcast", Decision, permissions.CAMPAIGNS, Kind.WRITE, _cancel)
PAUSE = UseCase("pause_broadcast", OneBroadcast, permissions.CAMPAIGNS, Kind.WRITE, _pause)
RESUME = UseCase("resume_broadcast", OneBroadcast, permissions.CAMPAIGNS, Kind.WRITE, _resume)
