"""The record of a send, exactly once: its message row before the platform is called, its outcome after, and the
settling of a send whose outcome a crash lost.

1. `write_pending`: one statement commits the outbound message as `pending`, linked to the request's
   Idempotency-Key reservation when it has one (and only while the request still holds it: otherwise nothing
   is written and nothing may be sent). Its id goes to the platform as `biz_opaque_callback_data`.
2. `record_sent` / `record_failure`: the outcome replaces `pending` in one transaction with the chat's counters,
   the `message_sent` event (sent only) and the answer stored on the key, so a retry replays it.
3. A crash between 1 and 2 leaves the message pending ("in doubt"). It is never sent again: a retry with the
   key is answered 409 until the message is settled; the platform's status for it carries the callback data,
   and `settle` then records what 2 would have (the platform's id, counted, `message_sent`, the key's 200).
4. `give_up`: a message still pending IN_DOUBT_LIFETIME after it was committed (no status ever came: the
   platform never got it, or its statuses were lost) is recorded as failed with GIVEN_UP's sentence; a status
   that still comes later settles it all the same.

A pending message is no reply: it is not counted on the chat, has no response time and emits nothing until its
outcome is known. A first send to a number has no chat yet: its pending row names the recipient and gets the
chat only once the platform accepted it, made by the statement that records the outcome (ChatState.commit with
`new_chat`); a refused first send leaves no chat.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any, Awaitable, Callable, Mapping, NamedTuple

import trio

from inbox_actors.conversations import events as data
from inbox_actors.conversations import idempotency_keys
from inbox_actors.conversations.chat_state import ChatState, NewChat, OutboxEvent
from inbox_actors.conversations.conversation_protocol import Recorded, Send, SendOutcome
from inbox_actors.conversations.send_answers import SendVerdict, send_answer
from inbox_actors.conversations.send_callback import message_id_of
from inbox_actors.domain import delivery_status, events
from inbox_actors.platform.payloads import SendRefused, SendRequest, StatusUpdate
from persistence.database import Database, DatabaseUnavailable, Record, UnitOfWork
from persistence.queries import broadcasts as broadcast_queries
from persistence.queries import conversations as conversation_queries
from persistence.queries import credits as credit_queries
from persistence.queries import messages as message_queries

log = logging.getLogger("inbox_actors.conversations.conversation")

# Waits between attempts at recording an outcome while PostgreSQL is unreachable (then it crashes, and the
# message stays pending for a status to settle).
RECORD_RETRY_DELAYS = (0.2, 1.0, 3.0)
# How long a pending message waits for its outcome before it is given up as failed.
IN_DOUBT_LIFETIME = timedelta(hours=6)
# The envelope actor of what a platform status settles (the send's own author is not kept).
PLATFORM = "platform"
GIVEN_UP = SendRefused(
    message="Send outcome unknown",
    code=131000,
    title="Send outcome unknown",
    details="The platform's answer to this send was lost (the service stopped mid-send) and no delivery status "
            f"of it arrived within {int(IN_DOUBT_LIFETIME.total_seconds() // 3600)} hours: it may or may not "
            "have been delivered. It was not sent again.",
    http_status=0,
)


# A broadcast's message whose node stopped before the platform answered, and for which no status came: the broadcast
# sends it again (broadcasts/broadcast.py).
NOT_SENT = SendRefused(
    message="Send outcome unknown",
    code=131000,
    title="Send outcome unknown",
    details="The node sending this broadcast message stopped before the platform answered, and no delivery status of "
            "it arrived while the broadcast waited for one: it was taken as never sent, and sent again.",
    http_status=0,
)


class Charge(NamedTuple):
    """What a send was charged in credits, and the balance that left."""

    amount: int
    balance_after: int


class SendRecords:
    """The rows of the chat's sends (`chat`), written only through its transactions."""

    def __init__(self, chat: ChatState) -> None:
        self._chat = chat

    # -- before the platform ----------------------------------------------------------------------------------

    async def write_pending(self, order: Send, request: SendRequest, channel: str, *, check_consent: bool,
                            charge: int = 0) -> message_queries.PendingInsert:
        """The send's message, committed as pending with its `charge` in credits debited; none (and nothing may be
        sent) when the contact has opted out (`check_consent`: read in the same statement), when the balance does
        not cover the charge, or when its Idempotency-Key reservation is no longer the request's (taken over or
        released: another request owns the key)."""
        chat = self._chat
        row, now = chat.row, chat.clock.now()
        reservation = order.reservation
        broadcast = order.broadcast
        # A broadcast's message is no reply: it answers nobody and is not clocked.
        replies = row is not None and row["waiting_since"] is not None and broadcast is None
        return await message_queries.insert_pending(
            chat.db, answers_latest_of=row["id"] if replies else None,
            claim=(reservation.key, reservation.reserved_at) if reservation is not None else None,
            unless_opted_out=check_consent, charge=charge, model_call=order.model_call,
            broadcast_position=broadcast.position if broadcast is not None else None,
            broadcast_id=broadcast.broadcast_id if broadcast is not None else None,
            idempotency_key=reservation.key if reservation is not None else None,
            conversation_id=row["id"] if row is not None else None,
            waited_from=_waited_from(row, order) if broadcast is None else None,
            sent_at=now, status_at=now, **self._columns(order, request, channel))

    # -- the outcome ------------------------------------------------------------------------------------------

    async def record_sent(self, order: Send, pending: Record, platform_message_id: str, channel: str,
                          credits: Charge | None = None) -> SendOutcome:
        """The platform accepted the send: the message is on its way whatever happens here, so a lost connection
        is retried for a while (and then left pending for the status to settle), never answered as a failure
        the caller would retry. `credits`: what the send was charged, so the alert levels it crossed are told."""
        return await _with_retries(lambda: self._write_sent(order, pending, platform_message_id, channel, credits),
                                   f"chat {self._chat.key}: recording sent message {platform_message_id}")

    async def record_failure(self, order: Send, failure: SendRefused, channel: str,
                             pending: Record | None, *, charged: bool = False) -> SendOutcome:
        """A refused send: the platform's refusal (or the window rule, `pending` None: nothing was committed or
        sent) recorded as a failed message of the chat, when the chat exists; it is never a reply. A send that was
        `charged` is refunded in the same transaction."""
        return await _with_retries(lambda: self._write_failure(order, failure, channel, pending, charged),
                                   f"chat {self._chat.key}: recording a failed send")

    async def _write_sent(self, order: Send, pending: Record, platform_message_id: str,
                          channel: str, credits: Charge | None) -> SendOutcome:
        chat = self._chat
        now = chat.clock.now()
        async with chat.transaction() as tx:
            # A first send makes its chat in the same statement; the message then gets the chat's id from it.
            row = chat.row_or_new
            recorded = dict(status=delivery_status.SENT, at=now, conversation_id=row.get("id"),
                            platform_message_id=platform_message_id, sent_at=now)
            # The outcome is written by the chat's commit statement (one round trip for the send's whole record).
            message = message_queries.as_recorded(pending, **recorded)
            outcome = SendOutcome(channel, message_row=message, platform_message_id=platform_message_id)
            await self._remember(tx, order, outcome)
            sent = await self._sent_event(tx, order.author, message)
            crossed = await self._credit_alerts(tx, credits, now) if credits is not None else []
            await chat.commit(tx, _counted(row, message, now), [sent, *crossed], now, parts=[
                lambda first, when: message_queries.outcome_update(pending["id"], first=first, when=when,
                                                                   conversation_id_from="chat", **recorded)],
                new_chat=NewChat(profile_name="", author=order.author))
        return outcome

    async def _credit_alerts(self, tx: UnitOfWork, credits: Charge, now: datetime) -> list[OutboxEvent]:
        """credits_threshold for each alert level the charge took the balance below, highest first: the balance
        only moves under a row lock, so each fall past a level is one charge's and is told once."""
        after, before = credits.balance_after, credits.balance_after + credits.amount
        crossed = sorted((level for level in await credit_queries.alert_levels(tx, self._chat.workspace_id)
                          if after < level <= before), reverse=True)
        return [OutboxEvent(events.CREDITS_THRESHOLD, "system", events.credits_threshold_data(
            level=level, balance=after, previous_balance=before, at=now)) for level in crossed]

    async def _write_failure(self, order: Send, failure: SendRefused, channel: str,
                             pending: Record | None, charged: bool) -> SendOutcome:
        chat = self._chat
        row, now = chat.row, chat.clock.now()
        error = {"error_code": failure.code, "error_text": failure.details or failure.message}
        if row is None and pending is None:
            outcome = SendOutcome(channel, failure=failure)   # no chat to record it in: nothing was ever said here
            await self._remember(chat.db, order, outcome)
            return outcome
        async with chat.transaction() as tx:
            if pending is None:
                message = await message_queries.insert_message(
                    tx, conversation_id=row["id"], status=delivery_status.FAILED, waited_from=_waited_from(row, order),
                    answers_message_id=await _answers(tx, row), sent_at=now, status_at=now, **error,
                    **self._columns(order, order.request, channel))
            else:
                # A first send the platform refused stays without a chat, as it always did.
                message = await message_queries.record_outcome(tx, pending["id"], status=delivery_status.FAILED,
                                                               at=now, sent_at=now, **error)
            outcome = SendOutcome(channel, message_row=message if row is not None else None, failure=failure)
            if charged and pending is not None:
                await credit_queries.refund_send(tx, workspace_id=chat.workspace_id, message_id=pending["id"], at=now)
            await self._remember(tx, order, outcome)
            if row is not None:
                await chat.commit(tx, _counted(row, message, now), [], now)
        return outcome

    async def _remember(self, q: Database | UnitOfWork, order: Send, outcome: SendOutcome) -> None:
        """Store the answer on the send's Idempotency-Key reservation, if it has one."""
        reservation = order.reservation
        if reservation is None:
            return
        verdict = send_answer(outcome)
        assert isinstance(verdict, SendVerdict), "only a verdict is remembered"
        await idempotency_keys.link_answer(q, self._chat.workspace_id, reservation, verdict)

    # -- after a crash ----------------------------------------------------------------------------------------

    async def settle(self, tx: UnitOfWork, update: StatusUpdate) -> tuple[Record | None, dict[str, Any],
                                                                            list[OutboxEvent]]:
        """A status whose platform id nobody stored, for this chat's send its callback data names: record the
        send as accepted, as `record_sent` would have. Answers (the message now carrying the platform's id, the
        chat's changes, the events), or (None, {}, []) when the callback names no unsettled send of this chat.
        The status itself is then handled as any other (the caller's)."""
        chat = self._chat
        message_id = message_id_of(update.callback_data)
        if message_id is None:
            return None, {}, []
        row = chat.row
        message = await message_queries.find_unsettled(tx, chat.workspace_id, message_id,
                                                       conversation_id=row["id"] if row is not None else None,
                                                       recipient=chat.phone)
        if message is None:
            return None, {}, []
        now = chat.clock.now()
        row = await chat.ensure_chat(tx, profile_name="", at=now, author=PLATFORM)
        settled = await message_queries.record_outcome(
            tx, message["id"], status=delivery_status.SENT, at=update.at, conversation_id=row["id"],
            platform_message_id=update.message_id)
        log.info("chat %s: send %s settled by the platform's %s status (%s)", chat.key, message["id"],
                 update.status, update.message_id)
        if settled["idempotency_key"] is not None:
            verdict = send_answer(SendOutcome(settled["source"], platform_message_id=update.message_id))
            assert isinstance(verdict, SendVerdict)
            await idempotency_keys.settle_answer(tx, chat.workspace_id, settled["idempotency_key"], settled["id"],
                                                 verdict)
        # A failed one (given up, or a timeout the platform had in fact accepted) was counted when it failed.
        changes = _counted_late(row, settled) if message["status"] == delivery_status.PENDING else {}
        return settled, changes, [await self._sent_event(tx, PLATFORM, settled)]

    async def give_up(self, message_id: int, *, send_again: bool = False) -> Recorded:
        """The in-doubt sweeper's verdict on a message still pending: failed with GIVEN_UP's sentence (counted on
        the chat, the key answered 500); never sent again. `send_again` (a broadcast's message its node stopped
        with): failed with NOT_SENT's, and its broadcast recipient queued again in the same transaction."""
        chat = self._chat
        now = chat.clock.now()
        refusal = NOT_SENT if send_again else GIVEN_UP
        async with chat.transaction() as tx:
            row = chat.row
            message = await message_queries.give_up(tx, chat.workspace_id, message_id, at=now,
                                                    conversation_id=row["id"] if row is not None else None,
                                                    error_code=refusal.code, error_text=refusal.details)
            if message is None:
                return Recorded(None)  # settled meanwhile
            if send_again and message["broadcast_id"] is not None:
                await broadcast_queries.requeue_given_up(tx, message["broadcast_id"], message_id)
                log.warning("chat %s: broadcast send %s given up as never sent (its node stopped mid-send); its "
                            "recipient is queued again", chat.key, message_id)
            else:
                log.warning("chat %s: send %s given up after %s in doubt", chat.key, message_id, IN_DOUBT_LIFETIME)
            if message["idempotency_key"] is not None:
                verdict = send_answer(SendOutcome(message["source"], failure=GIVEN_UP))
                assert isinstance(verdict, SendVerdict)
                await idempotency_keys.settle_answer(tx, chat.workspace_id, message["idempotency_key"], message_id,
                                                     verdict)
            if row is not None:
                await chat.commit(tx, _counted_late(row, message), [], now)
        return Recorded(message_id)

    # -- shared -----------------------------------------------------------------------------------------------

    async def _sent_event(self, tx: UnitOfWork, author: str, message: Record) -> OutboxEvent:
        actor = message["actor_id"]
        names = await conversation_queries.member_names(tx, [actor]) if actor else {}
        return OutboxEvent(events.MESSAGE_SENT, author, data.message_data(self._chat.phone, message, names))

    def _columns(self, order: Send, request: SendRequest, channel: str) -> dict[str, Any]:
        return dict(
            workspace_id=self._chat.workspace_id, recipient=self._chat.phone, direction="outbound",
            sender_type=order.sender_type, actor_id=order.actor_id, sender_label=order.sender_label,
            type=request.type, text=request.text, template_name=request.template_name,
            template_language=request.template_language,
            template_parameters=list(request.template_parameters) if request.type == "template" else None,
            media_url=request.media_url, filename=request.filename, source=channel, media_id=request.media_id,
            mime_type=request.mime_type)


def _waited_from(row: Record | None, order: Send) -> datetime | None:
    """The reply's clock (the Reporting API's two clocks): a person's reply is timed from when the customer began
    waiting for a person, any other from when the customer began waiting."""
    if row is None:
        return None
    if order.sender_type == "agent" and row["waiting_for_person_since"] is not None:
        return row["waiting_for_person_since"]
    return row["waiting_since"]


async def _answers(tx: UnitOfWork, row: Record) -> int | None:
    """The customer message a reply answers: their last word, while they wait."""
    if row["waiting_since"] is None:
        return None
    latest = await message_queries.latest_customer_message(tx, row["id"])
    return latest["id"] if latest is not None else None


def _counted(row: Mapping[str, Any], message: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """The chat's counters once a send's outcome is known, as it is being sent: its last word."""
    return {
        "count_messages": row["count_messages"] + 1,
        "count_from_bot": row["count_from_bot"] + (1 if message["sender_type"] == "bot" else 0),
        "last_message_id": message["id"],
        "last_activity_at": now,
    }


def _counted_late(row: Record, message: Record) -> dict[str, Any]:
    """The counters for a send whose outcome became known after a crash: counted, but the last word (and
    activity) only of a chat that has not moved on since it was sent."""
    changes = _counted(row, message, max(message["sent_at"], row["last_activity_at"]))
    if row["last_message_id"] is not None and row["last_message_id"] > message["id"]:
        del changes["last_message_id"]
    return changes


async def _with_retries(write: Callable[[], Awaitable[SendOutcome]], what: str) -> SendOutcome:
    for delay in RECORD_RETRY_DELAYS:
        try:
            return await write()
        except DatabaseUnavailable as err:
            log.warning("%s failed (%s); retrying in %gs", what, err, delay)
        await trio.sleep(delay)
    return await write()
