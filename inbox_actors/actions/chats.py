"""A chat's use cases: sending as the API does, replying as a member, and the team's actions (claim, release,
transfer, resolve, open, mark read). Each asks the chat's conversation actor, which owns the chat's state and
decides; this module states the rules around it once, for every front door:

- a send or a reply goes out only while the workspace's cloud API is switched on;
- a caller limited to assigned chats sees and acts on only the chats assigned to its member (any other is "no
  such chat"), and may claim only a chat assigned to it already;
- a reason is at most MAX_REASON characters, without control characters but line breaks;
- after a release, transfer or resolve the caller still sees the chat it acted on, even when the action took the
  chat out of an assigned-only caller's view;
- a note is 1 to MAX_TEXT characters of text, without control characters but line breaks and tabs, and is never
  sent to the customer.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from inbox_actors.actions.caller import Caller
from inbox_actors.actions.deps import ActionDeps
from inbox_actors.actions.outcomes import Reason, Refused, reason_of_status
from inbox_actors.conversations import conversation
from inbox_actors.conversations.conversation_protocol import KeyReservation, SendOutcome
from inbox_actors.conversations.send_answers import SendRefusal, SendVerdict, send_answer
from inbox_actors.domain.phones import InvalidPhone, normalise_phone, phone_or_none
from inbox_actors.domain.text import has_control_characters
from inbox_actors.platform.payloads import MAX_TEXT, SendRequest
from inbox_actors.reporting.conversation_detail import ConversationDetail, find_detail
from inbox_actors.reporting.thread import Message, one_message

NO_SUCH_CHAT = "No such chat in this workspace."
MAX_REASON = 500

CLOUD_API_OFF = Refused(Reason.REFUSED, "The messaging cloud API is switched off for this workspace.",
                        status=403, code="feature_disabled_for_org")


class ReplySent(msgspec.Struct, frozen=True):
    """A member's reply the platform accepted, with the chat as it now is."""

    messageId: str
    channel: str
    conversation: ConversationDetail


def sending_refusal(caller: Caller) -> Refused | None:
    """Why nothing may be sent for this caller's workspace now (None: it may send)."""
    return None if caller.cloud_api_enabled else CLOUD_API_OFF


def reason_refusal(reason: str | None) -> Refused | None:
    if reason is not None and len(reason) > MAX_REASON:
        return Refused(Reason.INVALID, f"reason must be at most {MAX_REASON} characters.", 400, "invalid_reason")
    if reason is not None and has_control_characters(reason):
        return Refused(Reason.INVALID, "reason may not contain control characters.", 400, "invalid_reason")
    return None


async def chat(deps: ActionDeps, caller: Caller, raw_phone: str) -> ConversationDetail | Refused:
    """The chat, as this caller may see it."""
    phone = phone_or_none(raw_phone)
    found = None if phone is None else await find_detail(deps.db, caller.workspace_id, phone, deps.clock.now(),
                                                         caller.only_assigned_to)
    return no_such_chat() if found is None else found


async def send(deps: ActionDeps, caller: Caller, raw_phone: str, request: SendRequest,
               reservation: KeyReservation | None = None) -> SendVerdict | SendRefusal | Refused:
    """A send as the API makes it (sender_type system, labelled with the caller's label): the spec's verdict
    (accepted, or failed at the platform or the window), a refusal before anything went out, or `Refused` when
    the caller may not send at all."""
    if (refused := sending_refusal(caller)) is not None:
        return refused
    try:
        phone = normalise_phone(raw_phone)
    except InvalidPhone as err:
        return Refused(Reason.INVALID, f"Invalid phone number: {err}", 400, "invalid_phone")
    order = conversation.Send(request=request, sender_type="system", author=caller.author,
                              sender_label=caller.label, only_assigned_to=caller.only_assigned_to,
                              reservation=reservation)
    return send_answer(await conversation.ask_conversation(deps.actors, caller.workspace_id, phone, order))


async def reply(deps: ActionDeps, caller: Caller, raw_phone: str, request: SendRequest) -> ReplySent | Refused:
    """The caller's member replies in the chat (sender_type agent); replying claims an unclaimed chat."""
    if (refused := sending_refusal(caller)) is not None:
        return refused
    phone = phone_or_none(raw_phone)
    if phone is None:
        return no_such_chat()
    outcome = await conversation.ask_conversation(deps.actors, caller.workspace_id, phone, conversation.Send(
        request=request, sender_type="agent", author=caller.author, actor_id=caller.member_id,
        only_assigned_to=caller.only_assigned_to))
    if (refused := _refusal(outcome)) is not None:
        return refused
    assert isinstance(outcome, SendOutcome)
    if outcome.refused_status is not None:
        return Refused(reason_of_status(outcome.refused_status), outcome.refused_sentence or "The message was not "
                       "sent.", outcome.refused_status, "not_sent")
    if outcome.failure is not None:
        failure = outcome.failure
        return Refused(Reason.REFUSED, failure.message, 502, "send_failed",
                       data={"errorCode": failure.code, "errorTitle": failure.title,
                             "errorSubcode": failure.subcode, "errorDetails": failure.details})
    detail = await find_detail(deps.db, caller.workspace_id, phone, deps.clock.now(), None)
    if detail is None:
        return no_such_chat()
    return ReplySent(messageId=outcome.platform_message_id or "", channel=outcome.channel, conversation=detail)


async def claim(deps: ActionDeps, caller: Caller, raw_phone: str) -> ConversationDetail | Refused:
    return await _act(deps, caller, raw_phone, conversation.Claim(
        member_id=caller.member_id, author=caller.author, only_assigned_to=caller.only_assigned_to))


async def release(deps: ActionDeps, caller: Caller, raw_phone: str,
                  reason: str | None = None) -> ConversationDetail | Refused:
    return reason_refusal(reason) or await _act(deps, caller, raw_phone, conversation.Release(
        by_member=caller.member_id, author=caller.author, reason=reason, only_assigned_to=caller.only_assigned_to))


async def transfer(deps: ActionDeps, caller: Caller, raw_phone: str, to_member: int,
                   reason: str | None = None) -> ConversationDetail | Refused:
    return reason_refusal(reason) or await _act(deps, caller, raw_phone, conversation.Transfer(
        to_member=to_member, by_member=caller.member_id, author=caller.author, reason=reason,
        only_assigned_to=caller.only_assigned_to))


async def resolve(deps: ActionDeps, caller: Caller, raw_phone: str,
                  reason: str | None = None) -> ConversationDetail | Refused:
    return reason_refusal(reason) or await _act(deps, caller, raw_phone, conversation.Resolve(
        by_member=caller.member_id, author=caller.author, reason=reason, only_assigned_to=caller.only_assigned_to))


async def add_note(deps: ActionDeps, caller: Caller, raw_phone: str, text: str) -> Message | Refused:
    """The caller's member writes an internal note in the chat's thread (type `note`; never sent)."""
    text = text.strip()
    if not 1 <= len(text) <= MAX_TEXT:
        return Refused(Reason.INVALID, f"text must be 1 to {MAX_TEXT:,} characters.", 400, "invalid_text")
    if has_control_characters(text):
        return Refused(Reason.INVALID, "text may not contain control characters.", 400, "invalid_text")
    phone = phone_or_none(raw_phone)
    if phone is None:
        return no_such_chat()
    reply = await conversation.ask_conversation(deps.actors, caller.workspace_id, phone, conversation.AddNote(
        member_id=caller.member_id, author=caller.author, text=text, only_assigned_to=caller.only_assigned_to))
    if (refused := _refusal(reply)) is not None:
        return refused
    assert isinstance(reply, conversation.NoteAdded)
    note = await one_message(deps.db, caller.workspace_id, phone, reply.message_id)
    return no_such_chat() if note is None else note


async def label(deps: ActionDeps, caller: Caller, raw_phone: str, name: str,
                add: bool) -> ConversationDetail | Refused:
    """Put a label of the workspace's set on the chat, or take one off (taking off one it lacks changes
    nothing)."""
    return await _act(deps, caller, raw_phone, conversation.Label(
        name=name.strip(), add=add, by_member=caller.member_id, author=caller.author,
        only_assigned_to=caller.only_assigned_to))


async def snooze(deps: ActionDeps, caller: Caller, raw_phone: str,
                 until: datetime | None) -> ConversationDetail | Refused:
    """Snooze the chat until `until` (None: until the customer writes); it leaves the open views meanwhile."""
    return await _act(deps, caller, raw_phone, conversation.Snooze(
        until=until, by_member=caller.member_id, author=caller.author, only_assigned_to=caller.only_assigned_to))


async def unsnooze(deps: ActionDeps, caller: Caller, raw_phone: str) -> ConversationDetail | Refused:
    return await _act(deps, caller, raw_phone, conversation.Unsnooze(
        by_member=caller.member_id, author=caller.author, only_assigned_to=caller.only_assigned_to))


async def open_chat(deps: ActionDeps, caller: Caller, raw_phone: str) -> ConversationDetail | Refused:
    """A person opened the chat: a view is recorded and its unread messages count as read."""
    return await _act(deps, caller, raw_phone, conversation.Open(
        member_id=caller.member_id, author=caller.author, only_assigned_to=caller.only_assigned_to))


async def mark_read(deps: ActionDeps, caller: Caller, raw_phone: str) -> ConversationDetail | Refused:
    """Unread cleared, no view recorded: a key marking read is not a person looking."""
    return await _act(deps, caller, raw_phone, conversation.MarkRead(
        author=caller.author, only_assigned_to=caller.only_assigned_to))


async def _act(deps: ActionDeps, caller: Caller, raw_phone: str, message: object) -> ConversationDetail | Refused:
    phone = phone_or_none(raw_phone)
    if phone is None:
        return no_such_chat()
    reply = await conversation.ask_conversation(deps.actors, caller.workspace_id, phone, message)
    if (refused := _refusal(reply)) is not None:
        return refused
    detail = await find_detail(deps.db, caller.workspace_id, phone, deps.clock.now(), None)
    return no_such_chat() if detail is None else detail


def _refusal(reply: object) -> Refused | None:
    if isinstance(reply, conversation.NotVisible):
        return no_such_chat()
    if isinstance(reply, conversation.Refused):
        return Refused(reason_of_status(reply.status), reply.message, reply.status, reply.code, state=reply.state)
    return None


def no_such_chat() -> Refused:
    return Refused(Reason.NOT_FOUND, NO_SUCH_CHAT, 404, "not_found")
