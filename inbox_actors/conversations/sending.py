"""Sending from a conversation: the rules checked before the platform is asked, the call, and the record.

Runs inside the conversation actor, so a chat's sends are serialised and a status webhook for a send waits
in the mailbox until the send is recorded. The `Sender` reads the chat and records through its `ChatState`
(the message, then the row and the `message_sent` event, committed together); it answers a `SendOutcome`
(messages.py).

Order of the rules: consent (an opted-out contact: nothing sent, 403), channel (a web-client chat takes only
text, 400), the 24-hour customer window for text and media (the platform's 131047, answered without asking
it), then a slot under the number's throughput (the send pacer; 130429 when saturated), then the platform.
A refused send that reached the platform (or the window rule) is recorded as a failed message with the
error, when the chat exists; it is never a reply.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any, Protocol

import msgspec
import trio

from inbox_actors.conversations import events as data
from inbox_actors.conversations import send_pacer
from inbox_actors.conversations.chat_state import ChatState, WebhookEvent
from inbox_actors.conversations.messages import Send, SendOutcome
from inbox_actors.conversations.team_actions import TeamActions
from inbox_actors.domain import conversation_states as states
from inbox_actors.domain import delivery_status, events
from inbox_actors.domain.conversation_states import State
from inbox_actors.platform.client import PlatformClient
from inbox_actors.platform.messages import SendAccepted, SendRefused, SendRequest
from inbox_actors.runtime import Directory
from persistence.database import DatabaseUnavailable, Record, UnitOfWork
from persistence.queries import contacts as contact_queries
from persistence.queries import conversations as conversation_queries
from persistence.queries import messages as message_queries

log = logging.getLogger("inbox_actors.conversations.conversation")

CUSTOMER_WINDOW = timedelta(hours=24)
# Waits between attempts at recording an accepted send while PostgreSQL is unreachable (then it crashes).
RECORD_RETRY_DELAYS = (0.2, 1.0, 3.0)
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
SATURATED = SendRefused(
    message="(#130429) Rate limit hit",
    code=130429,
    title="Rate limit hit",
    details="This number's sends are queued past the platform's throughput limit; retry with backoff.",
    http_status=0,
)
OPTED_OUT_SENTENCE = "This contact has opted out of messages; they must opt in before you can message them."
WEB_CLIENT_TEXT_ONLY_SENTENCE = "Only text messages can be sent to a chat imported from a web-client session."


def window_open(last_customer_message_at: datetime | None, now: datetime) -> bool:
    return last_customer_message_at is not None and now - last_customer_message_at <= CUSTOMER_WINDOW


class SendingDeps(Protocol):
    """What sending needs of the conversation's dependencies (`ConversationDeps` has it)."""

    platform: PlatformClient
    sends_per_second: int


class Sender:
    def __init__(self, chat: ChatState, team: TeamActions, deps: SendingDeps, actors: Directory) -> None:
        self._chat = chat
        self._team = team
        self._deps = deps
        self._actors = actors  # where the number's send pacer is

    async def send(self, order: Send) -> SendOutcome:
        chat = self._chat
        request = msgspec.structs.replace(order.request, to=chat.phone)
        row = chat.row
        channel = row["channel"] if row is not None else WHATSAPP
        contact = await contact_queries.find_contact(chat.db, chat.workspace_id, chat.phone)
        if contact is not None and contact["opted_out"]:
            return SendOutcome(channel, refused_status=403, refused_sentence=OPTED_OUT_SENTENCE)
        if channel == WEB_CLIENT and request.type != "text":
            return SendOutcome(channel, refused_status=400, refused_sentence=WEB_CLIENT_TEXT_ONLY_SENTENCE)
        now = chat.clock.now()
        if request.type != "template" and not window_open(row["last_customer_message_at"] if row else None, now):
            return await self._record_failure(order, WINDOW_CLOSED, channel)
        if order.sender_type == "agent" and chat.state is not State.HUMAN_ACTIVE and row is not None:
            # Replying takes the chat: the reply and the claim are one person's decision.
            await self._team.assign(states.claim(chat.state, row["assigned_to"], order.actor_id), by=order.actor_id,
                                    reason="replied", author=order.author)
        result = await self._send_paced(chat.workspace["phone_number_id"], request)
        if isinstance(result, SendRefused):
            return await self._record_failure(order, result, channel)
        assert isinstance(result, SendAccepted)
        return await self._record_sent(order, result.message_id, channel)

    async def _send_paced(self, phone_number_id: str, request: SendRequest) -> SendAccepted | SendRefused:
        """Send in a slot under the number's throughput; a throughput refusal all the same (the platform
        counted differently, or other senders share the number) is retried once, in a later slot."""
        result = await self._send_in_slot(phone_number_id, request)
        if isinstance(result, SendRefused) and result.code == THROUGHPUT_CODE:
            result = await self._send_in_slot(phone_number_id, request)
        return result

    async def _send_in_slot(self, phone_number_id: str, request: SendRequest) -> SendAccepted | SendRefused:
        if not await self._wait_for_slot(phone_number_id):
            return SATURATED
        return await self._deps.platform.send(phone_number_id, request)

    async def _wait_for_slot(self, phone_number_id: str) -> bool:
        return await send_pacer.wait_for_slot(self._actors, phone_number_id, self._deps.sends_per_second)

    async def _record_sent(self, order: Send, platform_message_id: str, channel: str) -> SendOutcome:
        """Record a send the platform accepted. The message is on its way whatever happens here, so a lost
        connection is retried for a while rather than answered as a failure the caller would retry (and send
        twice)."""
        for delay in RECORD_RETRY_DELAYS:
            try:
                return await self._write_sent(order, platform_message_id, channel)
            except DatabaseUnavailable as err:
                log.warning("chat %s: recording sent message %s failed (%s); retrying in %gs", self._chat.key,
                            platform_message_id, err, delay)
            await trio.sleep(delay)
        return await self._write_sent(order, platform_message_id, channel)

    async def _write_sent(self, order: Send, platform_message_id: str, channel: str) -> SendOutcome:
        chat = self._chat
        now = chat.clock.now()
        async with chat.transaction() as tx:
            row = await chat.ensure_chat(tx, profile_name="", at=now, author=order.author)
            message = await self._insert(tx, row, order, channel, now, platform_message_id=platform_message_id,
                                         status=delivery_status.SENT)
            names = await conversation_queries.member_names(tx, [order.actor_id] if order.actor_id else [])
            sent = WebhookEvent(events.MESSAGE_SENT, order.author, data.message_data(chat.phone, message, names))
            await chat.commit(tx, self._counted(row, order, message, now), [sent], now)
        return SendOutcome(channel, message_row=message, platform_message_id=platform_message_id)

    async def _record_failure(self, order: Send, failure: SendRefused, channel: str) -> SendOutcome:
        chat = self._chat
        row = chat.row
        if row is None:
            return SendOutcome(channel, failure=failure)  # no chat to record it in: nothing was ever said here
        now = chat.clock.now()
        async with chat.transaction() as tx:
            message = await self._insert(tx, row, order, channel, now, platform_message_id=None,
                                         status=delivery_status.FAILED, error_code=failure.code,
                                         error_text=failure.details or failure.message)
            await chat.commit(tx, self._counted(row, order, message, now), [], now)
        return SendOutcome(channel, message_row=message, failure=failure)

    async def _insert(self, tx: UnitOfWork, row: Record, order: Send, channel: str, now: datetime,
                      **values: Any) -> Record:
        request = order.request
        answers = None
        if row["waiting_since"] is not None:
            latest = await message_queries.latest_customer_message(tx, row["id"])
            answers = latest["id"] if latest is not None else None
        # The reply's clock (the Reporting API's two clocks): a person's reply is timed from when the customer
        # began waiting for a person, any other from when the customer began waiting.
        waited_from = row["waiting_since"]
        if order.sender_type == "agent" and row["waiting_for_person_since"] is not None:
            waited_from = row["waiting_for_person_since"]
        return await message_queries.insert_message(
            tx, workspace_id=self._chat.workspace_id, conversation_id=row["id"], direction="outbound",
            sender_type=order.sender_type, actor_id=order.actor_id, sender_label=order.sender_label,
            type=request.type, text=request.text, template_name=request.template_name,
            template_language=request.template_language,
            template_parameters=list(request.template_parameters) if request.type == "template" else None,
            media_url=request.media_url, filename=request.filename, source=channel, answers_message_id=answers,
            waited_from=waited_from, sent_at=now, status_at=now, **values)

    @staticmethod
    def _counted(row: Record, order: Send, message: Record, now: datetime) -> dict[str, Any]:
        return {
            "count_messages": row["count_messages"] + 1,
            "count_from_bot": row["count_from_bot"] + (1 if order.sender_type == "bot" else 0),
            "last_message_id": message["id"],
            "last_activity_at": now,
        }
