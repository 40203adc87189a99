"""Broadcasts: `POST /api/bulk-send` and `/api/broadcasts/*` (progress, list, recipients, approval, control).

Core API (Growth and Scale), scope `campaigns` (reads also `campaigns:read`); approving or rejecting needs
`campaign_approve`. bulk-send is a send: not held to the default per-key limit and exempt from the per-IP ceiling (a
limit set on the key counts it). A member's dashboard session may call these with the same permissions. Stable-code
errors. Each call binds a broadcasts use case (`use_cases/broadcasts.py`, their permissions and rules: the cloud API,
who may skip approval); the request's rules are `broadcasts/creation.py`'s, the statuses and sending
`broadcasts/broadcast.py`'s.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.broadcasts import creation, views
from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging.parameter_catalog import BROADCAST_RECIPIENTS, BROADCASTS
from inbox_actors.use_cases import broadcasts
from inbox_actors.use_cases.chats import sending_refusal
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import run
from inbox_http import idempotency
from inbox_http.contract import answers, body_of, takes
from inbox_http.dependencies import dependencies
from inbox_http.encoding import json_response
from inbox_http.errors import ApiError, SentenceError
from inbox_http.guard import accepts, current_caller, guarded, responds
from inbox_http.json_body import read_json_body
from inbox_http.outcome_answers import answer, run_route

blueprint = Blueprint("broadcasts", __name__)



@blueprint.post("/api/bulk-send")
@responds(views.BroadcastView, 202)
@guarded(tier=ApiTier.CORE, use_case=broadcasts.START, sending=True, dashboard=True)
@takes(creation.BulkSend)
@answers(422)
async def bulk_send():
    """Send a template to many recipients (phones and/or a contact filter), now or at scheduled_at; pending
    approval when the caller lacks campaign_approve. `Idempotency-Key` makes a retry answer the same broadcast."""
    caller = current_caller()
    if (refused := sending_refusal(caller)) is not None:
        return answer(refused)
    try:
        key = idempotency.parse_key(request.headers.get(idempotency.HEADER))
    except SentenceError as err:
        raise ApiError(400, "invalid_idempotency_key", err.sentence) from None
    raw = await request.get_data()
    body = await read_json_body(creation.BulkSend)
    started = await run(dependencies().use_case_deps, caller, broadcasts.START, {
        "order": body, "idempotency_key": key,
        "request_hash": idempotency.request_hash(request.method, request.path, raw) if key is not None else None})
    if isinstance(started, Refused):
        return answer(started)
    headers = {idempotency.REPLAYED_HEADER: "true"} if started.data.replayed else {}
    return json_response(started.data.view, 202, headers)


@blueprint.get("/api/broadcasts")
@responds(views.BroadcastPage)
@guarded(tier=ApiTier.CORE, use_case=broadcasts.LIST, dashboard=True)
@accepts(BROADCASTS)
async def list_broadcasts():
    """The workspace's broadcasts, newest first (optionally of one status), keyset-paged."""
    state = dependencies()
    return json_response(await views.list_broadcasts(state.db, current_caller().workspace_id, request.args))


@blueprint.get("/api/broadcasts/<id:broadcast_id>")
@responds(views.BroadcastView)
@guarded(tier=ApiTier.CORE, use_case=broadcasts.SHOW, dashboard=True)
@answers(404)
async def read_broadcast(broadcast_id: int):
    """One broadcast: status, approval, and progress (queued, in flight, sent, delivered, read, failed, skipped,
    cancelled) with its current send rate."""
    return await run_route(broadcasts.SHOW, broadcast_id=broadcast_id)


@blueprint.get("/api/broadcasts/<id:broadcast_id>/recipients")
@responds(views.RecipientPage)
@guarded(tier=ApiTier.CORE, use_case=broadcasts.SHOW, dashboard=True)
@accepts(BROADCAST_RECIPIENTS)
@answers(404)
async def read_recipients(broadcast_id: int):
    """The broadcast's recipients in send order with their outcome and the platform's error, if any."""
    state = dependencies()
    if await broadcasts.find(state.use_case_deps, current_caller(), broadcast_id) is None:
        return answer(broadcasts.NOT_FOUND)
    return json_response(await views.list_recipients(state.db, broadcast_id, request.args))


@blueprint.post("/api/broadcasts/<id:broadcast_id>/approve")
@responds(views.BroadcastView)
@guarded(tier=ApiTier.CORE, use_case=broadcasts.APPROVE, dashboard=True)
@answers(404, 409)
async def approve_broadcast(broadcast_id: int):
    """Approve a broadcast pending approval: it sends now, or at its scheduled time."""
    return await run_route(broadcasts.APPROVE, broadcast_id=broadcast_id)


@blueprint.post("/api/broadcasts/<id:broadcast_id>/reject")
@responds(views.BroadcastView)
@guarded(tier=ApiTier.CORE, use_case=broadcasts.REJECT, dashboard=True)
@takes(body_of(broadcasts.REJECT, path=("broadcast_id",)), optional=True)
@answers(404, 409)
async def reject_broadcast(broadcast_id: int):
    """Reject a broadcast pending approval (optional reason); nothing is sent."""
    return await run_route(broadcasts.REJECT, body=True, optional=True, broadcast_id=broadcast_id)


@blueprint.post("/api/broadcasts/<id:broadcast_id>/cancel")
@responds(views.BroadcastView)
@guarded(tier=ApiTier.CORE, use_case=broadcasts.CANCEL, dashboard=True)
@takes(body_of(broadcasts.CANCEL, path=("broadcast_id",)), optional=True)
@answers(404, 409)
async def cancel_broadcast(broadcast_id: int):
    """Cancel a broadcast not finished yet: recipients not sent yet are never sent; sends in flight finish."""
    return await run_route(broadcasts.CANCEL, body=True, optional=True, broadcast_id=broadcast_id)


@blueprint.post("/api/broadcasts/<id:broadcast_id>/pause")
@responds(views.BroadcastView)
@guarded(tier=ApiTier.CORE, use_case=broadcasts.PAUSE, dashboard=True)
@answers(404, 409)
async def pause_broadcast(broadcast_id: int):
    """Pause a sending broadcast; sends in flight finish."""
    return await run_route(broadcasts.PAUSE, broadcast_id=broadcast_id)


@blueprint.post("/api/broadcasts/<id:broadcast_id>/resume")
@responds(views.BroadcastView)
@guarded(tier=ApiTier.CORE, use_case=broadcasts.RESUME, dashboard=True)
@answers(404, 409)
async def resume_broadcast(broadcast_id: int):
    """Resume a paused broadcast (paused by a member, or for want of credits once topped up)."""
    return await run_route(broadcasts.RESUME, broadcast_id=broadcast_id)
