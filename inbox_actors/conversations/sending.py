"""Sending from a conversation: the rules checked before the platform is asked, the call, and its record.

Runs inside the conversation actor, so a chat's sends are serialised and a status webhook for a send waits
in the mailbox until the send is recorded. The `Sender` reads the chat through its `ChatState` and records
through its `SendRecords` (send_records.py: the message committed as pending before the call, its outcome
after); it answers a `SendOutcome` (conversation_protocol.py).

Order of the rules: consent (an opted-out contact: nothing sent, 403), channel (a web-client chat takes only
text, 400), the 24-hour customer window for text and media (the platform's 131047, answered without asking
it), then the pending message, charged in credits for a metered template (a send the balance cannot cover stops
here, 402, nothing debited; one whose Idempotency-Key another request holds, 409), a
slot under the number's throughput (the send pacer; 130429 when saturated), then the platform, with the
pending message's id as `biz_opaque_callback_data`. A refused send that reached the platform (or the window
rule) is recorded as a failed message with the error, when the chat exists; it is never a reply. The contact's
consent is read by the very statement that commits the pending message, unless a rule after it in that order
applies (a web-client chat, a closed window, a member's reply that claims the chat): then it is read first.
A broadcast's send (`Send.broadcast`) claims its recipient in that same statement (nothing is sent to a recipient
that is no longer queued: 409) and skips the pacer, whose slot the broadcast took before asking.

A throughput refusal (the pacer saturated, or the platform's 130429 all the same) is tried again in a later
slot: once for a caller waiting on its answer (an API send or a member's reply, which the caller may retry with
backoff), and for up to BOT_PATIENCE for the bot, whose customer has nobody else to retry for them (the
conversation then hands the chat to a person, `bot_reply_not_delivered`).

Nothing goes to the platform for a workspace the node no longer holds (inbox_actors/cluster/effect_fence.py): a node
paused or cut off past its lease deadline abandons the call, and the send, committed as pending, is answered in
doubt (`SendOutcome.in_doubt`), as is one whose outcome the statement fence refused to write; the node holding the
workspace now settles it (send_records.py).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Protocol

import msgspec
import trio

from inbox_actors.cluster.effect_fence import check_effect
from inbox_actors.conversations import send_pacer
from inbox_actors.conversations.chat_handling import ChatHandling
from inbox_actors.conversations.chat_state import ChatState
from inbox_actors.conversations.conversation_protocol import Send, SendOutcome
from inbox_actors.conversations.send_answers import KEY_IN_PROGRESS
from inbox_actors.conversations.send_callback import callback_data
from inbox_actors.conversations.send_records import Charge, SendRecords
from inbox_actors.domain import conversation_states as states
from inbox_actors.domain.conversation_states import State
from inbox_actors.domain.credit_prices import TemplatePrices
from inbox_actors.platform.client import UNREACHABLE_CODE, UNREACHABLE_MESSAGE, PlatformClient
from inbox_actors.platform.payloads import SendAccepted, SendRefused, SendRequest
from inbox_actors.runtime import ActorError, Directory
from persistence.database import DatabaseUnavailable
from persistence.queries import contacts as contact_queries
from persistence.queries import templates as template_queries
from persistence.statement_fence import LeaseLost

log = logging.getLogger("inbox_actors.conversations.conversation")

CUSTOMER_WINDOW = timedelta(hours=24)
WHATSAPP = "whatsapp"
WEB_CLIENT = "web_client"

WINDOW_CLOSED = SendRefused(
    message="Re-engagement message",
    code=131047,
    title="Re-engagement message",
    details="Message failed to send because more than 24 hours have passed since the customer last replied "
            "to this number.",
    http_status=400,
)
THROUGHPUT_CODE = 130429
# How long the bot's answer keeps asking for a slot while the number is saturated, and the pause between asks
# when the pacer has no slot within its own wait.
BOT_PATIENCE = 30.0
SATURATED_PAUSE = 1.0
SATURATED = SendRefused(
    message="(#130429) Rate limit hit",
    code=130429,
    title="Rate limit hit",
    details="This number's sends are queued past the platform's throughput limit; retry with backoff.",
    http_status=0,
)
PACER_UNAVAILABLE = SendRefused(
    message=UNREACHABLE_MESSAGE,
    code=UNREACHABLE_CODE,
    title="Send pacer unavailable",
    details="This number's send pacer could not be asked for a slot",
    http_status=0,
)
OPTED_OUT_SENTENCE = "This contact has opted out of messages; they must opt in before you can message them."
WEB_CLIENT_TEXT_ONLY_SENTENCE = "Only text messages can be sent to a chat imported from a web-client session."
NOT_QUEUED_SENTENCE = "This broadcast recipient is no longer queued (already sent, or the broadcast was cancelled)."


def short_of_credits(charge: int, balance: int | None) -> str:
    return (f"Not enough credits: this template send costs {charge:,} and the balance is {balance or 0:,}. "
            "Top up the workspace's credits before sending.")


def window_open(last_customer_message_at: datetime | None, now: datetime) -> bool:
    return last_customer_message_at is not None and now - last_customer_message_at <= CUSTOMER_WINDOW


class SendingDeps(Protocol):
    """What sending needs of the conversation's dependencies (`ConversationDeps` has it)."""

    platform: PlatformClient
    sends_per_second: int
    template_prices: TemplatePrices
    ai_reply_credits: int


class Sender:
    def __init__(self, chat: ChatState, records: SendRecords, team: ChatHandling, deps: SendingDeps,
                 actors: Directory) -> None:
        self._chat = chat
        self._records = records
        self._team = team
        self._deps = deps
        self._actors = actors  # where the number's send pacer is

    async def send(self, order: Send) -> SendOutcome:
        chat = self._chat
        request = msgspec.structs.replace(order.request, to=chat.phone)
        row = chat.row
        channel = row["channel"] if row is not None else WHATSAPP
        window_closed = request.type != "template" and not window_open(
            row["last_customer_message_at"] if row else None, chat.clock.now())
        claims = order.sender_type == "agent" and chat.state is not State.HUMAN_ACTIVE and row is not None
        # The usual send passes every rule but consent on what the chat holds, and consent is then read by the
        # statement that commits the pending message; the others read it first, as the rules' order wants.
        consent_first = window_closed or claims or (channel == WEB_CLIENT and request.type != "text")
        if consent_first:
            contact = await contact_queries.find_contact(chat.db, chat.workspace_id, chat.phone)
            if contact is not None and contact["opted_out"]:
                return SendOutcome(channel, refused_status=403, refused_sentence=OPTED_OUT_SENTENCE)
            if channel == WEB_CLIENT and request.type != "text":
                return SendOutcome(channel, refused_status=400, refused_sentence=WEB_CLIENT_TEXT_ONLY_SENTENCE)
            if window_closed:
                return await self._records.record_failure(order, WINDOW_CLOSED, channel, pending=None)
            if claims:
                # Replying takes the chat: the reply and the claim are one person's decision.
                await self._team.assign(states.claim(chat.state, row["assigned_to"], order.actor_id),
                                        by=order.actor_id, reason="replied", author=order.author)
        charge = await self._price(order, request)
        # Committed before anything goes out (and charged), so no crash can make the platform's answer the only
        # record.
        pending = await self._records.write_pending(order, request, channel, check_consent=not consent_first,
                                                    charge=charge)
        if pending.opted_out:
            return SendOutcome(channel, refused_status=403, refused_sentence=OPTED_OUT_SENTENCE)
        if pending.short_of_credits:
            return SendOutcome(channel, refused_status=402, refused_sentence=short_of_credits(charge, pending.balance))
        if pending.not_queued:
            return SendOutcome(channel, refused_status=409, refused_sentence=NOT_QUEUED_SENTENCE)
        if pending.message is None:
            return SendOutcome(channel, refused_status=409, refused_sentence=KEY_IN_PROGRESS)
        request = msgspec.structs.replace(request, callback_data=callback_data(pending.message["id"]))
        try:
            if order.broadcast is not None:
                # The broadcast took this send's slot from the pacer, and judges a throughput refusal itself.
                check_effect()
                result = await self._deps.platform.send(chat.phone_number_id, request)
            else:
                patience = BOT_PATIENCE if order.sender_type == "bot" else 0.0
                result = await self._send_paced(chat.phone_number_id, request, patience)
            if isinstance(result, SendRefused):
                return await self._records.record_failure(order, result, channel, pending.message,
                                                          charged=charge > 0)
            assert isinstance(result, SendAccepted)
            credits = Charge(charge, pending.balance) if charge else None
            return await self._records.record_sent(order, pending.message, result.message_id, channel, credits)
        except (LeaseLost, DatabaseUnavailable) as err:
            # The node lost the workspace after the pending message was committed (the platform call was abandoned,
            # EffectAbandoned, or its outcome could not be written), or PostgreSQL stayed away past the outcome's
            # retries. Either way the message stays pending for the node that holds the workspace (a status settles
            # it, or the in-doubt sweep), and the caller is told it may have gone out: never "try again", which
            # would send it twice.
            log.warning("chat %s: send %s left in doubt: %s", chat.key, pending.message["id"], err)
            return SendOutcome(channel, in_doubt=True)

    async def _price(self, order: Send, request: SendRequest) -> int:
        """Credits the send costs: a template's by its category (domain/credit_prices.py), the AI agent's reply
        the service's price per reply; others nothing."""
        if order.model_call is not None:
            return self._deps.ai_reply_credits
        prices = self._deps.template_prices
        if request.type != "template" or not prices.metered:
            return 0
        template = await template_queries.find_template(self._chat.db, self._chat.workspace_id,
                                                        request.template_name or "", request.template_language or "")
        return prices.price_of(template["category"] if template is not None else None)

    async def _send_paced(self, phone_number_id: str, request: SendRequest,
                          patience: float) -> SendAccepted | SendRefused:
        """Send in a slot under the number's throughput. A throughput refusal all the same (the platform counted
        differently, or other senders share the number) is retried in a later slot: once, and then again while
        `patience` seconds have not passed."""
        give_up_at = trio.current_time() + patience
        result = await self._send_in_slot(phone_number_id, request)
        if _throughput_refused(result):
            result = await self._send_in_slot(phone_number_id, request)
        while _throughput_refused(result) and trio.current_time() < give_up_at:
            if result is SATURATED:
                await trio.sleep(min(SATURATED_PAUSE, max(0.0, give_up_at - trio.current_time())))
            result = await self._send_in_slot(phone_number_id, request)
        return result

    async def _send_in_slot(self, phone_number_id: str, request: SendRequest) -> SendAccepted | SendRefused:
        try:
            paced = await self._wait_for_slot(phone_number_id)
        except ActorError as err:
            # No pacer to ask (the service is stopping, or the pacer's kind is failing): the platform was not
            # called, so the pending message is settled as failed, never left in doubt.
            return msgspec.structs.replace(PACER_UNAVAILABLE, details=f"{PACER_UNAVAILABLE.details} "
                                                                      f"({type(err).__name__}); nothing was sent.")
        if not paced:
            return SATURATED
        # The pacer's slot may have come after the node lost the workspace. (The Cloud API client checks again right
        # before it writes; this check is every PlatformClient's.)
        check_effect()
        return await self._deps.platform.send(phone_number_id, request)

    async def _wait_for_slot(self, phone_number_id: str) -> bool:
        return await send_pacer.wait_for_slot(self._actors, self._chat.workspace_id, phone_number_id,
                                              self._deps.sends_per_second)


def _throughput_refused(result: SendAccepted | SendRefused) -> bool:
    return isinstance(result, SendRefused) and result.code == THROUGHPUT_CODE
