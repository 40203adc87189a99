"""Running the catalog's actions as MCP tools, for a caller (a token acting as its member).

Reads go through the Reporting API's read modules, writes to the actor that owns the state (the conversation for
sends and team actions, the contact card for tags), as the HTTP routes do. Every failure a model can act on (bad
arguments, a missing permission, a chat that is not there, a state that does not allow the action, a send the
platform refused) is a `ToolResult` with `is_error`, never an exception: MCP reports tool failures in the
result, so that the model reads them. Expected actor failures (a busy or failing part of the service) are too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import msgspec
import trio

from inbox_actors.broadcasts import broadcast, creation, schedule
from inbox_actors.broadcasts import views as broadcast_views
from inbox_actors.contacts import contact_card
from inbox_actors.contacts.contact_card import UNSET, ContactRefusal, CreateContact, EditContact
from inbox_actors.conversations import conversation
from inbox_actors.conversations.send_answers import SendRefusal, send_answer
from inbox_actors.domain import scopes as scope_rules
from inbox_actors.domain.phones import InvalidPhone, normalise_phone, phone_or_none
from inbox_actors.mcp import catalog
from inbox_actors.mcp.catalog import Action, Kind
from inbox_actors.mcp.messages import ActionCaller, Failure, ToolResult, failure_of_status, tool_error
from inbox_actors.platform import templates
from inbox_actors.platform.messages import SendRequest
from inbox_actors.reporting import conversation_detail, conversation_lists, thread
from inbox_actors.reporting.chat_lookup import ChatNotFound
from inbox_actors.reporting.parameters import InvalidParameter
from inbox_actors.runtime import ActorError
from inbox_actors.runtime.actor import Directory
from inbox_actors.runtime.clock import Clock
from persistence.database import Database, DatabaseUnavailable

NO_SUCH_CHAT = "No such chat in this workspace (or not one assigned to you)."
NO_SUCH_BROADCAST = "No broadcast with this id in the workspace."
_encoder = msgspec.json.Encoder()


@dataclass(frozen=True)
class ToolDeps:
    db: Database
    actors: Directory
    clock: Clock


async def run_action(deps: ToolDeps, caller: ActionCaller, action: Action, arguments: dict[str, Any]) -> ToolResult:
    """The action's result for `caller`; its permissions, arguments and the action's own refusals checked."""
    method = "GET" if action.kind is Kind.READ else "POST"
    if not scope_rules.covers(caller.permissions, action.permissions, method):
        needed = " or ".join(f"{p}:read" if action.kind is Kind.READ and scope_rules.SCOPES.get(p) else p
                             for p in action.permissions)
        return tool_error(f"Permission denied: {action.name} needs the {needed} permission, which the member this "
                          "MCP token acts as does not have.", Failure.PERMISSION)
    try:
        parsed = msgspec.convert(arguments, type=action.arguments)
    except msgspec.ValidationError as err:
        return tool_error(f"Invalid arguments for {action.name}: {err}. The tool's inputSchema says what it takes.",
                          Failure.INVALID)
    try:
        return await _RUNNERS[action.name](deps, caller, parsed)
    except trio.Cancelled:
        raise
    except InvalidParameter as err:
        return tool_error(err.message, Failure.INVALID)
    except ChatNotFound:
        return tool_error(NO_SUCH_CHAT, Failure.NOT_FOUND)
    except (ActorError, DatabaseUnavailable) as err:
        return tool_error(f"The service could not complete {action.name} right now ({type(err).__name__}); "
                          "retry shortly. A write may still have happened: read before retrying it.",
                          Failure.UNAVAILABLE)


def _data(value: Any, text: str | None = None) -> ToolResult:
    builtins = msgspec.to_builtins(value)
    return ToolResult(text=text if text is not None else _encoder.encode(builtins).decode(), data=builtins)


def _args(**values: Any) -> dict[str, str]:
    """Tool arguments as the Reporting API's query parameters (strings; absent ones left out)."""
    return {name: str(value).lower() if isinstance(value, bool) else str(value)
            for name, value in values.items() if value is not None}


# -- reads ---------------------------------------------------------------------------------------------------


async def _list_conversations(deps: ToolDeps, caller: ActionCaller, a: catalog.ListConversations) -> ToolResult:
    args = _args(q=a.q, state=a.state.value if a.state else None, unread=a.unread, needs_reply=a.needs_reply,
                 assigned_to=a.assigned_to, sort=a.sort, limit=a.limit, cursor=a.cursor)
    return _data(await conversation_lists.conversations(deps.db, caller.workspace_id, args, deps.clock.now(),
                                                        caller.only_assigned_to))


async def _get_conversation(deps: ToolDeps, caller: ActionCaller, a: catalog.OneChat) -> ToolResult:
    found = await conversation_detail.find_detail_by_raw_phone(deps.db, caller.workspace_id, a.phone,
                                                               deps.clock.now(), caller.only_assigned_to)
    return tool_error(NO_SUCH_CHAT, Failure.NOT_FOUND) if found is None else _data(found)


async def _read_messages(deps: ToolDeps, caller: ActionCaller, a: catalog.ReadMessages) -> ToolResult:
    args = _args(order=a.order, limit=a.limit, cursor=a.cursor)
    return _data(await thread.messages(deps.db, caller.workspace_id, a.phone, args, caller.only_assigned_to))


async def _unread_summary(deps: ToolDeps, caller: ActionCaller, a: catalog.NoArguments) -> ToolResult:
    return _data(await conversation_lists.unread_summary(deps.db, caller.workspace_id, {}, deps.clock.now(),
                                                         caller.only_assigned_to))


async def _list_templates(deps: ToolDeps, caller: ActionCaller, a: catalog.ListTemplates) -> ToolResult:
    found = await templates.workspace_templates(deps.db, caller.workspace_id, status_name=a.status, name=a.name,
                                                language=a.language)
    return _data({"data": found})


# -- writes --------------------------------------------------------------------------------------------------


async def _send_text(deps: ToolDeps, caller: ActionCaller, a: catalog.SendText) -> ToolResult:
    if not a.text.strip():
        return tool_error("text must not be blank.", Failure.INVALID)
    return await _send(deps, caller, a.to, SendRequest(to="", type="text", text=a.text.strip()))


async def _send_template(deps: ToolDeps, caller: ActionCaller, a: catalog.SendTemplate) -> ToolResult:
    return await _send(deps, caller, a.to, SendRequest(to="", type="template", template_name=a.template,
                                                       template_language=a.language,
                                                       template_parameters=tuple(a.parameters)))


async def _send(deps: ToolDeps, caller: ActionCaller, raw_phone: str, request: SendRequest) -> ToolResult:
    if not caller.cloud_api_enabled:
        return tool_error("The messaging cloud API is switched off for this workspace; nothing was sent.")
    try:
        phone = normalise_phone(raw_phone)
    except InvalidPhone as err:
        return tool_error(f"Invalid phone number: {err}", Failure.INVALID)
    # As an API send: sender_type system (not a person typing in the inbox), labelled with the token's name.
    order = conversation.Send(request=request, sender_type="system", author=caller.author,
                              sender_label=caller.label, only_assigned_to=caller.only_assigned_to)
    answer = send_answer(await conversation.ask_conversation(deps.actors, caller.workspace_id, phone, order))
    if isinstance(answer, SendRefusal):
        # A send refused 403 is the contact's consent, 402 the credits: refusals, not the caller's permissions.
        return tool_error(f"Not sent: {answer.sentence}.",
                          failure_of_status(answer.status) if answer.status in (400, 404) else Failure.REFUSED)
    body = msgspec.to_builtins(answer.body)
    if answer.status != 200:
        return tool_error(f"The platform refused the message (error {body['errorCode']}, {body['errorTitle']}): "
                          f"{body['error']}", data=body)
    return ToolResult(text=f"Sent; the platform's message id is {body['messageId']}.", data=body)


async def _claim(deps: ToolDeps, caller: ActionCaller, a: catalog.OneChat) -> ToolResult:
    # A member limited to assigned chats may claim only what is assigned to them already.
    return await _team_action(deps, caller, a.phone, conversation.Claim(
        member_id=caller.member_id, author=caller.author, only_assigned_to=caller.only_assigned_to))


async def _release(deps: ToolDeps, caller: ActionCaller, a: catalog.ChatWithReason) -> ToolResult:
    return await _team_action(deps, caller, a.phone, conversation.Release(
        by_member=caller.member_id, author=caller.author, reason=a.reason, only_assigned_to=caller.only_assigned_to))


async def _resolve(deps: ToolDeps, caller: ActionCaller, a: catalog.ChatWithReason) -> ToolResult:
    return await _team_action(deps, caller, a.phone, conversation.Resolve(
        by_member=caller.member_id, author=caller.author, reason=a.reason, only_assigned_to=caller.only_assigned_to))


async def _team_action(deps: ToolDeps, caller: ActionCaller, raw_phone: str, message: object) -> ToolResult:
    phone = phone_or_none(raw_phone)
    if phone is None:
        return tool_error(NO_SUCH_CHAT, Failure.NOT_FOUND)
    reply = await conversation.ask_conversation(deps.actors, caller.workspace_id, phone, message)
    if isinstance(reply, conversation.NotVisible):
        return tool_error(NO_SUCH_CHAT, Failure.NOT_FOUND)
    if isinstance(reply, conversation.Refused):
        state = f" (the chat is {reply.state})" if reply.state else ""
        return tool_error(f"{reply.message}{state}", failure_of_status(reply.status))
    # The caller may act on the chat, so it sees the outcome, even when the action took it out of its view.
    detail = await conversation_detail.find_detail(deps.db, caller.workspace_id, phone, deps.clock.now(), None)
    return tool_error(NO_SUCH_CHAT, Failure.NOT_FOUND) if detail is None else _data(detail)


async def _add_tag(deps: ToolDeps, caller: ActionCaller, a: catalog.ContactTag) -> ToolResult:
    return await _edit_contact(deps, caller, a.phone, EditContact(add_tags=(a.tag,), actor=caller.author))


async def _remove_tag(deps: ToolDeps, caller: ActionCaller, a: catalog.ContactTag) -> ToolResult:
    return await _edit_contact(deps, caller, a.phone, EditContact(remove_tag=a.tag, actor=caller.author))


async def _edit_contact(deps: ToolDeps, caller: ActionCaller, raw_phone: str,
                        edit: CreateContact | EditContact) -> ToolResult:
    try:
        phone = normalise_phone(raw_phone)
    except InvalidPhone as err:
        return tool_error(f"Invalid phone number: {err}", Failure.INVALID)
    if caller.only_assigned_to is not None:
        # A member limited to assigned chats edits only the contacts of those chats.
        visible = await conversation_detail.find_detail(deps.db, caller.workspace_id, phone, deps.clock.now(),
                                                        caller.only_assigned_to)
        if visible is None:
            return tool_error("Contact not found.", Failure.NOT_FOUND)
    reply = await contact_card.change_contact(deps.actors, caller.workspace_id, phone, edit)  # type: ignore[arg-type]
    if isinstance(reply, ContactRefusal):
        return tool_error(reply.sentence if reply.sentence.endswith(".") else f"{reply.sentence}.",
                          failure_of_status(reply.status))
    if isinstance(edit, CreateContact):
        return _data({"contact": reply.contact, "created": reply.created})
    return _data(reply.contact)


async def _transfer(deps: ToolDeps, caller: ActionCaller, a: catalog.TransferChat) -> ToolResult:
    return await _team_action(deps, caller, a.phone, conversation.Transfer(
        to_member=a.to_user_id, by_member=caller.member_id, author=caller.author, reason=a.reason,
        only_assigned_to=caller.only_assigned_to))


async def _reply(deps: ToolDeps, caller: ActionCaller, a: catalog.ReplyInChat) -> ToolResult:
    if not caller.cloud_api_enabled:
        return tool_error("The messaging cloud API is switched off for this workspace; nothing was sent.")
    phone = phone_or_none(a.phone)
    if phone is None:
        return tool_error(NO_SUCH_CHAT, Failure.NOT_FOUND)
    if not a.text.strip():
        return tool_error("text must not be blank.", Failure.INVALID)
    # As the inbox's reply route: an agent's message, by the member, which claims an unclaimed chat.
    outcome = await conversation.ask_conversation(deps.actors, caller.workspace_id, phone, conversation.Send(
        request=SendRequest(to="", type="text", text=a.text.strip()), sender_type="agent", author=caller.author,
        actor_id=caller.member_id, only_assigned_to=caller.only_assigned_to))
    if isinstance(outcome, conversation.NotVisible):
        return tool_error(NO_SUCH_CHAT, Failure.NOT_FOUND)
    if isinstance(outcome, conversation.Refused):
        state = f" (the chat is {outcome.state})" if outcome.state else ""
        return tool_error(f"Not sent: {outcome.message}{state}", failure_of_status(outcome.status))
    assert isinstance(outcome, conversation.SendOutcome)
    if outcome.refused_status is not None:
        return tool_error(f"Not sent: {outcome.refused_sentence or 'the message was refused'}.")
    if outcome.failure is not None:
        failure = outcome.failure
        return tool_error(f"The platform refused the reply (error {failure.code}, {failure.title}): "
                          f"{failure.message}", data=msgspec.to_builtins(failure))
    detail = await conversation_detail.find_detail(deps.db, caller.workspace_id, phone, deps.clock.now(), None)
    return _data({"messageId": outcome.platform_message_id, "channel": outcome.channel, "conversation": detail},
                 text=None)


async def _create_contact(deps: ToolDeps, caller: ActionCaller, a: catalog.CreateContactArgs) -> ToolResult:
    return await _edit_contact(deps, caller, a.phone, CreateContact(
        name=a.name, email=_kept(a.email), company=_kept(a.company), status=_kept(a.status), tags=tuple(a.tags),
        notes=_kept(a.notes), attributes=_kept(a.attributes), actor=caller.author))


async def _update_contact(deps: ToolDeps, caller: ActionCaller, a: catalog.UpdateContactArgs) -> ToolResult:
    changes = {name: value for name in ("name", "email", "company", "status", "notes", "attributes")
               if (value := getattr(a, name)) is not None}
    if not changes:
        return tool_error("Nothing to change: give at least one of name, email, company, status, notes, "
                          "attributes.", Failure.INVALID)
    return await _edit_contact(deps, caller, a.phone, EditContact(**changes, actor=caller.author))


async def _opt_out(deps: ToolDeps, caller: ActionCaller, a: catalog.OneChat) -> ToolResult:
    return await _edit_contact(deps, caller, a.phone, EditContact(opted_out=True, actor=caller.author))


async def _opt_in(deps: ToolDeps, caller: ActionCaller, a: catalog.OneChat) -> ToolResult:
    return await _edit_contact(deps, caller, a.phone, EditContact(opted_out=False, actor=caller.author))


def _kept(value: Any) -> Any:
    """A field the caller left out keeps its value on an existing contact."""
    return UNSET if value is None else value


async def _list_broadcasts(deps: ToolDeps, caller: ActionCaller, a: catalog.ListBroadcasts) -> ToolResult:
    return _data(await broadcast_views.list_broadcasts(deps.db, caller.workspace_id,
                                                       _args(status=a.status, limit=a.limit, cursor=a.cursor)))


async def _get_broadcast(deps: ToolDeps, caller: ActionCaller, a: catalog.OneBroadcast) -> ToolResult:
    row = await broadcast_views.find_broadcast(deps.db, caller.workspace_id, a.broadcast_id)
    if row is None:
        return tool_error(NO_SUCH_BROADCAST, Failure.NOT_FOUND)
    return _data(await broadcast_views.broadcast_view(deps.db, row, deps.clock.now()))


async def _send_broadcast(deps: ToolDeps, caller: ActionCaller, a: catalog.SendBroadcast) -> ToolResult:
    if not caller.cloud_api_enabled:
        return tool_error("The messaging cloud API is switched off for this workspace; nothing was sent.")
    audience = (creation.AudienceFilter(tags=list(a.tags), status=a.contact_status)
                if a.tags or a.contact_status is not None else None)
    body = creation.BulkSend(template=creation.TemplateOrder(name=a.template, language=a.language,
                                                             parameters=list(a.parameters)),
                             recipients=list(a.phones), filter=audience, name=a.name, scheduled_at=a.scheduled_at)
    creator = creation.Creator(workspace_id=caller.workspace_id, member_id=caller.member_id, via=caller.author,
                               may_approve=scope_rules.covers(caller.permissions, ("campaign_approve",), "POST"))
    try:
        created = await creation.create_broadcast(deps.db, creator, body, deps.clock.now())
    except creation.Refusal as refusal:
        return tool_error(f"No broadcast made ({refusal.code}): {refusal.message}", failure_of_status(refusal.status))
    row = await schedule.launch(deps.actors, created.row)
    if isinstance(row, broadcast.Refused):
        return tool_error(f"The broadcast was stored but did not start ({row.code}): {row.message}",
                          Failure.UNAVAILABLE)
    return _data(await broadcast_views.broadcast_view(deps.db, row, deps.clock.now()))


_Runner = Callable[[ToolDeps, ActionCaller, Any], Awaitable[ToolResult]]
_RUNNERS: dict[str, _Runner] = {
    "list_conversations": _list_conversations,
    "get_conversation": _get_conversation,
    "read_messages": _read_messages,
    "unread_summary": _unread_summary,
    "list_templates": _list_templates,
    "send_text": _send_text,
    "send_template": _send_template,
    "claim_conversation": _claim,
    "release_conversation": _release,
    "resolve_conversation": _resolve,
    "add_tag": _add_tag,
    "remove_tag": _remove_tag,
    "transfer_conversation": _transfer,
    "reply_in_chat": _reply,
    "create_contact": _create_contact,
    "update_contact": _update_contact,
    "opt_out_contact": _opt_out,
    "opt_in_contact": _opt_in,
    "list_broadcasts": _list_broadcasts,
    "get_broadcast": _get_broadcast,
    "send_broadcast": _send_broadcast,
}
assert set(_RUNNERS) == set(catalog.BY_NAME), "every catalog action has a runner"
