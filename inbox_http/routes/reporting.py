"""The Reporting API, `/api/reporting/v1`: who the key is, and the workspace-wide reads.

Handlers are thin: `inbox_actors.reporting` reads and shapes; a malformed parameter is raised there as
`InvalidParameter` and answered 400 with its stable code (see `inbox_http.errors`). The scopes are the spec's:
chat content needs inbox or contacts, team accountability data inbox, team_management or analytics (each with
its :read variant).
"""

from __future__ import annotations

import msgspec
from quart import Blueprint, request

from inbox_actors.actions import permissions
from inbox_actors.domain.auth_ladder import assigned_only_member
from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging import parameter_catalog as catalog
from inbox_actors.reporting import conversation_lists, outbound_messages, replies
from inbox_http.encoding import json_response
from inbox_http.guard import accepts, current_credential, guarded, responds
from inbox_http.services import services

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
@guarded(tier=ApiTier.FULL, scopes=permissions.CHAT_CONTENT)
@accepts(catalog.CONVERSATIONS)
async def conversations():
    """Chats with activity in the window: unread, needs_reply, state, assigned_to, sla_breached, q, since/to,
    sort (last_activity | waiting_longest), limit, cursor."""
    state, credential = services(), current_credential()
    return json_response(await conversation_lists.conversations(
        state.db, credential.workspace_id, request.args, state.clock.now(), assigned_only_member(credential)))


@blueprint.get("/conversations/unread-summary")
@responds(conversation_lists.UnreadSummary)
@guarded(tier=ApiTier.FULL, scopes=permissions.TEAM_DATA)
@accepts(catalog.WINDOW_ONLY)
async def unread_summary():
    """Unread and waiting chats in the window, per assignee and unassigned (aggregates only)."""
    state, credential = services(), current_credential()
    return json_response(await conversation_lists.unread_summary(
        state.db, credential.workspace_id, request.args, state.clock.now(), assigned_only_member(credential)))


@blueprint.get("/conversations/unanswered")
@responds(conversation_lists.UnansweredPage)
@guarded(tier=ApiTier.FULL, scopes=permissions.CHAT_CONTENT)
@accepts(catalog.UNANSWERED)
async def unanswered():
    """Chats whose customer has waited longer than older_than (default 30m), longest wait first."""
    state, credential = services(), current_credential()
    return json_response(await conversation_lists.unanswered(
        state.db, credential.workspace_id, request.args, state.clock.now(), assigned_only_member(credential)))


@blueprint.get("/replies")
@responds(replies.ReplyPage)
@guarded(tier=ApiTier.FULL, scopes=permissions.TEAM_DATA)
@accepts(catalog.REPLIES)
async def workspace_replies():
    """Outbound messages in the window (default 7 days), newest first: agent_id, sender_type, phone filters."""
    state, credential = services(), current_credential()
    return json_response(await replies.workspace_replies(
        state.db, credential.workspace_id, request.args, state.clock.now(), assigned_only_member(credential)))


@blueprint.get("/messages")
@responds(outbound_messages.OutboundPage)
@guarded(tier=ApiTier.FULL, scopes=permissions.MESSAGE_STATISTICS)
@accepts(catalog.OUTBOUND_MESSAGES)
async def messages_in_status():
    """Outbound messages currently in a status (sent, delivered, read, failed), newest first; failed rows carry
    the error recorded at send time."""
    state, credential = services(), current_credential()
    return json_response(await outbound_messages.outbound_messages(
        state.db, credential.workspace_id, request.args, state.clock.now(), assigned_only_member(credential)))
