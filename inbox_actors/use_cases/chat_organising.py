"""How a team organises a chat: internal notes, labels and snooze. Each asks the chat's conversation actor, as
the team's other actions do (`chats.py`, whose visibility rules hold here too):

- a note is 1 to MAX_TEXT characters of text, without control characters but line breaks and tabs, not blank,
  and is never sent to the customer; it may carry an idempotency_key of the member's (`keyed_sends`); the members
  it mentions (`@Name`, `@[Name](member:ID)`: `team/mentions.py`) are found when it is written, stored with it and
  told, once however often a keyed note is retried; its answer names them (`mentions.NoteMessage`);
- a label put on a chat is one of the workspace's; taking off one the chat lacks changes nothing;
- a snooze ends at a time with its zone, in the future, or when the customer writes (`until` left out).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from inbox_actors.conversations import conversation
from inbox_actors.conversations.conversation_protocol import KeyReservation
from inbox_actors.domain.phones import phone_or_none
from inbox_actors.labels.label_set import MAX_NAME as MAX_LABEL_NAME
from inbox_actors.platform.payloads import MAX_TEXT
from inbox_actors.reporting.thread import one_message
from inbox_actors.use_cases import chats, keyed_sends, mentions, permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import BIGINT_MAX, ChatPhone, IdempotencyKey, Reason, Text
from inbox_actors.use_cases.outcomes import Done, Outcome, Refused
from inbox_actors.use_cases.outcomes import Reason as Why
from inbox_actors.use_cases.use_case import Kind, UseCase, rule

# -- arguments -----------------------------------------------------------------------------------------------


class Note(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: ChatPhone
    text: Text
    idempotency_key: IdempotencyKey | None = None


class ChatLabel(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: ChatPhone
    label: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_LABEL_NAME)]


class ChatLabelOff(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: ChatPhone
    label: str
    """Any text: a label the chat lacks (or no label's name at all) changes nothing."""


class RouteChat(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: ChatPhone
    team_id: Annotated[int, msgspec.Meta(
        ge=1, le=BIGINT_MAX, description="The team whose queue the chat goes to; null: the workspace's own queue.",
        extra=rule("invalid_team", "team_id is a team's id, or null for the workspace's own queue."))] | None
    reason: Reason | None = None


class SnoozeChat(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: ChatPhone
    until: Annotated[datetime, msgspec.Meta(
        tz=True, extra=rule("invalid_until", "until must be a time with its zone (ISO 8601), in the future; "
                                             "leave it out to snooze until the customer writes."))] | None = None


# -- handlers ------------------------------------------------------------------------------------------------


async def _add_note(deps: UseCaseDeps, caller: Caller, a: Note) -> Outcome:
    """The caller's member writes an internal note in the chat's thread (type `note`; never sent), with the members
    it mentions; once per key of theirs, when it carries one."""
    text = a.text.strip()
    if not text:
        return Refused(Why.INVALID, f"text must be 1 to {MAX_TEXT:,} characters.", 400, "invalid_text")
    phone = phone_or_none(a.phone)
    if phone is None:
        return chats.no_such_chat()

    async def once(reservation: KeyReservation | None) -> Outcome:
        named = await mentions.found_in(deps, caller.workspace_id, text)
        reply = await conversation.ask_conversation(deps.actors, caller.workspace_id, phone, conversation.AddNote(
            member_id=caller.member_id, author=caller.author, text=text, restricted_to=caller.restricted_to,
            reservation=reservation, mentions=named))
        if (refused := chats.refusal_of(reply)) is not None:
            return refused
        assert isinstance(reply, conversation.NoteAdded)
        return await _note(deps, caller, phone, reply.message_id)

    outcome = await keyed_sends.send_once(
        deps, caller.workspace_id, keyed_sends.member_key(caller, ADD_NOTE.name, a.idempotency_key),
        keyed_sends.fingerprint(ADD_NOTE.name, {"phone": phone, "text": text}), once)
    if isinstance(outcome, Done) and isinstance(outcome.data, keyed_sends.Replayed):
        return await _note(deps, caller, phone, outcome.data.body["note"])
    return outcome


async def _note(deps: UseCaseDeps, caller: Caller, phone: str, message_id: int) -> Outcome:
    note = await one_message(deps.db, caller.workspace_id, phone, message_id)
    return chats.no_such_chat() if note is None else Done(await mentions.with_mentions(deps.db, note))


async def _add_label(deps: UseCaseDeps, caller: Caller, a: ChatLabel) -> Outcome:
    return await _label(deps, caller, a, add=True)


async def _remove_label(deps: UseCaseDeps, caller: Caller, a: ChatLabelOff) -> Outcome:
    """Taking off a label the chat lacks changes nothing."""
    return await _label(deps, caller, a, add=False)


async def _label(deps: UseCaseDeps, caller: Caller, a: ChatLabel | ChatLabelOff, *, add: bool) -> Outcome:
    return await chats.act_on_chat(deps, caller, a.phone, conversation.Label(
        name=a.label.strip(), add=add, by_member=caller.member_id, author=caller.author,
        restricted_to=caller.restricted_to))


async def _snooze(deps: UseCaseDeps, caller: Caller, a: SnoozeChat) -> Outcome:
    """Snooze the chat until `until` (None: until the customer writes); it leaves the open views meanwhile."""
    return await chats.act_on_chat(deps, caller, a.phone, conversation.Snooze(
        until=a.until, by_member=caller.member_id, author=caller.author, restricted_to=caller.restricted_to))


async def _unsnooze(deps: UseCaseDeps, caller: Caller, a: chats.OneChat) -> Outcome:
    return await chats.act_on_chat(deps, caller, a.phone, conversation.Unsnooze(
        by_member=caller.member_id, author=caller.author, restricted_to=caller.restricted_to))


async def _route(deps: UseCaseDeps, caller: Caller, a: RouteChat) -> Outcome:
    """Put the chat in a team's queue (null: the workspace's own); a chat a member holds is released to it."""
    return await chats.act_on_chat(deps, caller, a.phone, conversation.RouteToTeam(
        team_id=a.team_id, by_member=caller.member_id, author=caller.author, reason=a.reason,
        restricted_to=caller.restricted_to))


# -- the declarations ----------------------------------------------------------------------------------------

ADD_NOTE = UseCase("add_note", Note, permissions.CHAT_ACTIONS, Kind.WRITE, _add_note)
ADD_LABEL = UseCase("label_conversation", ChatLabel, permissions.CHAT_ACTIONS, Kind.WRITE, _add_label)
REMOVE_LABEL = UseCase("unlabel_conversation", ChatLabelOff, permissions.CHAT_ACTIONS, Kind.WRITE, _remove_label)
SNOOZE = UseCase("snooze_conversation", SnoozeChat, permissions.CHAT_ACTIONS, Kind.WRITE, _snooze)
UNSNOOZE = UseCase("unsnooze_conversation", chats.OneChat, permissions.CHAT_ACTIONS, Kind.WRITE, _unsnooze)
ROUTE_TO_TEAM = UseCase("route_conversation_to_team", RouteChat, permissions.CHAT_ACTIONS, Kind.WRITE, _route)
