"""The inbox's reads a person or a model asks for by name (MCP's tools, the connectors): chats listed or
searched, one chat's messages, the unread summary, the templates. They read the Reporting API's read modules, as
the REST reads do, and a caller limited to assigned chats sees only those."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from inbox_actors.domain.conversation_states import State
from inbox_actors.platform import templates
from inbox_actors.platform.templates import STATUSES as TEMPLATE_STATUSES
from inbox_actors.reporting import conversation_lists, thread
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import BIGINT_MAX, ONE_LINE, ChatPhone, Cursor
from inbox_actors.use_cases.outcomes import Done, Outcome
from inbox_actors.use_cases.use_case import Kind, UseCase, rule

PAGE_LIMIT = 50
THREAD_LIMIT = 100


class ListConversations(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    q: Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=ONE_LINE,
                                   description="Search text: matches the contact's name or phone.")] | None = None
    state: Annotated[State, msgspec.Meta(description="Only chats in this state: AI_ONLY (the bot answers), "
                                                     "HANDOFF_PENDING (waiting for a person), HUMAN_ACTIVE "
                                                     "(a member has it).")] | None = None
    unread: Annotated[bool, msgspec.Meta(description="Only chats with (true) or without (false) unread "
                                                     "customer messages.")] | None = None
    needs_reply: Annotated[bool, msgspec.Meta(description="Only chats whose customer spoke last and got no "
                                                          "reply yet (true), or the others (false).")] | None = None
    assigned_to: Annotated[int, msgspec.Meta(ge=1, le=BIGINT_MAX, description="Only chats assigned to this team "
                                                                               "member (user id).")] | None = None
    sort: Annotated[Literal["last_activity", "waiting_longest"], msgspec.Meta(
        description="last_activity (newest first, the default) or waiting_longest.")] = "last_activity"
    limit: Annotated[int, msgspec.Meta(ge=1, le=PAGE_LIMIT, description="How many chats, 1 to 50.")] = 20
    cursor: Cursor | None = None


class ReadMessages(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: ChatPhone
    order: Annotated[Literal["desc", "asc"], msgspec.Meta(
        description="desc: newest first (the default); asc: oldest first.")] = "desc"
    limit: Annotated[int, msgspec.Meta(ge=1, le=THREAD_LIMIT, description="How many messages, 1 to 100.")] = 30
    cursor: Cursor | None = None


class NoArguments(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    pass


class ListTemplates(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Filters: text no template has finds none; text no template can have (a control character) is refused."""

    name: Annotated[str, msgspec.Meta(pattern=ONE_LINE, description="Only templates of this name.", extra=rule(
        "invalid_name", "name may not contain control characters."))] | None = None
    language: Annotated[str, msgspec.Meta(
        pattern=ONE_LINE, description="Only templates in this language (en, en_US...).",
        extra=rule("invalid_language", "language may not contain control characters."))] | None = None
    status: Annotated[Literal[TEMPLATE_STATUSES], msgspec.Meta(  # type: ignore[valid-type]
        description="Only templates in this status; only APPROVED ones can be sent.",
        extra=rule("invalid_status", f"status must be one of {', '.join(TEMPLATE_STATUSES)}."))] | None = None


def query(**values: object) -> dict[str, str]:
    """Arguments as the Reporting API's query parameters (strings; absent ones left out)."""
    return {name: str(value).lower() if isinstance(value, bool) else str(value)
            for name, value in values.items() if value is not None}


async def _list_conversations(deps: UseCaseDeps, caller: Caller, a: ListConversations) -> Outcome:
    args = query(q=a.q, state=a.state.value if a.state else None, unread=a.unread, needs_reply=a.needs_reply,
                 assigned_to=a.assigned_to, sort=a.sort, limit=a.limit, cursor=a.cursor)
    return Done(await conversation_lists.conversations(deps.db, caller.workspace_id, args, deps.clock.now(),
                                                       caller.restricted_to))


async def _read_messages(deps: UseCaseDeps, caller: Caller, a: ReadMessages) -> Outcome:
    return Done(await thread.messages(deps.db, caller.workspace_id, a.phone,
                                      query(order=a.order, limit=a.limit, cursor=a.cursor), caller.restricted_to))


async def _unread_summary(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(await conversation_lists.unread_summary(deps.db, caller.workspace_id, {}, deps.clock.now(),
                                                        caller.restricted_to))


async def _list_templates(deps: UseCaseDeps, caller: Caller, a: ListTemplates) -> Outcome:
    found = await templates.workspace_templates(deps.db, caller.workspace_id, status_name=a.status, name=a.name,
                                                language=a.language)
    return Done({"data": found})


LIST_CONVERSATIONS = UseCase("list_conversations", ListConversations, permissions.CHAT_CONTENT, Kind.READ,
                             _list_conversations)
READ_MESSAGES = UseCase("read_messages", ReadMessages, permissions.CHAT_CONTENT, Kind.READ, _read_messages)
UNREAD_SUMMARY = UseCase("unread_summary", NoArguments, permissions.TEAM_DATA, Kind.READ, _unread_summary)
LIST_TEMPLATES = UseCase("list_templates", ListTemplates, permissions.TEMPLATES, Kind.READ, _list_templates)
