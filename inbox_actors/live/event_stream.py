"""A caller's view of the workspace's event stream: the chat events a person's screen reacts to, from a position on.

A screen is told which chat changed and how (the event's name and the chat's phone), never the change itself: it
reads the chat again through the same reads and permissions as any page. An assignment also says to whom, by whom
and why (`Assignment`), so that the member a chat was handed or transferred to is told at once. Besides a chat's
webhook events it hears `chat_changed` (a note, a label, a snooze, unread cleared), which only screens read; a
note's that mentions the screen's own member says so (`Mentioned`: which note, by whom), so that they are told at
once, and no other screen hears whom a note mentions.

An outbox id is given when the row is written, but transactions commit in their own order, so an event with a
lower id can appear after one with a higher id was read; each read therefore looks back OVERLAP ids and leaves out
the ones this stream already passed on (the screen ignores an id it has seen too, so a reconnect's overlap is
harmless).
"""

from __future__ import annotations

from collections import deque

import msgspec

from inbox_actors.domain import events
from inbox_actors.use_cases.caller import Caller
from persistence.database import Database
from persistence.queries import outbox
from persistence.queries.live_events import chat_events_after, newest_event_id

CHAT_EVENTS = [events.MESSAGE_RECEIVED, events.MESSAGE_SENT, events.MESSAGE_STATUS, events.HANDOFF,
               events.CONVERSATION_ASSIGNED, events.CONVERSATION_RESOLVED, events.CONVERSATION_SEEN,
               events.CHAT_CHANGED]
# The screens-only events are written finished, so that no webhook delivers them: the outbox must know them.
assert set(events.SCREEN_ONLY_EVENTS) <= set(outbox.SCREEN_ONLY_EVENTS), "a screens-only event the outbox delivers"
OVERLAP = 500
READ_LIMIT = 200
_REMEMBERED = 4 * OVERLAP


class Assignment(msgspec.Struct, frozen=True):
    """A `conversation_assigned` event's who and why, so that a screen can tell its member a chat was handed to
    them (the app's own stream data, not the webhook's payload)."""

    event: str
    """claimed, released or transferred."""
    to: int | None
    by: int | None
    by_name: str | None
    reason: str | None


class Mentioned(msgspec.Struct, frozen=True):
    """A note's `chat_changed` that mentions the screen's member: the note, and who wrote it."""

    note: int
    by: int | None
    by_name: str | None


class LiveEvent(msgspec.Struct, frozen=True):
    id: int
    event: str
    phone: str | None
    assignment: Assignment | None = None
    mentioned: Mentioned | None = None


async def stream_position(db: Database) -> int:
    """Where the stream stands now. A page reads it before it reads what it shows and hands it to its script, whose
    stream then starts there: an event committed between the page's reads and the stream's start still reaches it
    (a stream started "from now" would begin after it, and the screen would stay stale until the next event)."""
    return await newest_event_id(db)


class EventStream:
    """One screen's walk along the stream; `position` is the Last-Event-ID to resume from (None: from now)."""

    def __init__(self, db: Database, caller: Caller, position: int | None) -> None:
        self._db = db
        self._caller = caller
        self._position = position
        self._passed: deque[int] = deque(maxlen=_REMEMBERED)
        self._passed_set: set[int] = set()

    async def start(self) -> int:
        """Where the walk stands (reading the stream's end when it starts from now)."""
        if self._position is None:
            self._position = await newest_event_id(self._db)
        return self._position

    async def read(self) -> list[LiveEvent]:
        """The events not passed on yet, oldest first. On the first read, the looked-back ones at or before the
        starting position are taken as already known to the screen: remembered, not passed on."""
        position = await self.start()
        first = not self._passed
        rows = await chat_events_after(self._db, self._caller.workspace_id, max(0, position - OVERLAP), CHAT_EVENTS,
                                       self._caller.restricted_to, READ_LIMIT + OVERLAP, self._caller.member_id)
        fresh: list[LiveEvent] = []
        for row in rows:
            if row["id"] in self._passed_set:
                continue
            self._remember(row["id"])
            if not first or row["id"] > position:
                fresh.append(LiveEvent(row["id"], row["event"], row["phone"], _assignment(row), _mentioned(row)))
        if rows:
            self._position = max(position, rows[-1]["id"])
        return fresh

    def _remember(self, event_id: int) -> None:
        if len(self._passed) == self._passed.maxlen:
            self._passed_set.discard(self._passed[0])
        self._passed.append(event_id)
        self._passed_set.add(event_id)


def _assignment(row) -> Assignment | None:
    if row["assignment"] is None:
        return None
    return Assignment(row["assignment"], row["to_member"], row["by_member"], row["by_name"], row["reason"])


def _mentioned(row) -> Mentioned | None:
    if row["mentioned_note"] is None:
        return None
    return Mentioned(row["mentioned_note"], row["by_member"], row["by_name"])
