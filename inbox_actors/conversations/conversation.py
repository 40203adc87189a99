"""The conversation actor: one per (workspace, customer phone), the single writer of that chat.

It owns the chat: the contact's creation on first contact, messages, unread counters, views and assignment,
and the delivery statuses that can change the chat (the workspace's status writer, status_writer.py, records
the rest in bulk; both lock the message they judge). Its protocol is conversation_protocol.py (re-exported
here, so callers import from this module); the chat's state lives in one `ChatState` (chat_state.py), which this actor,
its `Sender` (sending.py), its `ChatHandling` (chat_handling.py) and its `CustomerMessages` (customer_messages.py: a
customer's message stored) change only through `ChatState.commit`.
Every change is committed (conversation row version-checked, webhook events appended to the outbox in the same
transaction) before the actor replies. Expected refusals (illegal transition, chat not visible, consent, window)
are reply values; a version conflict or a database failure crashes the actor, whose restart reloads the row.

Sends are recorded through `SendRecords` (send_records.py): pending before the platform is called, then their
outcome; a status for a send whose answer a crash lost settles it there, and the in-doubt sweeper's
`GiveUpInDoubt` gives up one that nothing settled.

The bot speaks after the customer's message is committed and acknowledged: the actor queues a `BotTurn` to
itself, so the platform's webhook is answered without waiting for the bot, and its `BotTurns` (bot_turns.py) lets
the bot think beside the mailbox and takes its answer only if nothing made it stale. A chat activated while its
customer's last word is still unanswered asks its bot again, so a crash loses no turn.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable

from inbox_actors.conversations import events as data
from inbox_actors.conversations.bot import Responder
from inbox_actors.conversations.bot_turns import BotTurns
from inbox_actors.conversations.chat_handling import ChatHandling
from inbox_actors.conversations.chat_state import ChatState, OutboxEvent
from inbox_actors.conversations.conversation_protocol import (
    SNOOZE_CLOCK,
    SNOOZE_CLOCK_KEY,
    AddNote,
    AutoAssign,
    BotAnswered,
    BotTurn,
    BroadcastRecipient,
    Changed,
    Claim,
    CustomerWrote,
    EraseChat,
    Erased,
    GiveUpInDoubt,
    InviteComment,
    Label,
    MarkRead,
    NoteAdded,
    NotVisible,
    OfferSurvey,
    Open,
    Recorded,
    Refused,
    Release,
    Resolve,
    RouteToTeam,
    Send,
    SendOutcome,
    SlaDue,
    Snooze,
    SnoozeDue,
    StatusReported,
    Transfer,
    Unsnooze,
    Wake,
)
from inbox_actors.conversations.customer_messages import CustomerMessages
from inbox_actors.conversations.satisfaction_survey import SatisfactionSurveys
from inbox_actors.conversations.send_records import SendRecords
from inbox_actors.conversations.sending import Sender
from inbox_actors.conversations.workspace_numbers import WorkspaceNumbers
from inbox_actors.domain import conversation_states as states
from inbox_actors.domain import delivery_status, events
from inbox_actors.domain.conversation_states import IllegalTransition, State
from inbox_actors.domain.credit_prices import TemplatePrices
from inbox_actors.domain.text import storable
from inbox_actors.platform.client import PlatformClient
from inbox_actors.platform.payloads import StatusUpdate
from inbox_actors.runtime import Actor, ActorError, ActorKind, Directory, MailboxFull, workspace_in_key
from inbox_actors.runtime.alarm import DueAt
from inbox_actors.runtime.clock import Clock
from persistence.database import Database, Record, UnitOfWork
from persistence.queries import conversations as conversation_queries
from persistence.queries import database_clock
from persistence.queries import erasure as erasure_queries
from persistence.queries import messages as message_queries
from persistence.queries import workspaces as workspace_queries

__all__ = [
    "KIND", "AddNote", "AutoAssign", "BotTurn", "BroadcastRecipient", "Changed", "Claim", "Conversation",
    "ConversationDeps",
    "CustomerWrote", "EraseChat", "Erased", "GiveUpInDoubt", "Label", "MarkRead", "NoteAdded", "NotVisible", "Open",
    "Recorded", "Refused", "Release", "Resolve", "RouteToTeam", "Send", "SendOutcome", "SlaDue", "Snooze", "SnoozeDue",
    "StatusReported", "Transfer", "Unsnooze", "Wake",
    "ask_conversation", "conversation_key", "conversation_kind",
]

log = logging.getLogger("inbox_actors.conversations.conversation")

KIND = "conversation"
# How long a chat a broadcast's message was the last thing for stays in memory once idle (a broadcast to 100,000
# would otherwise keep every chat it reached for the whole idle timeout).
BROADCAST_IDLE_SECONDS = 10.0
# A chat activated with its customer's last word unanswered asks its bot again only if the word is this fresh: an
# answer hours late would be worse than the person the chat's wait brings.
UNANSWERED_WORD_SECONDS = 600.0

# -- the actor -----------------------------------------------------------------------------------------------


@dataclass
class ConversationDeps:
    db: Database
    clock: Clock
    platform: PlatformClient
    responder: Responder | None
    # Sends a second this service allows itself per business number (the platform's limit; the send pacer).
    sends_per_second: int = 80
    # Credits a template send costs by category; all zero: sends are not metered (domain/credit_prices.py).
    template_prices: TemplatePrices = TemplatePrices()
    # Told every new SLA deadline a chat commits (the SLA clock's `deadline_set`); None: nobody keeps time.
    on_new_deadline: Callable[[datetime], None] | None = None
    # Each workspace's business number, shared by its chats (read once per process).
    numbers: WorkspaceNumbers = field(default_factory=WorkspaceNumbers)
    # Credits one AI reply costs (0: not metered; docs/ai-agent.md#costs-and-credits).
    ai_reply_credits: int = 0
    # Told (the system, the workspace) when a chat begins waiting for a person or its holder lets it go: the
    # assignment desk's `look` (team/assignment_desk.py); None: nobody hands chats out.
    on_queue_moved: Callable[[Directory, int], None] | None = None


class Conversation(Actor):
    def __init__(self, key: str, deps: ConversationDeps) -> None:
        super().__init__(key)
        self.deps, self.db, self.clock = deps, deps.db, deps.clock
        self.chat = ChatState(key, deps.db, deps.clock, deps.on_new_deadline, deps.numbers)
        self.workspace_id, self.phone = self.chat.workspace_id, self.chat.phone
        self.team = ChatHandling(self.chat)
        self.sends = SendRecords(self.chat)
        self._routed_since = False   # a waiting chat moved to another queue: the desk looks again

    async def on_start(self) -> None:
        # The runtime has given the actor its system (`self.actors`) and its own ref by now.
        self.sender = Sender(self.chat, self.sends, self.team, self.deps, self.actors)
        self.bot = BotTurns(self.chat, self.deps.responder, self.sender, self)
        self.surveys = SatisfactionSurveys(self.chat, self.sender, self)
        self.customer_messages = CustomerMessages(self.chat, self.surveys, self.bot, self.deps.responder)
        await self.chat.load()
        row = self.chat.row
        if row is not None and row["waiting_since"] is not None and states.bot_may_answer(self.chat.state) \
                and self.deps.responder is not None and row["last_customer_message_at"] is not None:
            # A time rule across nodes, so PostgreSQL's clock: a node's own, skewed, would answer hours late or never.
            age = await database_clock.now(self.db) - row["last_customer_message_at"]
            if age.total_seconds() < UNANSWERED_WORD_SECONDS:
                self.bot.queue()   # a turn an earlier life of the chat may have lost; a stale one does nothing

    async def receive(self, message: object) -> object:
        before = self._queue_place()
        try:
            return await self._receive(message)
        finally:
            self.bot.stop_if_taken()
            self._tell_desk_if_moved(before)

    def _queue_place(self) -> tuple[bool, int | None]:
        """Whether the chat waits in a queue for a person now, and who holds it."""
        row = self.chat.row
        if row is None:
            return False, None
        waits = row["state"] == State.HANDOFF_PENDING.value and row["assigned_to"] is None and not row["snoozed"]
        held_by = row["assigned_to"] if row["state"] == State.HUMAN_ACTIVE.value else None
        return waits, held_by

    def _tell_desk_if_moved(self, before: tuple[bool, int | None]) -> None:
        """The workspace's assignment desk hears of a chat that began waiting (or moved queue) and of a holder
        with one chat fewer: both may let it give a chat now."""
        after = self._queue_place()
        began_waiting = after[0] and (not before[0] or self._routed_since)
        freed = before[1] is not None and after[1] != before[1]
        self._routed_since = False
        if (began_waiting or freed) and self.deps.on_queue_moved is not None:
            self.deps.on_queue_moved(self.actors, self.workspace_id)

    async def _receive(self, message: object) -> object:
        # A broadcast's message is all most of its chats hear: nothing keeps them in memory afterwards.
        self.leaves_soon = isinstance(message, Send) and message.broadcast is not None
        match message:
            case CustomerWrote():
                return await self.customer_messages.store(message.message)
            case StatusReported():
                return await self._status_reported(message.update)
            case BotTurn():
                return await self.bot.turn()
            case BotAnswered():
                return await self.bot.answered(message)
            case Send():
                return await self._send(message)
            case SlaDue():
                return await self._sla_due(message.deadline)
            case SnoozeDue():
                return await self._snooze_due(message.until)
            case GiveUpInDoubt():
                return await self.sends.give_up(message.message_id, send_again=message.send_again)
            case EraseChat():
                return await self._erase()
            case Wake():
                return None
            case AutoAssign():
                return await self.team.auto_assign(message.member_id, message.team_id)
            case OfferSurvey():
                return await self.surveys.offer(message)
            case InviteComment():
                return await self.surveys.invite_comment(message)
        chat = self.chat
        if not await chat.visible(getattr(message, "restricted_to", None)):
            return NotVisible()
        try:
            match message:
                case Claim():
                    return await self.team.assign(states.claim(chat.state, chat.row["assigned_to"], message.member_id),
                                                  by=message.member_id, reason=None, author=message.author)
                case Release():
                    return await self.team.assign(states.release(chat.state, chat.row["assigned_to"]),
                                                  by=message.by_member, reason=message.reason, author=message.author)
                case Transfer():
                    return await self.team.transfer(message.to_member, by=message.by_member, reason=message.reason,
                                                    author=message.author)
                case Resolve():
                    before = chat.row
                    resolved = await self.team.assign(states.resolve(chat.state), by=message.by_member,
                                                      reason=message.reason, author=message.author)
                    self.surveys.resolved(before, message.by_member, chat.row["resolved_at"])
                    return resolved
                case Open():
                    return await self.team.open(message.member_id, via=message.via, author=message.author)
                case MarkRead():
                    return await self.team.mark_read(author=message.author)
                case AddNote():
                    return await self.team.add_note(message.member_id, message.text, author=message.author,
                                                    reservation=message.reservation, mentions=message.mentions)
                case Label():
                    return await self.team.label(message.name, message.add, by=message.by_member,
                                                 author=message.author)
                case Snooze():
                    changed = await self.team.snooze(message.until, by=message.by_member, author=message.author)
                    if message.until is not None and isinstance(changed, Changed):
                        self._tell_snooze_clock(message.until)
                    return changed
                case Unsnooze():
                    return await self.team.unsnooze(by=message.by_member, author=message.author)
                case RouteToTeam():
                    self._routed_since = True
                    return await self.team.route_to_team(message.team_id, by=message.by_member,
                                                         reason=message.reason, author=message.author)
        except IllegalTransition as refusal:
            return Refused(409, "invalid_transition", str(refusal), refusal.state.value)
        raise TypeError(f"conversation cannot handle {type(message).__name__}")

    # -- inbound -------------------------------------------------------------------------------------------

    async def _status_reported(self, update: StatusUpdate) -> Recorded:
        now = self.clock.now()
        chat = self.chat
        async with chat.transaction() as tx:
            # Locked: the status writer (status_writer.py) may judge another status of this message meanwhile.
            message = await message_queries.lock_by_platform_id(tx, self.workspace_id, update.message_id)
            changes: dict[str, Any] = {}
            reported: list[OutboxEvent] = []
            settled = False
            if message is None and update.callback_data is not None:
                # A send whose answer a crash lost: its callback data names it (send_records.py).
                message, changes, reported = await self.sends.settle(tx, update)
                settled = message is not None
            if not settled and (message is None or message["direction"] != "outbound" or chat.row is None
                                or message["conversation_id"] != chat.row["id"]):
                log.info("status %s for a message not sent from chat %s (%s) ignored", update.status, self.key,
                         update.message_id)
                return Recorded(None)
            advances = delivery_status.advances(message["status"], update.status)
            error_text = storable(update.error_title) if update.status == delivery_status.FAILED else None
            new_receipt, moved = await message_queries.record_status(
                tx, message["id"], update.status, update.at, advance=advances, error_code=update.error_code,
                error_text=error_text)
            if moved is not None:
                message = moved
                if update.status != delivery_status.SENT:
                    reported.append(OutboxEvent(events.MESSAGE_STATUS, "platform", data.status_data(
                        self.phone, message, update.status, update.at, update.error_code,
                        storable(update.error_title), now)))
                if delivery_status.reached_phone(update.status):
                    changes.update(await self._answered_by(tx, message))
            elif not settled:
                return Recorded(message["id"], duplicate=not new_receipt)
            await chat.commit(tx, changes, reported, now)
        return Recorded(message["id"])

    async def _answered_by(self, tx: UnitOfWork, message: Record) -> dict[str, Any]:
        """A reply reached the phone: unless the customer has written since it was sent, they no longer wait
        (for a person too, if a person replied). "Since" compares the order the customer's last word and the
        reply were stored, not their timestamps: the platform's clock and ours need not agree."""
        row = self.chat.row
        if row is None or row["waiting_since"] is None and row["waiting_for_person_since"] is None:
            return {}
        if message["broadcast_id"] is not None:
            return {}  # a campaign's message answers nobody
        latest = await message_queries.latest_customer_message(tx, row["id"])
        if latest is not None and latest["id"] > message["id"]:
            return {}
        changes: dict[str, Any] = {"waiting_since": None}
        if message["sender_type"] == "agent":
            changes.update(waiting_for_person_since=None, sla_deadline_at=None)
        return changes

    async def _sla_due(self, deadline: datetime) -> Recorded:
        """Announce the breach of `deadline` once: only while the customer still waits for a person under that
        very deadline (a reply, a resolve or a new wait replaced it otherwise), and once it has passed by
        PostgreSQL's clock, as the SLA clock judged it (never by this node's own, which may run ahead)."""
        row = self.chat.row
        if row is None or row["waiting_for_person_since"] is None or row["sla_deadline_at"] != deadline \
                or row["sla_breach_announced_for"] == deadline:
            return Recorded(None)
        now = await database_clock.now(self.db)
        if now < deadline:
            return Recorded(None)
        async with self.chat.transaction() as tx:
            names = await conversation_queries.member_names(tx, [row["assigned_to"]] if row["assigned_to"] else [])
            policy = await workspace_queries.find_deadline_policy(tx, self.workspace_id)
            await conversation_queries.record_sla_breach(tx, self.workspace_id, row["id"], deadline,
                                                         row["assigned_to"], now)
            breached = OutboxEvent(events.SLA_BREACHED, "system", data.sla_breach_data(
                self.phone, row, policy["sla_seconds"], names, now))
            await self.chat.commit(tx, {"sla_breach_announced_for": deadline}, [breached], now)
        return Recorded(None)

    async def _snooze_due(self, until: datetime) -> Recorded:
        """End the snooze until `until` if the chat is still snoozed until then and that time has come by
        PostgreSQL's clock (the snooze clock's; never by this node's own)."""
        row = self.chat.row
        if row is not None and row["snoozed"] and row["snoozed_until"] == until \
                and await database_clock.now(self.db) >= until:
            await self.team.unsnooze(by=None, author="system")
        return Recorded(None)

    def _tell_snooze_clock(self, until: datetime) -> None:
        """The snooze clock must not oversleep this end; a full mailbox means it is about to look anyway."""
        try:
            self.actors.ref(SNOOZE_CLOCK, SNOOZE_CLOCK_KEY).tell_nowait(DueAt(until))
        except (MailboxFull, ActorError):
            pass

    async def _erase(self) -> Erased:
        """Delete the chat and everything of it (the contact's deletion, contact_erasure.py)."""
        async with self.chat.transaction() as tx:
            messages = await erasure_queries.erase_chat(tx, self.workspace_id, self.phone)
        self.chat.forget()
        return Erased(messages)

    # -- sending -------------------------------------------------------------------------------------------

    async def _send(self, request: Send) -> SendOutcome | NotVisible | Refused:
        chat = self.chat
        if request.restricted_to is not None and not await chat.visible(request.restricted_to):
            return NotVisible()
        if request.sender_type == "agent" and chat.row is None:
            return NotVisible()  # a member replies in a chat; a first message to a number is an API send
        if request.sender_type == "agent" and chat.row is not None:
            if chat.state is State.HUMAN_ACTIVE and chat.row["assigned_to"] != request.actor_id:
                return Refused(409, "invalid_transition", "Another member has claimed this chat; "
                               "it must be transferred before you reply.", chat.state.value)
        return await self.sender.send(request)


def conversation_key(workspace_id: int, phone: str) -> str:
    return f"{workspace_id}:{phone}"


def conversation_kind(deps: ConversationDeps, *, idle_timeout: float = 300.0) -> ActorKind:
    # A send waits on the platform (10 s client timeout) inside the actor, so asks get room beyond that.
    return ActorKind(name=KIND, factory=lambda key: Conversation(key, deps), mailbox_capacity=256,
                     idle_timeout=idle_timeout, brief_idle_timeout=min(BROADCAST_IDLE_SECONDS, idle_timeout),
                     ask_timeout=30.0, vital=True, workspace_of=workspace_in_key)


async def ask_conversation(actors: Directory, workspace_id: int, phone: str, message: object) -> object:
    """Ask the chat's actor; its reply (one of the reply structs of conversation_protocol.py, or a SendOutcome)."""
    return await actors.ref(KIND, conversation_key(workspace_id, phone)).ask(message)
