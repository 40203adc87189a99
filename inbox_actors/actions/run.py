"""Running a catalog action for a caller: its permissions and arguments checked, then the action's use case.

MCP's `tools/call` and the connectors' actions both come here and translate the outcome into their own answers
(`mcp/tool_result.py`, `connectors/actions.py`). Every failure a caller can act on (bad arguments, a missing
permission, a chat that is not there, a state that does not allow the action, a send the platform refused) is a
`Refused` outcome, never an exception; so are expected actor failures (a busy or failing part of the service).
Reads go through the Reporting API's read modules, as the REST reads do; writes through the use cases in
`chats`, `contacts` and `broadcasts`, which the REST routes call too.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

import msgspec
import trio

from inbox_actors.actions import broadcasts, catalog, chats, contacts
from inbox_actors.actions.caller import Caller
from inbox_actors.actions.catalog import Action, Kind
from inbox_actors.actions.deps import ActionDeps
from inbox_actors.actions.outcomes import Done, Outcome, Reason, Refused, reason_of_status
from inbox_actors.broadcasts import creation
from inbox_actors.broadcasts import views as broadcast_views
from inbox_actors.contacts.contact_card import UNSET, ContactRefusal, CreateContact, EditContact
from inbox_actors.conversations.send_answers import SendRefusal
from inbox_actors.domain import scopes as scope_rules
from inbox_actors.paging.parameters import InvalidParameter
from inbox_actors.platform import templates
from inbox_actors.platform.payloads import SendRequest
from inbox_actors.reporting import conversation_lists, thread
from inbox_actors.reporting.chat_lookup import ChatNotFound
from inbox_actors.runtime import ActorError
from persistence.database import DatabaseUnavailable


async def run_action(deps: ActionDeps, caller: Caller, action: Action, arguments: dict[str, Any]) -> Outcome:
    """The action's outcome for `caller`; its permissions, arguments and the action's own refusals checked."""
    method = "GET" if action.kind is Kind.READ else "POST"
    if not caller.may(action.permissions, method):
        needed = " or ".join(f"{p}:read" if action.kind is Kind.READ and scope_rules.SCOPES.get(p) else p
                             for p in action.permissions)
        return Refused(Reason.PERMISSION, f"Permission denied: {action.name} needs the {needed} permission, "
                       "which the member this MCP token acts as does not have.", 403, "permission_denied")
    try:
        parsed = msgspec.convert(arguments, type=action.arguments)
    except msgspec.ValidationError as err:
        return _invalid(f"Invalid arguments for {action.name}: {err}. The tool's inputSchema says what it takes.")
    try:
        return await _RUNNERS[action.name](deps, caller, parsed)
    except trio.Cancelled:
        raise
    except InvalidParameter as err:
        return _invalid(err.message)
    except ChatNotFound:
        return Refused(Reason.NOT_FOUND, chats.NO_SUCH_CHAT, 404, "not_found")
    except (ActorError, DatabaseUnavailable) as err:
        return Refused(Reason.UNAVAILABLE, f"The service could not complete {action.name} right now "
                       f"({type(err).__name__}); retry shortly. A write may still have happened: read before "
                       "retrying it.", 503, "service_unavailable")


def _invalid(sentence: str) -> Refused:
    return Refused(Reason.INVALID, sentence, 400, "invalid_arguments")


def _data(value: Any) -> Done:
    return Done(msgspec.to_builtins(value))


def _done(outcome: Any) -> Outcome:
    return outcome if isinstance(outcome, Refused) else _data(outcome)


def _args(**values: Any) -> dict[str, str]:
    """Tool arguments as the Reporting API's query parameters (strings; absent ones left out)."""
    return {name: str(value).lower() if isinstance(value, bool) else str(value)
            for name, value in values.items() if value is not None}


# -- reads ---------------------------------------------------------------------------------------------------


async def _list_conversations(deps: ActionDeps, caller: Caller, a: catalog.ListConversations) -> Outcome:
    args = _args(q=a.q, state=a.state.value if a.state else None, unread=a.unread, needs_reply=a.needs_reply,
                 assigned_to=a.assigned_to, sort=a.sort, limit=a.limit, cursor=a.cursor)
    return _data(await conversation_lists.conversations(deps.db, caller.workspace_id, args, deps.clock.now(),
                                                        caller.only_assigned_to))


async def _get_conversation(deps: ActionDeps, caller: Caller, a: catalog.OneChat) -> Outcome:
    return _done(await chats.chat(deps, caller, a.phone))


async def _read_messages(deps: ActionDeps, caller: Caller, a: catalog.ReadMessages) -> Outcome:
    args = _args(order=a.order, limit=a.limit, cursor=a.cursor)
    return _data(await thread.messages(deps.db, caller.workspace_id, a.phone, args, caller.only_assigned_to))


async def _unread_summary(deps: ActionDeps, caller: Caller, a: catalog.NoArguments) -> Outcome:
    return _data(await conversation_lists.unread_summary(deps.db, caller.workspace_id, {}, deps.clock.now(),
                                                         caller.only_assigned_to))


async def _list_templates(deps: ActionDeps, caller: Caller, a: catalog.ListTemplates) -> Outcome:
    found = await templates.workspace_templates(deps.db, caller.workspace_id, status_name=a.status, name=a.name,
                                                language=a.language)
    return _data({"data": found})


# -- writes --------------------------------------------------------------------------------------------------


async def _send_text(deps: ActionDeps, caller: Caller, a: catalog.SendText) -> Outcome:
    if not a.text.strip():
        return _invalid("text must not be blank.")
    return await _send(deps, caller, a.to, SendRequest(to="", type="text", text=a.text.strip()))


async def _send_template(deps: ActionDeps, caller: Caller, a: catalog.SendTemplate) -> Outcome:
    return await _send(deps, caller, a.to, SendRequest(to="", type="template", template_name=a.template,
                                                       template_language=a.language,
                                                       template_parameters=tuple(a.parameters)))


async def _send(deps: ActionDeps, caller: Caller, raw_phone: str, request: SendRequest) -> Outcome:
    answer = await chats.send(deps, caller, raw_phone, request)
    if isinstance(answer, Refused):
        return answer
    if isinstance(answer, SendRefusal):
        # A send refused 403 is the contact's consent, 402 the credits: refusals, not the caller's permissions.
        return Refused(reason_of_status(answer.status) if answer.status in (400, 404) else Reason.REFUSED,
                       f"Not sent: {answer.sentence}.", answer.status, "not_sent")
    body = msgspec.to_builtins(answer.body)
    if answer.status != 200:
        return Refused(Reason.REFUSED, body["error"], 502, "send_failed", data=body)
    return Done(body, summary=f"Sent; the platform's message id is {body['messageId']}.")


async def _claim(deps: ActionDeps, caller: Caller, a: catalog.OneChat) -> Outcome:
    return _done(await chats.claim(deps, caller, a.phone))


async def _release(deps: ActionDeps, caller: Caller, a: catalog.ChatWithReason) -> Outcome:
    return _done(await chats.release(deps, caller, a.phone, a.reason))


async def _resolve(deps: ActionDeps, caller: Caller, a: catalog.ChatWithReason) -> Outcome:
    return _done(await chats.resolve(deps, caller, a.phone, a.reason))


async def _transfer(deps: ActionDeps, caller: Caller, a: catalog.TransferChat) -> Outcome:
    return _done(await chats.transfer(deps, caller, a.phone, a.to_user_id, a.reason))


async def _reply(deps: ActionDeps, caller: Caller, a: catalog.ReplyInChat) -> Outcome:
    if not a.text.strip():
        return _invalid("text must not be blank.")
    return _done(await chats.reply(deps, caller, a.phone, SendRequest(to="", type="text", text=a.text.strip())))


async def _add_tag(deps: ActionDeps, caller: Caller, a: catalog.ContactTag) -> Outcome:
    return await _edit_contact(deps, caller, a.phone, EditContact(add_tags=(a.tag,), actor=caller.author))


async def _remove_tag(deps: ActionDeps, caller: Caller, a: catalog.ContactTag) -> Outcome:
    return await _edit_contact(deps, caller, a.phone, EditContact(remove_tag=a.tag, actor=caller.author))


async def _edit_contact(deps: ActionDeps, caller: Caller, raw_phone: str,
                        edit: CreateContact | EditContact) -> Outcome:
    reply = await contacts.change(deps, caller, raw_phone, edit)
    if isinstance(reply, Refused):
        return reply
    if isinstance(reply, ContactRefusal):
        sentence = reply.sentence if reply.sentence.endswith(".") else f"{reply.sentence}."
        return Refused(reason_of_status(reply.status), sentence, reply.status, reply.code or "contact_refused")
    if isinstance(edit, CreateContact):
        return _data({"contact": reply.contact, "created": reply.created})
    return _data(reply.contact)


async def _create_contact(deps: ActionDeps, caller: Caller, a: catalog.CreateContactArgs) -> Outcome:
    return await _edit_contact(deps, caller, a.phone, CreateContact(
        name=a.name, email=_kept(a.email), company=_kept(a.company), status=_kept(a.status), tags=tuple(a.tags),
        notes=_kept(a.notes), attributes=_kept(a.attributes), actor=caller.author))


async def _update_contact(deps: ActionDeps, caller: Caller, a: catalog.UpdateContactArgs) -> Outcome:
    changes = {name: value for name in ("name", "email", "company", "status", "notes", "attributes")
               if (value := getattr(a, name)) is not None}
    if not changes:
        return _invalid("Nothing to change: give at least one of name, email, company, status, notes, attributes.")
    return await _edit_contact(deps, caller, a.phone, EditContact(**changes, actor=caller.author))


async def _opt_out(deps: ActionDeps, caller: Caller, a: catalog.OneChat) -> Outcome:
    return await _edit_contact(deps, caller, a.phone, EditContact(opted_out=True, actor=caller.author))


async def _opt_in(deps: ActionDeps, caller: Caller, a: catalog.OneChat) -> Outcome:
    return await _edit_contact(deps, caller, a.phone, EditContact(opted_out=False, actor=caller.author))


def _kept(value: Any) -> Any:
    """A field the caller left out keeps its value on an existing contact."""
    return UNSET if value is None else value


async def _list_broadcasts(deps: ActionDeps, caller: Caller, a: catalog.ListBroadcasts) -> Outcome:
    return _data(await broadcast_views.list_broadcasts(deps.db, caller.workspace_id,
                                                       _args(status=a.status, limit=a.limit, cursor=a.cursor)))


async def _get_broadcast(deps: ActionDeps, caller: Caller, a: catalog.OneBroadcast) -> Outcome:
    return _done(await broadcasts.view(deps, caller, a.broadcast_id))


async def _send_broadcast(deps: ActionDeps, caller: Caller, a: catalog.SendBroadcast) -> Outcome:
    audience = (creation.AudienceFilter(tags=list(a.tags), status=a.contact_status)
                if a.tags or a.contact_status is not None else None)
    order = creation.BulkSend(template=creation.TemplateOrder(name=a.template, language=a.language,
                                                              parameters=list(a.parameters)),
                              recipients=list(a.phones), filter=audience, name=a.name, scheduled_at=a.scheduled_at)
    started = await broadcasts.start(deps, caller, order)
    if isinstance(started, Refused):
        if started.reason is Reason.UNAVAILABLE:
            return msgspec.structs.replace(started, message=f"The broadcast was stored but did not start "
                                                            f"({started.code}): {started.message}")
        return msgspec.structs.replace(started, message=f"No broadcast made ({started.code}): {started.message}")
    return _data(started.view)


_Runner = Callable[[ActionDeps, Caller, Any], Awaitable[Outcome]]
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
