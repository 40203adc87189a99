"""The status writer: one actor per workspace that records the platform's delivery statuses in bulk.

A send draws about three statuses (sent, delivered, read), and the platform posts them in envelopes of many. One
by one through each chat's actor they cost a transaction each; here every envelope queued for the workspace is
written in one transaction (group commit): the messages they name are locked and read, each status is judged by
the rule that statuses only move forwards (`delivery_status.advances`), and the receipts, the messages' new
statuses and the `message_status` events are written in one statement, which commits.

Only a status that cannot touch a conversation row is written here. A status is left to its chat's actor
(`StatusReported`, answered in `Written.for_chats`) when
- its message is not found by its platform id but by its callback data: a send whose outcome a crash lost, which
  the chat settles (send_records.py);
- it says the message reached the phone while the chat waits for an answer: the chat may stop waiting
  (`Conversation._answered_by`);
- an earlier status of the same message in the batch was left to the chat, so a message's statuses keep their
  order.
A status for a message the workspace never sent (or an inbound one) is dropped with a log line, as the chat's
actor would. The rows are locked (`FOR UPDATE`) so the chat's actor, which locks them too before it judges a
status, never writes a status back over a later one.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import msgspec

from inbox_actors.conversations import events as data
from inbox_actors.conversations.send_callback import message_id_of
from inbox_actors.domain import delivery_status, events
from inbox_actors.domain.text import storable
from inbox_actors.platform.payloads import StatusUpdate
from inbox_actors.runtime import Actor, ActorKind, Directory, workspace_in_key
from inbox_actors.runtime.clock import Clock
from persistence.database import Database, Record
from persistence.queries import messages as message_queries

log = logging.getLogger("inbox_actors.conversations.status_writer")

KIND = "status_writer"
# Envelopes written in one transaction at most; their statuses are bounded by the platform's envelope size.
BATCH_LIMIT = 32
PLATFORM = "platform"  # the events' actor


class WriteStatuses(msgspec.Struct, frozen=True):
    """The statuses of one envelope for the workspace, in the order the platform sent them."""

    statuses: tuple[StatusUpdate, ...]


class Written(msgspec.Struct, frozen=True):
    """What the writer left to the chats: (chat phone, status) in order; each goes to that chat's actor."""

    for_chats: tuple[tuple[str, StatusUpdate], ...] = ()
    recorded: int = 0
    dropped: int = 0


@dataclass
class _Plan:
    """The batch's writes, judged status by status against the messages as locked."""

    receipts: list[tuple[int, str, object]] = field(default_factory=list)
    moves: dict[int, tuple[str, object, int | None, str | None]] = field(default_factory=dict)
    emitted: list[tuple[str, str, dict, str]] = field(default_factory=list)


class StatusWriter(Actor):
    def __init__(self, key: str, db: Database, clock: Clock) -> None:
        super().__init__(key)
        self.workspace_id = int(key)
        self._db, self._clock = db, clock

    async def receive(self, message: object) -> Written:
        return (await self.receive_batch([message]))[0]

    async def receive_batch(self, messages: list[object]) -> list[Written]:
        for message in messages:
            if not isinstance(message, WriteStatuses):
                raise TypeError(f"status writer cannot handle {type(message).__name__}")
        statuses = [status for message in messages for status in message.statuses]
        if not statuses:
            return [Written() for _ in messages]
        callback_ids = [i for i in (message_id_of(s.callback_data) for s in statuses) if i is not None]
        now = self._clock.now()
        async with self._db.transaction() as tx:
            rows = await message_queries.lock_for_statuses(tx, self.workspace_id, [s.message_id for s in statuses],
                                                           callback_ids)
            by_platform_id = {row["platform_message_id"]: row for row in rows if row["platform_message_id"]}
            by_id = {row["id"]: row for row in rows}
            plan = _Plan()
            current = {row["id"]: row["status"] for row in rows}
            left_to_chat: set[int] = set()
            answers = [self._judge(message.statuses, by_platform_id, by_id, current, left_to_chat, plan, now)
                       for message in messages]
            if plan.receipts:
                await message_queries.record_statuses(tx, plan.receipts, [(i, *move) for i, move in plan.moves.items()],
                                                      workspace_id=self.workspace_id, events=plan.emitted)
        return answers

    def _judge(self, statuses: Sequence[StatusUpdate], by_platform_id: dict[str, Record], by_id: dict[int, Record],
               current: dict[int, str], left_to_chat: set[int], plan: _Plan, now) -> Written:
        for_chats: list[tuple[str, StatusUpdate]] = []
        recorded = dropped = 0
        for status in statuses:
            row = by_platform_id.get(status.message_id)
            if row is None:
                row = by_id.get(message_id_of(status.callback_data) or 0)
                if row is not None and row["direction"] == "outbound" and row["phone"] is not None:
                    left_to_chat.add(row["id"])      # a send in doubt: the chat settles it
                    for_chats.append((row["phone"], status))
                    continue
                log.info("status %s for a message workspace %s did not send (%s) dropped", status.status,
                         self.workspace_id, status.message_id)
                dropped += 1
                continue
            if row["direction"] != "outbound" or row["phone"] is None:
                log.info("status %s for a message not sent by workspace %s (%s) dropped", status.status,
                         self.workspace_id, status.message_id)
                dropped += 1
                continue
            if row["id"] in left_to_chat or (row["chat_waiting"] and delivery_status.reached_phone(status.status)):
                left_to_chat.add(row["id"])
                for_chats.append((row["phone"], status))
                continue
            recorded += 1
            plan.receipts.append((row["id"], status.status, status.at))
            if not delivery_status.advances(current[row["id"]], status.status):
                continue
            current[row["id"]] = status.status
            # As one status after another would leave it: the last status and time, errors kept once known.
            error_text = storable(status.error_title) if status.status == delivery_status.FAILED else None
            earlier = plan.moves.get(row["id"], (None, None, None, None))
            plan.moves[row["id"]] = (status.status, status.at, status.error_code if status.error_code is not None
                                     else earlier[2], error_text if error_text is not None else earlier[3])
            if status.status != delivery_status.SENT:
                plan.emitted.append((events.MESSAGE_STATUS, PLATFORM, data.status_data(
                    row["phone"], row, status.status, status.at, status.error_code, storable(status.error_title),
                    now), events.new_correlation_id()))
        return Written(for_chats=tuple(for_chats), recorded=recorded, dropped=dropped)


def status_writer_kind(db: Database, clock: Clock) -> ActorKind:
    # Envelopes of one workspace queue here while a batch is written; the route waits for room, never memory.
    return ActorKind(name=KIND, factory=lambda key: StatusWriter(key, db, clock), mailbox_capacity=256,
                     batch_limit=BATCH_LIMIT, idle_timeout=300.0, ask_timeout=30.0, workspace_of=workspace_in_key)


async def write_statuses(actors: Directory, workspace_id: int, statuses: Sequence[StatusUpdate]) -> Written:
    """Record the statuses the workspace's chats need not see; what they must is answered in `for_chats`."""
    if not statuses:
        return Written()
    return await actors.ref(KIND, str(workspace_id)).ask(WriteStatuses(tuple(statuses)))
