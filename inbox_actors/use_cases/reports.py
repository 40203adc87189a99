"""The Reporting API's reads, declared as use cases so that who may read what is stated once, here: the
workspace's chat lists, their aggregates, and one chat's thread, receipts, views, replies and assignment history.

A read takes its query parameters as the Reporting API defines them (`paging/parameter_catalog.py` lists them,
the read modules in `reporting/` parse them), so its arguments are the query's raw text and, for one chat's
reads, the phone. A parameter a read cannot take is refused with its own code (`invalid_limit`,
`invalid_state`...); a chat the caller may not see is "no such chat". A caller limited to assigned chats reads
only those.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from inbox_actors.platform.media import MediaGone, MediaStream, MediaUnavailable
from inbox_actors.reporting import (
    assignment_history,
    attention,
    conversation_detail,
    conversation_lists,
    outbound_messages,
    replies,
    thread,
)
from inbox_actors.reporting.chat_lookup import ChatNotFound
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused
from inbox_actors.use_cases.use_case import Kind, UseCase


class Query(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A workspace-wide read: its query parameters as sent."""

    query: dict[str, str] = {}


class ChatQuery(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A read about one chat: the phone as the caller spelt it, and the query parameters as sent."""

    phone: str
    query: dict[str, str] = {}


class MessageMediaQuery(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A customer's file in one chat: the phone as the caller spelt it, and the message's id."""

    phone: str
    message_id: int


class MessageFile(msgspec.Struct, frozen=True):
    """A customer's file, fetched from the platform: streamed, never held whole (`platform/media.py`)."""

    stream: MediaStream
    filename: str | None


Read = Callable[[UseCaseDeps, Caller, Any], Awaitable[Any]]


def _reading(read: Read) -> Callable[[UseCaseDeps, Caller, Any], Awaitable[Outcome]]:
    """A read's handler: its value (a parameter it cannot take, a chat not there: refused by the runner)."""

    async def handler(deps: UseCaseDeps, caller: Caller, arguments: Any) -> Outcome:
        return Done(await read(deps, caller, arguments))

    return handler


async def _detail(deps: UseCaseDeps, caller: Caller, a: ChatQuery):
    found = await conversation_detail.find_detail_by_raw_phone(deps.db, caller.workspace_id, a.phone,
                                                               deps.clock.now(), caller.restricted_to)
    if found is None:
        raise ChatNotFound(a.phone)
    return found


def _listed(read) -> Read:
    """A workspace-wide read of the shape `read(db, workspace, args, now, restricted_to)`."""
    return lambda deps, caller, a: read(deps.db, caller.workspace_id, a.query, deps.clock.now(),
                                        caller.restricted_to)


def _of_chat(read) -> Read:
    """A read of one chat of the shape `read(db, workspace, phone, args, restricted_to)`."""
    return lambda deps, caller, a: read(deps.db, caller.workspace_id, a.phone, a.query, caller.restricted_to)


def _of_chat_unpaged(read) -> Read:
    """A read of one chat that takes no parameters: `read(db, workspace, phone, restricted_to)`."""
    return lambda deps, caller, a: read(deps.db, caller.workspace_id, a.phone, caller.restricted_to)


def _declare(name: str, arguments: type, needs: tuple[str, ...], read: Read) -> UseCase:
    return UseCase(name, arguments, needs, Kind.READ, _reading(read))


async def _media(deps: UseCaseDeps, caller: Caller, a: MessageMediaQuery) -> Outcome:
    found = await thread.media_of(deps.db, caller.workspace_id, a.phone, a.message_id, caller.restricted_to)
    if found is None:
        return Refused(Reason.NOT_FOUND, "No media with this message id in this chat.", 404, "not_found")
    fetcher = deps.media()
    if fetcher is None:
        return Refused(Reason.UNAVAILABLE, "The messaging platform is not connected yet; retry shortly.", 502,
                       "media_unavailable")
    try:
        stream = await fetcher.open(found.media_id, found.mime_type)
    except MediaGone:
        return Refused(Reason.NOT_FOUND, "The platform no longer keeps this media.", 404, "media_gone")
    except MediaUnavailable as err:
        return Refused(Reason.UNAVAILABLE, f"The media could not be fetched: {err}.", 502, "media_unavailable")
    return Done(MessageFile(stream, found.filename))


CONVERSATIONS = _declare("report_conversations", Query, permissions.CHAT_CONTENT,
                         _listed(conversation_lists.conversations))
UNREAD_SUMMARY = _declare("report_unread_summary", Query, permissions.TEAM_DATA,
                          _listed(conversation_lists.unread_summary))
UNANSWERED = _declare("report_unanswered", Query, permissions.CHAT_CONTENT, _listed(conversation_lists.unanswered))
REPLIES = _declare("report_replies", Query, permissions.TEAM_DATA, _listed(replies.workspace_replies))
MESSAGES_IN_STATUS = _declare("report_messages_in_status", Query, permissions.MESSAGE_STATISTICS,
                              _listed(outbound_messages.outbound_messages))
CHAT = _declare("report_conversation", ChatQuery, permissions.CHAT_CONTENT, _detail)
THREAD = _declare("report_messages", ChatQuery, permissions.CHAT_CONTENT, _of_chat(thread.messages))
"""A chat's messages; its customer's media (`media_url`, MEDIA) is read with the same permission."""
MEDIA = UseCase("report_message_media", MessageMediaQuery, permissions.CHAT_CONTENT, Kind.READ, _media)
"""A customer's file (a message's `media_url`), fetched from the platform: the Reporting API's route and the
agent inbox's own (a session's) both answer it."""
RECEIPTS = _declare("report_receipts", ChatQuery, permissions.CHAT_CONTENT, _of_chat(thread.receipts))
SEEN_BY = _declare("report_seen_by", ChatQuery, permissions.TEAM_DATA, _of_chat_unpaged(attention.seen_by))
VIEWS = _declare("report_views", ChatQuery, permissions.TEAM_DATA, _of_chat(attention.views))
CHAT_REPLIES = _declare("report_chat_replies", ChatQuery, permissions.TEAM_DATA, _of_chat(replies.chat_replies))
ASSIGNMENT_HISTORY = _declare("report_assignment_history", ChatQuery, permissions.TEAM_DATA,
                              _of_chat_unpaged(assignment_history.assignment_history))
