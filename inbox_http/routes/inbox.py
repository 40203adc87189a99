"""Team actions on a chat, `/api/inbox/conversations/{phone}/...` (full API, scope inbox).

The spec says these exist without giving paths; these are ours. Each is a chats action (`actions/chats.py`, where
the rules about assigned-only keys and reasons are) and answers with the chat as it now is (the
ConversationDetail; a reply also with its message id, a note with the note). The acting member is the key's
creator. An action the chat's state does not allow is 409 invalid_transition with the current state, and changes
nothing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from quart import Blueprint, request

from inbox_actors.actions import chats, permissions
from inbox_actors.actions.chats import MAX_REASON, ReplySent
from inbox_actors.domain.plans import ApiTier
from inbox_actors.platform.payloads import MAX_TEXT
from inbox_actors.reporting.conversation_detail import ConversationDetail
from inbox_actors.reporting.thread import Message
from inbox_actors.team.labels import MAX_NAME as MAX_LABEL_NAME
from inbox_http.contract import NO_CONTROL_EXCEPT_LINES, answers, rule, takes
from inbox_http.converters import BIGINT_MAX
from inbox_http.errors import ApiError, SentenceError
from inbox_http.guard import current_caller, guarded, responds
from inbox_http.json_body import read_json_body
from inbox_http.outcome_answers import answer
from inbox_http.send_body import read_send_body, send_body_schema
from inbox_http.services import services

blueprint = Blueprint("inbox", __name__, url_prefix="/api/inbox/conversations")

# Checked by the action after decoding (400 invalid_reason).
_Reason = Annotated[str, rule(max_length=MAX_REASON, pattern=NO_CONTROL_EXCEPT_LINES)]


class ReasonBody(msgspec.Struct, forbid_unknown_fields=True):
    reason: _Reason | None = None


class NoteBody(msgspec.Struct, forbid_unknown_fields=True):
    # Checked by the action after decoding (400 invalid_text).
    text: Annotated[str, rule(min_length=1, max_length=MAX_TEXT, pattern=NO_CONTROL_EXCEPT_LINES)]


class LabelBody(msgspec.Struct, forbid_unknown_fields=True):
    label: Annotated[str, rule(min_length=1, max_length=MAX_LABEL_NAME)]


class SnoozeBody(msgspec.Struct, forbid_unknown_fields=True):
    # A time with its zone, in the future; null or left out: until the customer writes.
    until: Annotated[datetime, msgspec.Meta(tz=True)] | None = None


class TransferBody(msgspec.Struct, forbid_unknown_fields=True):
    # An active member of the workspace; any other id is 400 invalid_member.
    to_user_id: Annotated[int, msgspec.Meta(ge=1, le=BIGINT_MAX)]
    reason: _Reason | None = None


@blueprint.get("/<phone>")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=permissions.CHAT_ACTIONS)
@answers(404)
async def show(phone: str):
    """One chat: state, assignment, waiting and SLA, unread, counts, last message, contact."""
    return answer(await chats.chat(services().action_deps, current_caller(), phone))


@blueprint.post("/<phone>/claim")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=permissions.CHAT_ACTIONS)
@answers(404, 409)
async def claim(phone: str):
    """Claim the chat for the acting member (HUMAN_ACTIVE)."""
    return answer(await chats.claim(services().action_deps, current_caller(), phone))


@blueprint.post("/<phone>/release")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=permissions.CHAT_ACTIONS)
@takes(ReasonBody, optional=True)
@answers(404, 409)
async def release(phone: str):
    """Give a claimed chat back to the queue (HANDOFF_PENDING); optional {reason}."""
    body = await read_json_body(ReasonBody, empty_ok=True)
    return answer(await chats.release(services().action_deps, current_caller(), phone, body.reason))


@blueprint.post("/<phone>/transfer")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=permissions.CHAT_ACTIONS)
@takes(TransferBody)
@answers(404, 409)
async def transfer(phone: str):
    """Hand a claimed chat to another active member: {to_user_id, reason?}."""
    body = await read_json_body(TransferBody)
    return answer(await chats.transfer(services().action_deps, current_caller(), phone, body.to_user_id,
                                        body.reason))


@blueprint.post("/<phone>/resolve")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=permissions.CHAT_ACTIONS)
@takes(ReasonBody, optional=True)
@answers(404, 409)
async def resolve(phone: str):
    """Close the chat's hand-off: back to the bot (AI_ONLY); optional {reason}."""
    body = await read_json_body(ReasonBody, empty_ok=True)
    return answer(await chats.resolve(services().action_deps, current_caller(), phone, body.reason))


@blueprint.post("/<phone>/open")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=permissions.CHAT_ACTIONS)
@answers(404, 409)
async def open_chat(phone: str):
    """Record that the acting member opened the chat (a view); its unread messages count as read."""
    return answer(await chats.open_chat(services().action_deps, current_caller(), phone))


@blueprint.post("/<phone>/read")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=permissions.CHAT_ACTIONS)
@answers(404, 409)
async def mark_read(phone: str):
    """Mark the chat read without recording a view (a key is not a person looking)."""
    return answer(await chats.mark_read(services().action_deps, current_caller(), phone))


@blueprint.post("/<phone>/notes")
@responds(Message, 201)
@guarded(tier=ApiTier.FULL, scopes=permissions.CHAT_ACTIONS)
@takes(NoteBody)
@answers(404)
async def add_note(phone: str):
    """Write an internal note in the chat's thread ({text}); never sent to the customer. Answers the note as the
    thread shows it (type `note`, sender_type `agent`, status `internal`)."""
    body = await read_json_body(NoteBody)
    return answer(await chats.add_note(services().action_deps, current_caller(), phone, body.text), 201)


@blueprint.post("/<phone>/labels")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=permissions.CHAT_ACTIONS)
@takes(LabelBody)
@answers(404)
async def add_label(phone: str):
    """Put a label of the workspace's set on the chat: {label} (its name; 404 label_not_found otherwise)."""
    body = await read_json_body(LabelBody)
    return answer(await chats.label(services().action_deps, current_caller(), phone, body.label, add=True))


@blueprint.delete("/<phone>/labels/<name>")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=permissions.CHAT_ACTIONS)
@answers(404)
async def remove_label(phone: str, name: str):
    """Take a label off the chat (one it does not have: nothing changes)."""
    return answer(await chats.label(services().action_deps, current_caller(), phone, name, add=False))


@blueprint.post("/<phone>/snooze")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=permissions.CHAT_ACTIONS)
@takes(SnoozeBody, optional=True)
@answers(404)
async def snooze(phone: str):
    """Snooze the chat: {until?} (ISO 8601 with a zone; left out: until the customer writes). It leaves the open
    views (`snoozed=false` lists, the hand-off queue) and comes back by itself then."""
    body = await read_json_body(SnoozeBody, empty_ok=True)
    return answer(await chats.snooze(services().action_deps, current_caller(), phone, body.until))


@blueprint.post("/<phone>/unsnooze")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, scopes=permissions.CHAT_ACTIONS)
@answers(404)
async def unsnooze(phone: str):
    """End the chat's snooze now."""
    return answer(await chats.unsnooze(services().action_deps, current_caller(), phone))


@blueprint.post("/<phone>/reply")
@responds(ReplySent)
@guarded(tier=ApiTier.FULL, scopes=permissions.CHAT_ACTIONS)
@takes(send_body_schema(needs_recipient=False))
@answers(403, 404, 409, 502)
async def reply(phone: str):
    """Reply as the acting member (sender_type agent); replying claims an unclaimed chat.
    Body as send-message without `to`."""
    try:
        _, send_request = read_send_body(await request.get_data(), needs_recipient=False)
    except SentenceError as err:
        raise ApiError(400, "invalid_body", err.sentence) from None
    return answer(await chats.reply(services().action_deps, current_caller(), phone, send_request))

