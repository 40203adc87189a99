"""Mentions of members in internal notes, as use cases, and the reads the notes' answers and the thread share.

A note's mentions are found in its text when it is written (`found_in`, by the rules of `team/mentions.py`) and
stored with it by the chat's actor (`chat_organising.ADD_NOTE`); each member it names but the writer is told on
their open screens (`live/event_stream.py`). Here:

- `list_my_mentions`: the notes that mention the caller's member, newest first (the newest MAX_LISTED), with how
  many they have not seen yet; only in chats they may see; `count_my_unseen_mentions`: that count alone;
- `mark_mentions_seen`: the caller's mentions in one chat (or all) seen; opening the chat does the same;
- `list_mentionable_members`: the workspace's active members with what the agent inbox's picker inserts for each.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

import msgspec

from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.reporting.chat_lookup import find_chat
from inbox_actors.reporting.thread import Message
from inbox_actors.team.mentions import Directory, Found, Member, pieces
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import ChatPhone
from inbox_actors.use_cases.outcomes import Done, Outcome
from inbox_actors.use_cases.team import NoArguments
from inbox_actors.use_cases.use_case import Kind, UseCase
from persistence.database import Database
from persistence.queries import note_mentions as queries

MAX_LISTED = 50


class NotePiece(msgspec.Struct, frozen=True):
    """A piece of a note's text: as written, and the member it mentions, if it is a mention."""

    text: str
    member: MemberRef | None = None


class NoteMessage(Message, frozen=True, kw_only=True):
    """A note as the thread shows it, with the members it mentions (in the order first named)."""

    mentions: list[MemberRef]


class Mention(msgspec.Struct, frozen=True):
    """A note that mentions the caller's member."""

    note_id: int
    phone: str
    contact_name: str
    by: MemberRef | None
    at: datetime
    seen: bool
    pieces: list[NotePiece]


class MyMentions(msgspec.Struct, frozen=True):
    unseen: int
    """How many of their mentions the member has not seen yet (in chats they may see)."""
    data: list[Mention]


class Mentionable(msgspec.Struct, frozen=True):
    user_id: int
    name: str
    insert: str
    """What the picker puts in the note for them: `@Name`, or `@[Name](member:ID)` when the name alone would not
    name them."""


class MentionsQuery(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    unseen_only: bool = False


class MentionsSeen(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: ChatPhone | None = None
    """One chat's mentions; left out, every chat's."""


# -- the reads notes and the thread share ---------------------------------------------------------------------


async def _directory(db: Database, workspace_id: int) -> Directory:
    return Directory([Member(row["id"], row["name"], row["email"])
                      for row in await queries.mentionable_members(db, workspace_id)])


async def found_in(deps: UseCaseDeps, workspace_id: int, text: str) -> tuple[Found, ...]:
    """The workspace's active members `text` names (none without an "@": no read)."""
    if "@" not in text:
        return ()
    return tuple((await _directory(deps.db, workspace_id)).find(text))


async def _stored(db: Database, note_ids: list[int]) -> dict[int, list[tuple[int, int, MemberRef]]]:
    """Each note's stored mentions: (start, end, member) for every place, in the text's order."""
    places: dict[int, list[tuple[int, int, MemberRef]]] = defaultdict(list)
    for row in await queries.of_notes(db, note_ids):
        member = MemberRef(row["member_id"], row["name"])
        spans = row["spans"]
        places[row["message_id"]] += [(spans[n], spans[n + 1], member) for n in range(0, len(spans), 2)]
    for found in places.values():
        found.sort(key=lambda place: place[:2])
    return places


def _pieces(text: str, places: list[tuple[int, int, MemberRef]]) -> list[NotePiece]:
    members = {member.user_id: member for _, _, member in places}
    return [NotePiece(piece.text, members.get(piece.member_id) if piece.member_id is not None else None)
            for piece in pieces(text, [(start, end, member.user_id) for start, end, member in places])]


async def with_mentions(db: Database, note: Message) -> NoteMessage:
    """The note with the members it mentions."""
    named: dict[int, MemberRef] = {}
    for _, _, member in (await _stored(db, [note.id])).get(note.id, []):
        named.setdefault(member.user_id, member)
    return NoteMessage(**msgspec.structs.asdict(note), mentions=list(named.values()))


async def note_pieces(db: Database, messages: list[Message]) -> dict[int, list[NotePiece]]:
    """The notes among `messages` that mention anyone, each as its text in pieces, by message id."""
    notes = {message.id: message for message in messages if message.type == "note" and message.text}
    stored = await _stored(db, list(notes)) if notes else {}
    return {note_id: _pieces(notes[note_id].text or "", places) for note_id, places in stored.items()}


# -- handlers ------------------------------------------------------------------------------------------------


async def _my_mentions(deps: UseCaseDeps, caller: Caller, a: MentionsQuery) -> Outcome:
    rows = await queries.of_member(deps.db, caller.workspace_id, caller.member_id, caller.restricted_to,
                                   unseen_only=a.unseen_only, limit=MAX_LISTED)
    stored = await _stored(deps.db, [row["message_id"] for row in rows])
    unseen = await queries.unseen_count(deps.db, caller.workspace_id, caller.member_id, caller.restricted_to)
    return Done(MyMentions(unseen=unseen, data=[Mention(
        note_id=row["message_id"], phone=row["phone"], contact_name=row["contact_name"],
        by=MemberRef(row["actor_id"], row["actor_name"]) if row["actor_id"] else None, at=row["mentioned_at"],
        seen=row["seen_at"] is not None, pieces=_pieces(row["text"] or "", stored.get(row["message_id"], [])))
        for row in rows]))


async def _unseen(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done({"unseen": await queries.unseen_count(deps.db, caller.workspace_id, caller.member_id,
                                                      caller.restricted_to)})


async def _mark_seen(deps: UseCaseDeps, caller: Caller, a: MentionsSeen) -> Outcome:
    """The caller's mentions in the chat (one they may see) or in every chat, seen now."""
    chat_id = None
    if a.phone is not None:
        _, chat = await find_chat(deps.db, caller.workspace_id, a.phone, caller.restricted_to)
        chat_id = chat["id"]
    seen = await queries.mark_seen(deps.db, caller.workspace_id, caller.member_id, chat_id, deps.clock.now())
    return Done({"seen": seen})


async def _mentionable(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    directory = await _directory(deps.db, caller.workspace_id)
    return Done([Mentionable(member.member_id, member.name, directory.handle(member))
                 for member in directory.by_id.values()])


# -- the declarations ----------------------------------------------------------------------------------------

MY_MENTIONS = UseCase("list_my_mentions", MentionsQuery, permissions.CHAT_CONTENT, Kind.READ, _my_mentions)
UNSEEN_MENTIONS = UseCase("count_my_unseen_mentions", NoArguments, permissions.CHAT_CONTENT, Kind.READ, _unseen)
MARK_MENTIONS_SEEN = UseCase("mark_mentions_seen", MentionsSeen, permissions.CHAT_ACTIONS, Kind.WRITE, _mark_seen)
MENTIONABLE = UseCase("list_mentionable_members", NoArguments, permissions.CHAT_ACTIONS, Kind.READ, _mentionable)
