"""A customer's message, as the conversation actor stores it: the message, its chat's changes and its
`message_received` event in one statement; a redelivery of a message stored before (the platform's retry) writes
nothing. A message that answers one of the chat's satisfaction surveys (satisfaction_survey.py) is stored as theirs and
opens no wait; any other wants an answer: unread, a snooze ended, the wait it begins, and the bot asked to think.
"""

from __future__ import annotations

from typing import Any

from inbox_actors.conversations import events as data
from inbox_actors.conversations.bot import Responder
from inbox_actors.conversations.bot_turns import BotTurns
from inbox_actors.conversations.chat_state import ChatState, OutboxEvent
from inbox_actors.conversations.conversation_protocol import Recorded
from inbox_actors.conversations.satisfaction_survey import SatisfactionSurveys
from inbox_actors.domain import conversation_states as states
from inbox_actors.domain import delivery_status, events
from inbox_actors.domain.conversation_states import State
from inbox_actors.domain.text import storable
from inbox_actors.platform.payloads import InboundMessage
from persistence.database import Record, UnitOfWork
from persistence.queries import messages as message_queries
from persistence.queries.conversations import NEW_MESSAGE_ID


class CustomerMessages:
    def __init__(self, chat: ChatState, surveys: SatisfactionSurveys, bot: BotTurns,
                 responder: Responder | None) -> None:
        self._chat = chat
        self._surveys = surveys
        self._bot = bot
        self._responder = responder

    async def store(self, inbound: InboundMessage) -> Recorded:
        try:
            return await self._store(inbound)
        except _StoredBefore as stored:
            return Recorded(stored.message_id, duplicate=True)

    async def _store(self, inbound: InboundMessage) -> Recorded:
        now = self._chat.clock.now()
        chat = self._chat
        async with chat.transaction() as tx:
            row = await chat.ensure_chat(tx, profile_name=storable(inbound.profile_name) or "", at=inbound.at,
                                         author="customer")
            values = dict(
                workspace_id=chat.workspace_id, conversation_id=row["id"], platform_message_id=inbound.message_id,
                direction="inbound", sender_type="customer", type=storable(inbound.type), text=storable(inbound.text),
                status=delivery_status.RECEIVED, media_id=storable(inbound.media_id),
                mime_type=storable(inbound.mime_type), filename=storable(inbound.filename), source="whatsapp",
                sent_at=inbound.at, status_at=inbound.at)
            # A redelivery of something older than what the customer has said since (the platform retried
            # after a failure) is recorded and counted, but it neither becomes the last word nor wakes the bot.
            latest_word = row["last_customer_message_at"] is None or inbound.at >= row["last_customer_message_at"]
            survey = await self._surveys.judge(tx, inbound, row)
            answers_survey = survey is not None and survey.event is not None
            changes: dict[str, Any] = {
                "count_messages": row["count_messages"] + 1,
                "count_from_customer": row["count_from_customer"] + 1,
                **(survey.changes if survey is not None else {}),
            }
            if answers_survey:
                # An answer to the business's own question: nobody's unread, no wait, no bot (satisfaction_survey.py).
                values["opens_wait"] = False
                emitted = [survey.event]
            else:
                # Nobody was waiting for an answer: this message opens a conversation (the team reports count them).
                values["opens_wait"] = latest_word and row["waiting_since"] is None
                changes.update(await self._unanswered(tx, row, inbound, latest_word))
                emitted = []
            if latest_word:
                changes.update(last_customer_message_at=inbound.at, last_message_id=NEW_MESSAGE_ID,
                               last_activity_at=max(inbound.at, row["last_activity_at"]))
            # The message, its chat's changes and its event in one statement; the event's id is the stored one's.
            received = OutboxEvent(events.MESSAGE_RECEIVED, "customer",
                                    data.message_data(chat.phone, message_queries.as_inserted(values), {}))
            message = await chat.commit_message(tx, values, changes, [received, *emitted], now)
            if message is None:
                # The platform's retry of a message stored before: nothing of this transaction is kept.
                existing = await message_queries.find_by_platform_id(tx, chat.workspace_id, inbound.message_id)
                raise _StoredBefore(existing["id"])
        if answers_survey:
            self._surveys.answered(survey)
        elif latest_word and states.bot_may_answer(chat.state) and self._responder is not None:
            self._bot.queue()
        return Recorded(message["id"])

    async def _unanswered(self, tx: UnitOfWork, row: Record, inbound: InboundMessage,
                          latest_word: bool) -> dict[str, Any]:
        """A customer's message that wants an answer: unread, ending any snooze, and (as their latest word) the
        wait it begins."""
        changes: dict[str, Any] = {
            "unread_count": row["unread_count"] + 1,
            "unread_since": min(row["unread_since"] or inbound.at, inbound.at),
            # Each customer message stored is newer than any before it: what members' unread is judged by.
            "last_customer_message_id": NEW_MESSAGE_ID,
        }
        if row["snoozed"]:
            changes.update(snoozed=False, snoozed_until=None)  # the customer writing ends any snooze
        if latest_word:
            if row["waiting_since"] is None:
                changes["waiting_since"] = inbound.at
            if row["state"] != State.AI_ONLY.value and row["waiting_for_person_since"] is None:
                changes.update(await self._chat.waiting_for_person(tx, inbound.at))
        return changes


class _StoredBefore(Exception):
    """A customer message's platform id is stored already; raised to roll its transaction back."""

    def __init__(self, message_id: int) -> None:
        super().__init__(message_id)
        self.message_id = message_id
