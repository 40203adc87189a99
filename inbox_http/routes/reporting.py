"""The Reporting API, `/api/reporting/v1`: who the key is, and the workspace-wide reads.

Each read binds a declared use case (`inbox_actors/use_cases/reports.py`, where the permissions are stated: the
spec's, chat content needs inbox or contacts, team accountability data inbox, team_management or analytics, each
with its :read variant); `inbox_actors.reporting` reads and shapes, and a malformed parameter is answered 400 with
its stable code.
"""

from __future__ import annotations

import msgspec
from quart import Blueprint, request

from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging import parameter_catalog as catalog
from inbox_actors.reporting import conversation_lists, outbound_messages, replies
from inbox_actors.use_cases import reports
from inbox_http.encoding import json_response
from inbox_http.guard import accepts, current_credential, guarded, responds
from inbox_http.outcome_answers import run_route

blueprint = Blueprint("reporting", __name__, url_prefix="/api/reporting/v1")


class WhoamiKey(msgspec.Struct, frozen=True):
    id: int
    scopes: list[str]
    read_only: bool


class Whoami(msgspec.Struct, frozen=True):
    workspace_id: int
    auth: str
    key: WhoamiKey
    api_access: bool
    api_tier: str
    reporting_api: str


@blueprint.get("/whoami")
@responds(Whoami)
@guarded(tier=ApiTier.CORE)
async def whoami():
    """Who the key is: its workspace, scopes and API tier. Works on Growth and Scale; any valid key."""
    credential = current_credential()
    tier = credential.plan.api_tier
    return json_response(Whoami(
        workspace_id=credential.workspace_id,
        auth="api_key",
        key=WhoamiKey(id=credential.key_id, scopes=list(credential.scopes), read_only=credential.read_only),
        api_access=tier is not ApiTier.NONE,
        api_tier=tier.value,
        reporting_api="v1",
    ))


@blueprint.get("/conversations")
@responds(conversation_lists.ConversationPage)
@guarded(tier=ApiTier.FULL, use_case=reports.CONVERSATIONS)
@accepts(catalog.CONVERSATIONS)
async def conversations():
    """Chats with activity in the window: unread, needs_reply, state, assigned_to, sla_breached, q, since/to,
    sort (last_activity | waiting_longest), limit, cursor."""
    return await run_route(reports.CONVERSATIONS, query=request.args.to_dict())


@blueprint.get("/conversations/unread-summary")
@responds(conversation_lists.UnreadSummary)
@guarded(tier=ApiTier.FULL, use_case=reports.UNREAD_SUMMARY)
@accepts(catalog.WINDOW_ONLY)
async def unread_summary():
    """Unread and waiting chats in the window, per assignee and unassigned (aggregates only)."""
    return await run_route(reports.UNREAD_SUMMARY, query=request.args.to_dict())


@blueprint.get("/conversations/unanswered")
@responds(conversation_lists.UnansweredPage)
@guarded(tier=ApiTier.FULL, use_case=reports.UNANSWERED)
@accepts(catalog.UNANSWERED)
async def unanswered():
    """Chats whose customer has waited longer than older_than (default 30m), longest wait first."""
    return await run_route(reports.UNANSWERED, query=request.args.to_dict())


@blueprint.get("/replies")
@responds(replies.ReplyPage)
@guarded(tier=ApiTier.FULL, use_case=reports.REPLIES)
@accepts(catalog.REPLIES)
async def workspace_replies():
    """Outbound messages in the window (default 7 days), newest first: agent_id, sender_type, phone filters."""
    return await run_route(reports.REPLIES, query=request.args.to_dict())


@blueprint.get("/messages")
@responds(outbound_messages.OutboundPage)
@guarded(tier=ApiTier.FULL, use_case=reports.MESSAGES_IN_STATUS)
@accepts(catalog.OUTBOUND_MESSAGES)
async def messages_in_status():
    """Outbound messages currently in a status (sent, delivered, read, failed), newest first; failed rows carry
    the error recorded at send time."""
    return await run_route(reports.MESSAGES_IN_STATUS, query=request.args.to_dict())
