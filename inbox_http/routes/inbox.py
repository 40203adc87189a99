"""Team actions on a chat, `/api/inbox/conversations/{phone}/...` (full API, scope inbox).

The spec says these exist without giving paths; these are ours. Each binds one of the chat use cases
(`use_cases/chats.py`, where their permissions, field rules and refusals are declared) to a path, and answers with
the chat as it now is (the ConversationDetail; a reply also with its message id, a note with the note). The acting
member is the key's creator. An action the chat's state does not allow is 409 invalid_transition with the current
state, and changes nothing.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.domain.plans import ApiTier
from inbox_actors.reporting.conversation_detail import ConversationDetail
from inbox_actors.use_cases import chat_organising, chats
from inbox_actors.use_cases.chats import ReplySent
from inbox_actors.use_cases.mentions import NoteMessage
from inbox_http.contract import answers, body_of, takes
from inbox_http.errors import ApiError, SentenceError
from inbox_http.guard import guarded, responds
from inbox_http.outcome_answers import run_route
from inbox_http.routes import inbox_lists
from inbox_http.send_body import read_send_body, send_body_schema

blueprint = Blueprint("inbox", __name__, url_prefix="/api/inbox/conversations")
# The list's saved views and bulk actions, under the same prefix.
blueprint.register_blueprint(inbox_lists.blueprint)


@blueprint.get("/<phone>")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, use_case=chats.SHOW)
@answers(404)
async def show(phone: str):
    """One chat: state, assignment, waiting and SLA, unread, counts, last message, contact."""
    return await run_route(chats.SHOW, phone=phone)


@blueprint.post("/<phone>/claim")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, use_case=chats.CLAIM)
@answers(404, 409)
async def claim(phone: str):
    """Claim the chat for the acting member (HUMAN_ACTIVE)."""
    return await run_route(chats.CLAIM, phone=phone)


@blueprint.post("/<phone>/release")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, use_case=chats.RELEASE)
@takes(body_of(chats.RELEASE), optional=True)
@answers(404, 409)
async def release(phone: str):
    """Give a claimed chat back to the queue (HANDOFF_PENDING); optional {reason}."""
    return await run_route(chats.RELEASE, body=True, optional=True, phone=phone)


@blueprint.post("/<phone>/transfer")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, use_case=chats.TRANSFER)
@takes(body_of(chats.TRANSFER))
@answers(404, 409)
async def transfer(phone: str):
    """Hand a claimed chat to another active member: {to_user_id, reason?}."""
    return await run_route(chats.TRANSFER, body=True, phone=phone)


@blueprint.post("/<phone>/resolve")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, use_case=chats.RESOLVE)
@takes(body_of(chats.RESOLVE), optional=True)
@answers(404, 409)
async def resolve(phone: str):
    """Close the chat's hand-off: back to the bot (AI_ONLY); optional {reason}."""
    return await run_route(chats.RESOLVE, body=True, optional=True, phone=phone)


@blueprint.post("/<phone>/open")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, use_case=chats.OPEN)
@answers(404, 409)
async def open_chat(phone: str):
    """Record that the acting member opened the chat (a view); its unread messages count as read."""
    return await run_route(chats.OPEN, phone=phone)


@blueprint.post("/<phone>/read")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, use_case=chats.MARK_READ)
@answers(404, 409)
async def mark_read(phone: str):
    """Mark the chat read without recording a view (a key is not a person looking)."""
    return await run_route(chats.MARK_READ, phone=phone)


@blueprint.post("/<phone>/notes")
@responds(NoteMessage, 201)
@guarded(tier=ApiTier.FULL, use_case=chat_organising.ADD_NOTE)
# The body as the contract has it: a member's own key for a composed note is the agent inbox's composer's argument
# (use_cases/keyed_sends.py), not this route's.
@takes(body_of(chat_organising.ADD_NOTE, path=("phone", "idempotency_key")))
@answers(404)
async def add_note(phone: str):
    """Write an internal note in the chat's thread ({text}); never sent to the customer. `@Name` or
    `@[Name](member:ID)` in the text mentions an active member, who is told. Answers the note as the thread shows it
    (type `note`, sender_type `agent`, status `internal`) with the members it mentions (`mentions`)."""
    return await run_route(chat_organising.ADD_NOTE, 201, body=True, phone=phone)


@blueprint.post("/<phone>/labels")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, use_case=chat_organising.ADD_LABEL)
@takes(body_of(chat_organising.ADD_LABEL))
@answers(404)
async def add_label(phone: str):
    """Put a label of the workspace's set on the chat: {label} (its name; 404 label_not_found otherwise)."""
    return await run_route(chat_organising.ADD_LABEL, body=True, phone=phone)


@blueprint.delete("/<phone>/labels/<name>")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, use_case=chat_organising.REMOVE_LABEL)
@answers(404)
async def remove_label(phone: str, name: str):
    """Take a label off the chat (one it does not have: nothing changes)."""
    return await run_route(chat_organising.REMOVE_LABEL, phone=phone, label=name)


@blueprint.post("/<phone>/snooze")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, use_case=chat_organising.SNOOZE)
@takes(body_of(chat_organising.SNOOZE), optional=True)
@answers(404)
async def snooze(phone: str):
    """Snooze the chat: {until?} (ISO 8601 with a zone; left out: until the customer writes). It leaves the open
    views (`snoozed=false` lists, the hand-off queue) and comes back by itself then."""
    return await run_route(chat_organising.SNOOZE, body=True, optional=True, phone=phone)


@blueprint.post("/<phone>/unsnooze")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, use_case=chat_organising.UNSNOOZE)
@answers(404)
async def unsnooze(phone: str):
    """End the chat's snooze now."""
    return await run_route(chat_organising.UNSNOOZE, phone=phone)


@blueprint.post("/<phone>/team")
@responds(ConversationDetail)
@guarded(tier=ApiTier.FULL, use_case=chat_organising.ROUTE_TO_TEAM)
@takes(body_of(chat_organising.ROUTE_TO_TEAM))
@answers(404)
async def route_to_team(phone: str):
    """Put the chat in a team's queue: {team_id (null: the workspace's own queue), reason?}. A chat a member holds
    is released to that queue; automatic assignment, when on, gives it to one of the team's members."""
    return await run_route(chat_organising.ROUTE_TO_TEAM, body=True, phone=phone)


@blueprint.post("/<phone>/reply")
@responds(ReplySent)
@guarded(tier=ApiTier.FULL, use_case=chats.REPLY)
@takes(send_body_schema(needs_recipient=False))
@answers(403, 404, 409, 502)
async def reply(phone: str):
    """Reply as the acting member (sender_type agent); replying claims an unclaimed chat.
    Body as send-message without `to`."""
    try:
        _, message = read_send_body(await request.get_data(), needs_recipient=False)
    except SentenceError as err:
        raise ApiError(400, "invalid_body", err.sentence) from None
    return await run_route(chats.REPLY, phone=phone, message=message)
