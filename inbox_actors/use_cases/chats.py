"""A chat's use cases: sending as the API does, replying as a member, and the team's actions (claim, release,
transfer, resolve, open, mark read); notes, labels and snooze are `chat_organising.py`'s. Each asks the chat's
conversation actor, which owns the chat's state and decides; the rules around it are stated here once, for every
front door:

- a send or a reply goes out only while the workspace's cloud API is switched on;
- a caller limited to assigned chats sees and acts on only the chats its member may see (any other is "no such
  chat"): theirs, and those waiting in a team queue open to them (`chat_visibility.py`), which they may claim;
- a reason is at most MAX_REASON characters, without control characters but line breaks and tabs (its field type,
  `fields.Reason`);
- after a release, transfer or resolve the caller still sees the chat it acted on, even when the action took the
  chat out of an assigned-only caller's view;
- a member's reply or template may carry an idempotency_key of the member's (`fields.IdempotencyKey`): a
  retry with it sends nothing again and answers as the first did (`keyed_sends`);
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

import msgspec

from inbox_actors.conversations import conversation
from inbox_actors.conversations.conversation_protocol import KeyReservation, SendOutcome
from inbox_actors.conversations.send_answers import SendInDoubt, SendRefusal, SendVerdict, send_answer
from inbox_actors.domain.phones import InvalidPhone, normalise_phone, phone_or_none
from inbox_actors.platform.payloads import MAX_PARAMETERS, MAX_TEXT, SendRequest
from inbox_actors.reporting.conversation_detail import ConversationDetail, find_detail
from inbox_actors.use_cases import keyed_sends, permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import (
    MULTI_LINE,
    ONE_LINE,
    ChatPhone,
    IdempotencyKey,
    MemberId,
    Phone,
    Reason,
    ReplyText,
)
from inbox_actors.use_cases.outcomes import Done, Outcome, Refused, reason_of_status
from inbox_actors.use_cases.outcomes import Reason as Why
from inbox_actors.use_cases.use_case import Kind, UseCase, done, rule

NO_SUCH_CHAT = "No such chat in this workspace."

CLOUD_API_OFF = Refused(Why.REFUSED, "The messaging cloud API is switched off for this workspace.",
                        status=403, code="feature_disabled_for_org")


class ReplySent(msgspec.Struct, frozen=True):
    """A member's reply the platform accepted, with the chat as it now is."""

    messageId: str
    channel: str
    conversation: ConversationDetail


# -- arguments -----------------------------------------------------------------------------------------------


class OneChat(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: ChatPhone


class ChatWithReason(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: ChatPhone
    reason: Reason | None = None


class TransferChat(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: ChatPhone
    to_user_id: Annotated[MemberId, msgspec.Meta(description="The active team member (user id) who takes the chat "
                                                             "over.")]
    reason: Reason | None = None


class ReplyInChat(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: ChatPhone
    text: ReplyText
    idempotency_key: IdempotencyKey | None = None


TemplateName = Annotated[str, msgspec.Meta(min_length=1, max_length=512, pattern=ONE_LINE,
                                           description="The template's name (see list_templates).")]
Language = Annotated[str, msgspec.Meta(min_length=2, max_length=15, pattern=ONE_LINE,
                                       description="The template's language code.")]
Parameters = Annotated[list[Annotated[str, msgspec.Meta(
    max_length=1024, pattern=ONE_LINE,
    extra=rule("invalid_parameters", "Each value of a template is at most 1,024 characters, on one line."))]],
                       msgspec.Meta(max_length=MAX_PARAMETERS,
                                    description="The values of the template's {{1}}, {{2}}... in order; as many as "
                                                "its parameter_count.")]


class ReplyWithTemplate(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: ChatPhone
    template: TemplateName
    language: Language = "en"
    parameters: Parameters = []
    idempotency_key: IdempotencyKey | None = None


class SendText(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    to: Phone
    text: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_TEXT, pattern=MULTI_LINE,
                                      description="The message text (up to 4,096 characters). The platform "
                                                  "delivers free text only within 24 hours of the customer's "
                                                  "last message; otherwise send a template.")]


class SendTemplate(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    to: Phone
    template: TemplateName
    language: Language = "en"
    parameters: Parameters = []


class SendMessage(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A message of any kind, as the spec's send body gives it once read (`platform/payloads.SendRequest`), with
    the request's Idempotency-Key and its fingerprint (`idempotency_keys.request_hash`) when it has one."""

    to: str
    message: SendRequest
    idempotency_key: str | None = None
    request_hash: bytes | None = None


class ReplyMessage(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: str
    message: SendRequest


# -- handlers ------------------------------------------------------------------------------------------------


def sending_refusal(caller: Caller) -> Refused | None:
    """Why nothing may be sent for this caller's workspace now (None: it may send)."""
    return None if caller.cloud_api_enabled else CLOUD_API_OFF


async def chat(deps: UseCaseDeps, caller: Caller, raw_phone: str) -> ConversationDetail | Refused:
    """The chat, as this caller may see it."""
    phone = phone_or_none(raw_phone)
    found = None if phone is None else await find_detail(deps.db, caller.workspace_id, phone, deps.clock.now(),
                                                         caller.restricted_to)
    return no_such_chat() if found is None else found


async def _show(deps: UseCaseDeps, caller: Caller, a: OneChat) -> Outcome:
    return done(await chat(deps, caller, a.phone))


async def send(deps: UseCaseDeps, caller: Caller, raw_phone: str, request: SendRequest,
               reservation: KeyReservation | None = None) -> SendVerdict | SendRefusal | SendInDoubt | Refused:
    """A send as the API makes it (sender_type system, labelled with the caller's label): the spec's verdict
    (accepted, or failed at the platform or the window), a refusal before anything went out, `SendInDoubt` when it
    may have gone out and its outcome is not known, or `Refused` when the caller may not send at all."""
    if (refused := sending_refusal(caller)) is not None:
        return refused
    try:
        phone = normalise_phone(raw_phone)
    except InvalidPhone as err:
        return Refused(Why.INVALID, f"Invalid phone number: {err}", 400, "invalid_phone")
    order = conversation.Send(request=request, sender_type="system", author=caller.author,
                              sender_label=caller.label, restricted_to=caller.restricted_to,
                              reservation=reservation)
    return send_answer(await conversation.ask_conversation(deps.actors, caller.workspace_id, phone, order))


async def _send_message(deps: UseCaseDeps, caller: Caller, a: SendMessage) -> Outcome:
    """The spec's send, at most once per Idempotency-Key (`keyed_sends`): its verdict is `Done(SendVerdict)`
    (200, or 500 with the platform's reason, as the spec answers both), a key's earlier answer
    `Done(Replayed)`; a refusal before anything went out keeps the spec's sentence and status (`not_sent`)."""

    async def once(reservation: KeyReservation | None) -> Outcome:
        answer = await send(deps, caller, a.to, a.message, reservation)
        if isinstance(answer, SendInDoubt):
            return keyed_sends.in_doubt(keyed=reservation is not None)
        if isinstance(answer, SendRefusal):
            return Refused(reason_of_status(answer.status) if answer.status in (400, 404) else Why.REFUSED,
                           answer.sentence, answer.status, "not_sent")
        return done(answer)

    return await keyed_sends.send_once(deps, caller.workspace_id, a.idempotency_key, a.request_hash, once)


async def _send_text(deps: UseCaseDeps, caller: Caller, a: SendText) -> Outcome:
    if not a.text.strip():
        return Refused(Why.INVALID, "text must not be blank.", 400, "invalid_text")
    return await _sent(deps, caller, a.to, SendRequest(to="", type="text", text=a.text.strip()))


async def _send_template(deps: UseCaseDeps, caller: Caller, a: SendTemplate) -> Outcome:
    return await _sent(deps, caller, a.to, SendRequest(to="", type="template", template_name=a.template,
                                                       template_language=a.language,
                                                       template_parameters=tuple(a.parameters)))


async def _sent(deps: UseCaseDeps, caller: Caller, raw_phone: str, request: SendRequest) -> Outcome:
    """A send as a tool reports it: a refusal of any kind is `Refused`, the platform's included (502)."""
    answer = await send(deps, caller, raw_phone, request)
    if isinstance(answer, Refused):
        return answer
    if isinstance(answer, SendInDoubt):
        return keyed_sends.in_doubt(keyed=False)
    if isinstance(answer, SendRefusal):
        # A send refused 403 is the contact's consent, 402 the credits: refusals, not the caller's permissions.
        return Refused(reason_of_status(answer.status) if answer.status in (400, 404) else Why.REFUSED,
                       f"Not sent: {answer.sentence}.", answer.status, "not_sent")
    body = msgspec.to_builtins(answer.body)
    if answer.status != 200:
        return Refused(Why.REFUSED, body["error"], 502, "send_failed", data=body)
    return Done(body, summary=f"Sent; the platform's message id is {body['messageId']}.")


async def reply(deps: UseCaseDeps, caller: Caller, raw_phone: str, request: SendRequest,
                reservation: KeyReservation | None = None) -> ReplySent | Refused:
    """The caller's member replies in the chat (sender_type agent); replying claims an unclaimed chat. With an
    Idempotency-Key's `reservation`, the send is linked to the key (`keyed_reply`)."""
    if (refused := sending_refusal(caller)) is not None:
        return refused
    phone = phone_or_none(raw_phone)
    if phone is None:
        return no_such_chat()
    outcome = await conversation.ask_conversation(deps.actors, caller.workspace_id, phone, conversation.Send(
        request=request, sender_type="agent", author=caller.author, actor_id=caller.member_id,
        restricted_to=caller.restricted_to, reservation=reservation))
    if (refused := refusal_of(outcome)) is not None:
        return refused
    assert isinstance(outcome, SendOutcome)
    if outcome.in_doubt:
        return keyed_sends.in_doubt(keyed=reservation is not None)
    if outcome.refused_status is not None:
        return Refused(reason_of_status(outcome.refused_status), outcome.refused_sentence or "The message was not "
                       "sent.", outcome.refused_status, "not_sent")
    if outcome.failure is not None:
        failure = outcome.failure
        return Refused(Why.REFUSED, failure.message, 502, "send_failed",
                       data={"errorCode": failure.code, "errorTitle": failure.title,
                             "errorSubcode": failure.subcode, "errorDetails": failure.details})
    detail = await find_detail(deps.db, caller.workspace_id, phone, deps.clock.now(), None)
    if detail is None:
        return no_such_chat()
    return ReplySent(messageId=outcome.platform_message_id or "", channel=outcome.channel, conversation=detail)


async def keyed_reply(deps: UseCaseDeps, caller: Caller, use_case: str, raw_phone: str,
                      request: SendRequest | Callable[[], Awaitable[SendRequest | Refused]], key: str | None,
                      arguments: dict) -> Outcome:
    """A member's reply sent at most once per key of theirs (`keyed_sends`): a retry with the key answers as the
    first did (a `ReplySent`, or the platform's refusal), or says the first is still under way. `request` may be
    what makes the request once the key is held (an attachment's upload, `attachments.py`): a retry the key answers
    makes nothing, and its refusal sends nothing and frees the key."""

    async def once(reservation: KeyReservation | None) -> Outcome:
        made = request if isinstance(request, SendRequest) else await request()
        if isinstance(made, Refused):
            return made
        return done(await reply(deps, caller, raw_phone, made, reservation))

    outcome = await keyed_sends.send_once(deps, caller.workspace_id, keyed_sends.member_key(caller, use_case, key),
                                          keyed_sends.fingerprint(use_case, arguments), once)
    if isinstance(outcome, Done) and isinstance(outcome.data, keyed_sends.Replayed):
        return await _replayed_reply(deps, caller, raw_phone, outcome.data)
    return outcome


async def _replayed_reply(deps: UseCaseDeps, caller: Caller, raw_phone: str,
                          replayed: keyed_sends.Replayed) -> Outcome:
    """A key's stored answer (the spec's send body) as the reply answered it the first time."""
    body = replayed.body
    if replayed.status != 200:
        return Refused(Why.REFUSED, body.get("error") or "The message was not sent.", 502, "send_failed",
                       data={name: body.get(name) for name in ("errorCode", "errorTitle", "errorSubcode",
                                                               "errorDetails")})
    detail = await chat(deps, caller, raw_phone)
    if isinstance(detail, Refused):
        return detail
    return Done(ReplySent(messageId=body["messageId"], channel=body["channel"], conversation=detail))


async def _reply_message(deps: UseCaseDeps, caller: Caller, a: ReplyMessage) -> Outcome:
    return done(await reply(deps, caller, a.phone, a.message))


async def _reply_text(deps: UseCaseDeps, caller: Caller, a: ReplyInChat) -> Outcome:
    text = a.text.strip()
    if not text:
        return Refused(Why.INVALID, "text must not be blank.", 400, "invalid_text")
    return await keyed_reply(deps, caller, REPLY_TEXT.name, a.phone, SendRequest(to="", type="text", text=text),
                             a.idempotency_key, {"phone": a.phone, "text": text})


async def _reply_template(deps: UseCaseDeps, caller: Caller, a: ReplyWithTemplate) -> Outcome:
    return await keyed_reply(deps, caller, REPLY_TEMPLATE.name, a.phone, SendRequest(
        to="", type="template", template_name=a.template, template_language=a.language,
        template_parameters=tuple(a.parameters)), a.idempotency_key,
        {"phone": a.phone, "template": a.template, "language": a.language, "parameters": a.parameters})


async def _claim(deps: UseCaseDeps, caller: Caller, a: OneChat) -> Outcome:
    return await act_on_chat(deps, caller, a.phone, conversation.Claim(
        member_id=caller.member_id, author=caller.author, restricted_to=caller.restricted_to))


async def _release(deps: UseCaseDeps, caller: Caller, a: ChatWithReason) -> Outcome:
    return await act_on_chat(deps, caller, a.phone, conversation.Release(
        by_member=caller.member_id, author=caller.author, reason=a.reason, restricted_to=caller.restricted_to))


async def _transfer(deps: UseCaseDeps, caller: Caller, a: TransferChat) -> Outcome:
    return await act_on_chat(deps, caller, a.phone, conversation.Transfer(
        to_member=a.to_user_id, by_member=caller.member_id, author=caller.author, reason=a.reason,
        restricted_to=caller.restricted_to))


async def _resolve(deps: UseCaseDeps, caller: Caller, a: ChatWithReason) -> Outcome:
    return await act_on_chat(deps, caller, a.phone, conversation.Resolve(
        by_member=caller.member_id, author=caller.author, reason=a.reason, restricted_to=caller.restricted_to))


async def open_chat(deps: UseCaseDeps, caller: Caller, raw_phone: str) -> ConversationDetail | Refused:
    """A person opened the chat: a view is recorded and its unread messages count as read."""
    outcome = await act_on_chat(deps, caller, raw_phone, conversation.Open(
        member_id=caller.member_id, author=caller.author, restricted_to=caller.restricted_to))
    return outcome if isinstance(outcome, Refused) else outcome.data


async def _open(deps: UseCaseDeps, caller: Caller, a: OneChat) -> Outcome:
    return done(await open_chat(deps, caller, a.phone))


async def _mark_read(deps: UseCaseDeps, caller: Caller, a: OneChat) -> Outcome:
    """Unread cleared, no view recorded: a key marking read is not a person looking."""
    return await act_on_chat(deps, caller, a.phone, conversation.MarkRead(
        author=caller.author, restricted_to=caller.restricted_to))


async def act_on_chat(deps: UseCaseDeps, caller: Caller, raw_phone: str, message: object) -> Outcome:
    phone = phone_or_none(raw_phone)
    if phone is None:
        return no_such_chat()
    reply = await conversation.ask_conversation(deps.actors, caller.workspace_id, phone, message)
    if (refused := refusal_of(reply)) is not None:
        return refused
    detail = await find_detail(deps.db, caller.workspace_id, phone, deps.clock.now(), None)
    return no_such_chat() if detail is None else Done(detail)


def refusal_of(reply: object) -> Refused | None:
    if isinstance(reply, conversation.NotVisible):
        return no_such_chat()
    if isinstance(reply, conversation.Refused):
        return Refused(reason_of_status(reply.status), reply.message, reply.status, reply.code, state=reply.state)
    return None


def no_such_chat() -> Refused:
    return Refused(Why.NOT_FOUND, NO_SUCH_CHAT, 404, "not_found")


# -- the declarations ----------------------------------------------------------------------------------------

SHOW = UseCase("get_conversation", OneChat, permissions.CHAT_CONTENT, Kind.READ, _show)
SEND_MESSAGE = UseCase("send_message", SendMessage, permissions.SEND, Kind.WRITE, _send_message)
SEND_TEXT = UseCase("send_text", SendText, permissions.SEND, Kind.WRITE, _send_text)
SEND_TEMPLATE = UseCase("send_template", SendTemplate, permissions.SEND, Kind.WRITE, _send_template)
REPLY = UseCase("reply", ReplyMessage, permissions.CHAT_ACTIONS, Kind.WRITE, _reply_message)
REPLY_TEXT = UseCase("reply_in_chat", ReplyInChat, permissions.CHAT_ACTIONS, Kind.WRITE, _reply_text)
REPLY_TEMPLATE = UseCase("reply_with_template", ReplyWithTemplate, permissions.CHAT_ACTIONS, Kind.WRITE,
                         _reply_template)
CLAIM = UseCase("claim_conversation", OneChat, permissions.CHAT_ACTIONS, Kind.WRITE, _claim)
RELEASE = UseCase("release_conversation", ChatWithReason, permissions.CHAT_ACTIONS, Kind.WRITE, _release)
TRANSFER = UseCase("transfer_conversation", TransferChat, permissions.CHAT_ACTIONS, Kind.WRITE, _transfer)
RESOLVE = UseCase("resolve_conversation", ChatWithReason, permissions.CHAT_ACTIONS, Kind.WRITE, _resolve)
OPEN = UseCase("open_conversation", OneChat, permissions.CHAT_ACTIONS, Kind.WRITE, _open)
MARK_READ = UseCase("mark_conversation_read", OneChat, permissions.CHAT_ACTIONS, Kind.WRITE, _mark_read)
