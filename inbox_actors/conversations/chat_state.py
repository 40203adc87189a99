"""A chat's state in one home: its workspace's business number and its conversation row, and the one way to
change them.

The conversation actor, its `Sender` and its `ChatHandling` read the row here and write it only through a
unit of work:

    async with chat.transaction() as tx:
        ...                                              # messages, receipts, views, assignment events
        await chat.commit(tx, changes, [OutboxEvent(...)], now)

`commit` writes the changes only if the row is still at the version it was read at
(`update_conversation`; a `VersionConflict` crashes the actor, whose restart reloads the row), and appends
the events to the workspace's outbox, in one statement that commits the transaction: it is the block's last. A chat
with no row yet is made by that statement (`new_chat`), its contact too. The written row becomes the chat's row
only once the transaction has committed, so a write that rolled back (a crash, a lost connection the sender
retries) leaves the chat as PostgreSQL has it.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any, AsyncIterator, Callable, Mapping, Sequence

import msgspec

from inbox_actors.contacts.events import contact_event_data
from inbox_actors.conversations.workspace_numbers import WorkspaceNumbers
from inbox_actors.domain import events
from inbox_actors.domain.business_hours import parse_business_hours, sla_deadline
from inbox_actors.domain.conversation_states import State
from inbox_actors.runtime.clock import Clock
from persistence.database import Database, Record, UnitOfWork
from persistence.queries import chat_visibility, database_clock, outbox
from persistence.queries import contacts as contact_queries
from persistence.queries import conversations as conversation_queries
from persistence.queries import messages as message_queries
from persistence.queries import workspaces as workspace_queries


class OutboxEvent(msgspec.Struct, frozen=True):
    """One event for the workspace's outbox: its name, the envelope's actor, its data (conversations/events.py).
    Everyone who follows the workspace reads the outbox: webhook endpoints, connector hooks, and people's screens
    (`live/event_stream.py`); its table keeps the name it was born with, `webhook_outbox`."""

    name: str
    author: str
    data: dict[str, Any]


class NewChat(msgspec.Struct, frozen=True):
    """Who a chat's first commit makes it for, when it has no row yet: the customer's profile name for its contact
    (empty: none known), and the envelope's actor of `contact_created` (the customer, or the key that sent)."""

    profile_name: str
    author: str


class ChatState:
    """The state of the chat with `phone` in workspace `workspace_id` (the actor's key, "workspace:phone")."""

    def __init__(self, key: str, db: Database, clock: Clock,
                 on_new_deadline: Callable[[datetime], None] | None = None,
                 numbers: WorkspaceNumbers | None = None) -> None:
        workspace, _, phone = key.partition(":")
        self.key, self.workspace_id, self.phone = key, int(workspace), phone
        self.db, self.clock = db, clock
        # Told each committed SLA deadline that is new (the SLA clock, so it wakes for it in time).
        self._on_new_deadline = on_new_deadline
        self._numbers = numbers if numbers is not None else WorkspaceNumbers()
        self._phone_number_id: str | None = None
        self._row: Record | None = None
        self._open: UnitOfWork | None = None       # the unit of work under way, if any
        self._written: Record | None = None        # the row as written in it, until it commits
        # Events of the unit of work not yet in the outbox; an empty tuple between units (no list per idle chat).
        self._unsent: list[OutboxEvent] | tuple[()] = ()

    async def load(self) -> None:
        """Read the row (none until the chat's first message), and the workspace's business number unless this
        process knows it already (workspace_numbers.py): then both on one connection in one crossing."""
        number = self._numbers.get(self.workspace_id)
        if number is not None:
            self._row = await conversation_queries.find_conversation(self.db, self.workspace_id, self.phone)
            self._phone_number_id = number
            return
        workspace, row = await self.db.fetchrow_each([
            workspace_queries.workspace_number_query(self.workspace_id),
            conversation_queries.conversation_query(self.workspace_id, self.phone)])
        if workspace is None:
            raise LookupError(f"no workspace {self.workspace_id}")
        self._phone_number_id, self._row = self._numbers.learn(workspace), row

    # -- reading -------------------------------------------------------------------------------------------

    @property
    def phone_number_id(self) -> str:
        """The workspace's business number, which the chat's sends go from: all the chat needs of its workspace
        (the SLA policy is read when a wait starts)."""
        assert self._phone_number_id is not None, "ChatState.load() first"
        return self._phone_number_id

    @property
    def row(self) -> Record | None:
        """The conversation row as last committed; None while the chat does not exist."""
        return self._row

    @property
    def row_or_new(self) -> Mapping[str, Any]:
        """The row as last committed, or a new chat's values (NEW_CONVERSATION) while it has none: what a change
        is computed from."""
        return self._row if self._row is not None else conversation_queries.NEW_CONVERSATION

    @property
    def state(self) -> State:
        return State(self._row["state"]) if self._row is not None else State.AI_ONLY

    def forget(self) -> None:
        """The chat was erased: none, until a first message makes it again."""
        self._row = None

    async def visible(self, restricted_to: int | None) -> bool:
        """Whether the chat exists for the caller: any chat (None), or one a member limited to assigned chats may
        see (chat_visibility.py; a read only for a chat waiting in a team's queue)."""
        return self._row is not None and await chat_visibility.may_see(self.db, self._row, restricted_to)

    async def waiting_for_person(self, q: Database | UnitOfWork, since: datetime | None) -> dict[str, Any]:
        """The changes that start the customer's wait for a person, and its SLA deadline, at `since` (a customer's
        message: the platform's time), None: now by PostgreSQL's clock (a hand-off, a claim from the bot), which
        the SLA clock judges the deadline by, so no node's own clock moves it. By the policy as it is now (read,
        not cached, so a policy saved a moment ago applies; see team/sla.py)."""
        if since is None:
            since = await database_clock.now(q)
        policy = await workspace_queries.find_deadline_policy(q, self.workspace_id)
        sla = policy["sla_seconds"]
        hours = parse_business_hours(msgspec.json.decode(policy["sla_business_hours"])) \
            if policy["sla_business_hours"] is not None else None
        deadline = sla_deadline(since, sla, hours) if sla else None
        return {"waiting_for_person_since": since, "sla_deadline_at": deadline}

    # -- writing -------------------------------------------------------------------------------------------

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[UnitOfWork]:
        """One unit of work on the chat; the row `ensure_chat` or `commit` wrote in it replaces the chat's row
        once it has committed, and not before (`commit` commits: a block that fails after it keeps its write)."""
        if self._open is not None:
            raise RuntimeError(f"chat {self.key}: a transaction is already under way")
        try:
            async with self.db.transaction() as tx:
                self._open, self._written, self._unsent = tx, None, []
                try:
                    yield tx
                    await self._flush(tx, ())  # events of a block that ended without commit()
                finally:
                    if tx.committed:   # by commit(): it stands even if the block failed after it
                        self._adopt_written()
            self._adopt_written()
        finally:
            self._open = self._written = None
            self._unsent = ()

    def _adopt_written(self) -> None:
        """The unit of work committed: the row it wrote is the chat's (and a new SLA deadline is told)."""
        if self._written is None:
            return
        before, self._row, self._written = self._row, self._written, None
        deadline = self._row["sla_deadline_at"]
        if deadline is not None and self._on_new_deadline is not None \
                and (before is None or before["sla_deadline_at"] != deadline):
            self._on_new_deadline(deadline)

    async def ensure_chat(self, tx: UnitOfWork, *, profile_name: str, at: datetime, author: str) -> Record:
        """The chat's row, creating the contact (first contact) and the conversation as needed; `author` is
        whoever made first contact (the customer, or the key that sent)."""
        row = self._current(tx)
        if row is not None:
            return row
        first = await conversation_queries.insert_first_contact(tx, workspace_id=self.workspace_id, phone=self.phone,
                                                                name=profile_name, at=at)
        if first is None:   # the contact was made meanwhile by another transaction: read it, then make the chat
            contact, created = await contact_queries.insert_contact_if_absent(tx, self.workspace_id, self.phone,
                                                                              profile_name)
            conversation = await conversation_queries.insert_conversation(
                tx, workspace_id=self.workspace_id, phone=self.phone, contact_id=contact["id"], at=at)
        else:
            contact, created, conversation = first
        if created:
            # Appended with the block's other events, in one statement (commit, or the block's end).
            self._unsent.append(OutboxEvent(events.CONTACT_CREATED, author, contact_event_data(contact)))
        self._written = conversation
        return conversation

    async def commit(self, tx: UnitOfWork, changes: dict[str, Any], emitted: Sequence[OutboxEvent],
                     now: datetime, parts: Sequence[conversation_queries.Part] = (),
                     new_chat: NewChat | None = None) -> None:
        """Write `changes` to the row, version-checked, append `emitted` to the outbox and make the writes `parts`
        (a message's outcome: send_records.py; the chat's id is the CTE `chat`'s), in one statement that commits
        `tx`, so it is the block's last. A chat with no row yet is made by that statement (`new_chat`: for whom;
        `changes` then apply to `row_or_new`). No changes: the events alone, the row and its version stay and
        the block commits as it ends. The new row is the chat's once `tx` has committed."""
        row = self._current(tx)
        if not changes:
            if parts:
                raise ValueError(f"chat {self.key}: writes to commit with the row need changes to it")
            await self._flush(tx, emitted)
            return
        if row is None:
            if new_chat is None:
                raise LookupError(f"chat {self.key}: no conversation to change (ensure_chat first)")
            await self._make(tx, changes, emitted, now, parts, new_chat)
            return
        self._written = await conversation_queries.update_conversation(tx, row, changes, now,
                                                                       self._outbox_events(emitted), parts)

    async def _make(self, tx: UnitOfWork, changes: dict[str, Any], emitted: Sequence[OutboxEvent], now: datetime,
                    parts: Sequence[conversation_queries.Part], new_chat: NewChat) -> None:
        """The chat's first commit, its contact and conversation made by the same statement: as the block's only
        statement, one crossing with no BEGIN or COMMIT. Made one by one instead (`ensure_chat`) when that
        statement cannot see the number's contact, which another transaction made meanwhile."""
        contact = contact_queries.first_contact_row(self.workspace_id, self.phone, new_chat.profile_name, now)
        contact_created = OutboxEvent(events.CONTACT_CREATED, new_chat.author, contact_event_data(contact))
        written = await conversation_queries.make_chat(
            tx, workspace_id=self.workspace_id, phone=self.phone, name=new_chat.profile_name, at=now,
            changes=changes, contact_event=_queued(contact_created),
            events=[_queued(event) for event in (*self._unsent, *emitted)], parts=parts)
        if written is None:   # nothing was written
            await self.ensure_chat(tx, profile_name=new_chat.profile_name, at=now, author=new_chat.author)
            await self.commit(tx, changes, emitted, now, parts)
            return
        self._unsent, self._written = [], written

    async def commit_message(self, tx: UnitOfWork, message: dict[str, Any], changes: dict[str, Any],
                             emitted: Sequence[OutboxEvent], now: datetime) -> Record | None:
        """Store a new `message` (its column values) unless the workspace has its platform id already, and commit
        it as `commit` does, in the same statement: `changes` may name its id as NEW_MESSAGE_ID, and an emitted
        event whose data's "id" is None gets it. The stored message; None when it was stored before (nothing
        written, nothing committed: the block may read what was stored, and rolls back as it ends)."""
        row = self._current(tx)
        if row is None:
            raise LookupError(f"chat {self.key}: no conversation to change (ensure_chat first)")
        written = await conversation_queries.update_conversation_with_message(
            tx, row, changes, now,
            lambda first: message_queries.message_insert(message, unless_stored=True, first=first),
            self._outbox_events(emitted))
        if written is None:
            return None
        self._written, stored = written
        return stored

    def _current(self, tx: UnitOfWork) -> Record | None:
        if tx is not self._open:
            raise RuntimeError(f"chat {self.key}: write inside ChatState.transaction()")
        return self._written if self._written is not None else self._row

    async def _flush(self, tx: UnitOfWork, emitted: Sequence[OutboxEvent]) -> None:
        """Append what the block left unsent, then `emitted`, to the outbox in one statement."""
        await outbox.append_events(tx, workspace_id=self.workspace_id, events=self._outbox_events(emitted))

    def _outbox_events(self, emitted: Sequence[OutboxEvent]) -> list[outbox.Event]:
        """What the block left unsent, then `emitted`, as the outbox takes them (and none unsent any more)."""
        pending = [*self._unsent, *emitted]
        self._unsent = []
        return [_queued(event) for event in pending]


def _queued(event: OutboxEvent) -> outbox.Event:
    """`event` as the outbox takes it, with a correlation id of its own."""
    return event.name, event.author, event.data, events.new_correlation_id()
