"""Team actions on a chat, `/api/inbox/conversations/{phone}/...` (full API, scope inbox).

The spec says these exist without giving paths; these are ours. Each is a message to the chat's
conversation actor and answers with the chat as it now is (the ConversationDetail). The acting member is
the key's creator (or the session's member). A key limited to assigned chats sees and acts on only chats
assigned to its creator; any other chat is 404 not_found, as if it did not exist. An action the chat's
state does not allow is 409 invalid_transition with the current state, and changes nothing.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from quart import Blueprint, request

from inbox_actors.conversations import conversation
from inbox_actors.conversations.conversation import SendOutcome
from inbox_actors.domain.access import assigned_only_member
from inbox_actors.domain.phones import phone_or_none
from inbox_actors.domain.plans import ApiTier
from inbox_actors.domain.text import has_control_characters
from inbox_actors.reporting import conversation_detail as conversation_views
from inbox_http.contract import NO_CONTROL_EXCEPT_LINES, answers, rule, takes
from inbox_http.converters import BIGINT_MAX
from inbox_http.encoding import json_response
from inbox_http.errors import ApiError, SentenceError
from inbox_http.guard import current_credential, guarded, responds
from inbox_http.json_body import read_json_body
from inbox_http.send_body import read_send_body, send_body_schema
from inbox_http.services import services

blueprint = Blueprint("inbox", __name__, url_prefix="/api/inbox/conversations")

MAX_REASON = 500


# Checked by `_reason` after decoding (400 invalid_reason).
_Reason = Annotated[str, rule(max_length=MAX_REASON, pattern=NO_CONTROL_EXCEPT_LINES)]


class ReasonBody(msgspec.Struct, forbid_unknown_fields=True):
    reason: _Reason | None = None


class TransferBody(msgspec.Struct, forbid_unknown_fields=True):
    # An active member of the workspace; any other id is 400 invalid_member.
    to_user_id: Annotated[int, msgspec.Meta(ge=1, le=BIGINT_MAX)]
    reason: _Reason | None = None


class ReplySent(msgspec.Struct, frozen=True):
    messageId: str
    channel: str
    conversation: conversation_views.ConversationDetail


@blueprint.get("/<phone>")
@responds(conversation_views.ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=("inbox",))
@answers(404)
async def show(phone: str):
    """One chat: state, assignment, waiting and SLA, unread, counts, last message, contact."""
    return json_response(await _detail(_phone(phone)))


@blueprint.post("/<phone>/claim")
@responds(conversation_views.ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=("inbox",))
@answers(404, 409)
async def claim(phone: str):
    """Claim the chat for the acting member (HUMAN_ACTIVE)."""
    credential = current_credential()
    return await _act(phone, conversation.Claim(member_id=credential.member_id, author=_author(),
                                                only_assigned_to=None))


@blueprint.post("/<phone>/release")
@responds(conversation_views.ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=("inbox",))
@takes(ReasonBody, optional=True)
@answers(404, 409)
async def release(phone: str):
    """Give a claimed chat back to the queue (HANDOFF_PENDING); optional {reason}."""
    body = await read_json_body(ReasonBody, empty_ok=True)
    credential = current_credential()
    return await _act(phone, conversation.Release(by_member=credential.member_id, author=_author(),
                                                  reason=_reason(body.reason),
                                                  only_assigned_to=assigned_only_member(credential)))


@blueprint.post("/<phone>/transfer")
@responds(conversation_views.ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=("inbox",))
@takes(TransferBody)
@answers(404, 409)
async def transfer(phone: str):
    """Hand a claimed chat to another active member: {to_user_id, reason?}."""
    body = await read_json_body(TransferBody)
    credential = current_credential()
    return await _act(phone, conversation.Transfer(to_member=body.to_user_id, by_member=credential.member_id,
                                                   author=_author(), reason=_reason(body.reason),
                                                   only_assigned_to=assigned_only_member(credential)))


@blueprint.post("/<phone>/resolve")
@responds(conversation_views.ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=("inbox",))
@takes(ReasonBody, optional=True)
@answers(404, 409)
async def resolve(phone: str):
    """Close the chat's hand-off: back to the bot (AI_ONLY); optional {reason}."""
    body = await read_json_body(ReasonBody, empty_ok=True)
    credential = current_credential()
    return await _act(phone, conversation.Resolve(by_member=credential.member_id, author=_author(),
                                                  reason=_reason(body.reason),
                                                  only_assigned_to=assigned_only_member(credential)))


@blueprint.post("/<phone>/open")
@responds(conversation_views.ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=("inbox",))
@answers(404, 409)
async def open_chat(phone: str):
    """Record that the acting member opened the chat (a view); its unread messages count as read."""
    credential = current_credential()
    return await _act(phone, conversation.Open(member_id=credential.member_id, author=_author(),
                                               only_assigned_to=assigned_only_member(credential)))


@blueprint.post("/<phone>/read")
@responds(conversation_views.ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=("inbox",))
@answers(404, 409)
async def mark_read(phone: str):
    """Mark the chat read without recording a view (a key is not a person looking)."""
    credential = current_credential()
    return await _act(phone, conversation.MarkRead(author=_author(),
                                                   only_assigned_to=assigned_only_member(credential)))


@blueprint.post("/<phone>/reply")
@responds(ReplySent)
@guarded(tier=ApiTier.FULL, scopes=("inbox",))
@takes(send_body_schema(needs_recipient=False))
@answers(403, 404, 409, 502)
async def reply(phone: str):
    """Reply as the acting member (sender_type agent); replying claims an unclaimed chat.
    Body as send-message without `to`."""
    chat_phone = _phone(phone)
    credential = current_credential()
    try:
        _, send_request = read_send_body(await request.get_data(), needs_recipient=False)
    except SentenceError as err:
        raise ApiError(400, "invalid_body", err.sentence) from None
    state = services()
    outcome = await conversation.ask_conversation(state.actors, credential.workspace_id, chat_phone,
                                                   conversation.Send(
        request=send_request, sender_type="agent", author=_author(), actor_id=credential.member_id,
        sender_label=None, only_assigned_to=assigned_only_member(credential)))
    _raise_refusal(outcome)
    assert isinstance(outcome, SendOutcome)
    if outcome.refused_status is not None:
        raise ApiError(outcome.refused_status, "not_sent", outcome.refused_sentence or "The message was not sent.")
    if outcome.failure is not None:
        failure = outcome.failure
        raise ApiError(502, "send_failed", failure.message, errorCode=failure.code, errorTitle=failure.title,
                       errorSubcode=failure.subcode, errorDetails=failure.details)
    return json_response(ReplySent(messageId=outcome.platform_message_id or "", channel=outcome.channel,
                                   conversation=await _detail(chat_phone, visible_to_caller_only=False)))


async def _act(raw_phone: str, message: Any):
    phone = _phone(raw_phone)
    credential = current_credential()
    state = services()
    if isinstance(message, conversation.Claim) and assigned_only_member(credential) is not None:
        # A member limited to assigned chats may claim only what is assigned to them already.
        message = msgspec.structs.replace(message, only_assigned_to=credential.member_id)
    reply = await conversation.ask_conversation(state.actors, credential.workspace_id, phone, message)
    _raise_refusal(reply)
    # The caller may act on the chat, so it sees the outcome, even when a release, transfer or resolve has
    # just taken the chat out of an assigned-only member's view.
    return json_response(await _detail(phone, visible_to_caller_only=False))


def _raise_refusal(reply: object) -> None:
    if isinstance(reply, conversation.NotVisible):
        raise ApiError(404, "not_found", "No such chat in this workspace.")
    if isinstance(reply, conversation.Refused):
        extra = {"state": reply.state} if reply.state else {}
        raise ApiError(reply.status, reply.code, reply.message, **extra)


async def _detail(phone: str, *, visible_to_caller_only: bool = True) -> conversation_views.ConversationDetail:
    credential = current_credential()
    state = services()
    only = assigned_only_member(credential) if visible_to_caller_only else None
    detail = await conversation_views.find_detail(state.db, credential.workspace_id, phone, state.clock.now(), only)
    if detail is None:
        raise ApiError(404, "not_found", "No such chat in this workspace.")
    return detail


def _phone(raw: str) -> str:
    phone = phone_or_none(raw)
    if phone is None:
        raise ApiError(404, "not_found", "No such chat in this workspace.")
    return phone


def _author() -> str:
    return f"api_key:{current_credential().key_id}"


def _reason(reason: str | None) -> str | None:
    if reason is not None and len(reason) > MAX_REASON:
        raise ApiError(400, "invalid_reason", f"reason must be at most {MAX_REASON} characters.")
    if reason is not None and has_control_characters(reason):
        raise ApiError(400, "invalid_reason", "reason may not contain control characters.")
    return reason
