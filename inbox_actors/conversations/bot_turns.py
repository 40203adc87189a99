"""A chat's bot turns, as the conversation actor runs them: the bot thinks beside the actor's mailbox (a model call
takes seconds) and its answer comes back as `BotAnswered`, taken only if nothing made it stale.

- A customer's message committed queues a `BotTurn`; the turn starts the thinking in a task of the actor's about
  every unanswered word, giving up thinking under way about fewer of them (messages written while the bot thinks
  are answered once, together).
- A person taking the chat (claim, transfer, resolve, a reply) cancels the thinking at once (`stop_if_taken`,
  after every message the actor handles); an answer that arrives all the same is dropped.
- An answer is taken in a turn of the mailbox: a reply is sent as every send is (the pacer, exactly once), a
  hand-off moves the chat to HANDOFF_PENDING with its reason; a bot that fails hands the chat to a person.
"""

from __future__ import annotations

import logging
from typing import Any

import trio

from inbox_actors.conversations import events as data
from inbox_actors.conversations.bot import BotQuestion, HandOff, Reply, Responder, Turn
from inbox_actors.conversations.chat_state import ChatState, OutboxEvent
from inbox_actors.conversations.conversation_protocol import BotAnswered, BotTurn, Recorded, Send
from inbox_actors.conversations.sending import Sender
from inbox_actors.domain import conversation_states as states
from inbox_actors.domain import events
from inbox_actors.domain.conversation_states import State
from inbox_actors.platform.payloads import SendRequest
from inbox_actors.runtime import Actor, ActorError, MailboxFull
from persistence.queries import bot_settings as bot_settings_queries
from persistence.queries import messages as message_queries

log = logging.getLogger("inbox_actors.conversations.conversation")

# The messages the bot reads of its chat: the turns its prompt may hold, and its replies in a row to count.
BOT_READS_MESSAGES = 60


class BotTurns:
    def __init__(self, chat: ChatState, responder: Responder | None, sender: Sender, actor: Actor) -> None:
        self._chat = chat
        self._responder = responder
        self._sender = sender
        self._actor = actor   # its tasks, its own ref and the actor system the bot's model gate is in
        # The thinking under way, and the customer message it answers.
        self._thinking: trio.CancelScope | None = None
        self._thinking_for: int | None = None

    def queue(self) -> None:
        if self._responder is None:
            return
        try:
            self._actor.self_ref.tell_nowait(BotTurn())
        except MailboxFull:
            # The chat is flooded; the bot answers the latest message on the customer's next one.
            log.warning("conversation %s: mailbox full, bot turn skipped", self._chat.key)

    def stop_if_taken(self) -> None:
        """A person took the chat: the bot's answer would come too late."""
        if self._thinking is not None and not states.bot_may_answer(self._chat.state):
            self._thinking.cancel()

    async def turn(self) -> None:
        """Start the bot thinking about the customer's unanswered words (the latest of them the last word)."""
        chat = self._chat
        row = chat.row
        if row is None or not states.bot_may_answer(chat.state) or self._responder is None:
            return None
        latest = await message_queries.latest_customer_message(chat.db, row["id"])
        if latest is None or row["last_message_id"] != latest["id"]:
            return None  # someone already answered, or the customer's message was not the last word
        if self._thinking_for == latest["id"]:
            return None  # already thinking about exactly this
        question = await self._question(row["id"])
        if self._thinking is not None:
            self._thinking.cancel()
        self._thinking, self._thinking_for = trio.CancelScope(), latest["id"]
        self._actor.tasks.start_soon(self._think, self._thinking, question, latest["id"], name=f"{chat.key} bot")
        return None

    async def _question(self, conversation_id: int) -> BotQuestion:
        said = await message_queries.recent_words(self._chat.db, conversation_id, BOT_READS_MESSAGES)
        turns = [Turn("customer" if m["direction"] == "inbound" else "business", m["text"]) for m in reversed(said)]
        unanswered = next((i for i, m in enumerate(said) if m["direction"] != "inbound"), len(said))
        in_a_row = 0
        for m in said[unanswered:]:
            if m["sender_type"] == "agent":
                break
            in_a_row += m["sender_type"] == "bot"
        return BotQuestion(workspace_id=self._chat.workspace_id, conversation_id=conversation_id,
                           turns=tuple(turns), unanswered=max(unanswered, 1), bot_turns=in_a_row)

    async def _think(self, scope: trio.CancelScope, question: BotQuestion, for_message: int) -> None:
        assert self._responder is not None
        with scope:
            try:
                answer = await self._responder.respond(question, self._actor.actors)
            except Exception:
                # Never a silent chat: whatever broke, a person takes it.
                log.exception("conversation %s: the bot failed", self._chat.key)
                answer = HandOff(states.BOT_UNAVAILABLE)
            try:
                await self._actor.self_ref.tell(BotAnswered(answer, for_message))
            except ActorError:
                pass   # the chat is stopping; its next life asks again (the actor's on_start)

    async def answered(self, answered: BotAnswered) -> Recorded | None:
        chat = self._chat
        if self._thinking_for == answered.for_message:
            self._thinking = self._thinking_for = None
        row = chat.row
        if row is None or not states.bot_may_answer(chat.state):
            return None   # a person took the chat
        answer = answered.answer
        if row["last_message_id"] != answered.for_message:
            # Something was said since. The customer writing again: the bot thinks about that now. A send of the
            # business's (an automation's API send): a reply is no longer wanted, but a hand-off still stands.
            latest = await message_queries.latest_customer_message(chat.db, row["id"])
            if isinstance(answer, Reply) or latest is None or latest["id"] != answered.for_message:
                return None
        if isinstance(answer, HandOff):
            if answer.message:
                # The customer is told a person is coming; the hand-off happens whatever became of the words.
                await self._sender.send(Send(request=SendRequest(to=chat.phone, text=answer.message),
                                             sender_type="bot", author="bot", sender_label=answer.label))
            return await self.hand_off(answer.reason)
        assert isinstance(answer, Reply)
        outcome = await self._sender.send(Send(request=SendRequest(to=chat.phone, text=answer.text),
                                               sender_type="bot", author="bot", sender_label=answer.label,
                                               model_call=answer.model_call))
        sent = outcome.message_row
        if outcome.refused_status == 402 and states.bot_may_answer(chat.state):
            return await self.hand_off(states.BOT_OUT_OF_CREDITS)
        if outcome.failure is not None and states.bot_may_answer(chat.state):
            # The answer failed at the platform (its send is recorded as failed): never leave the customer
            # without one; a person takes the chat, and the failed answer shows them what the bot meant to say.
            await self.hand_off(states.BOT_REPLY_NOT_DELIVERED)
        return Recorded(sent["id"] if sent is not None else None)

    async def hand_off(self, reason: str) -> Recorded:
        chat = self._chat
        now = chat.clock.now()
        states.hand_off(chat.state)
        changes: dict[str, Any] = {"state": State.HANDOFF_PENDING.value, "handover_reason": reason,
                                   "handover_at": now}
        if chat.row["waiting_since"] is not None and chat.row["waiting_for_person_since"] is None:
            changes.update(await chat.waiting_for_person(chat.db, None))
        handed_off = OutboxEvent(events.HANDOFF, "bot", data.handoff_data(chat.phone, reason, now))
        async with chat.transaction() as tx:
            await bot_settings_queries.record_handoff(tx, chat.workspace_id, chat.row["id"], reason, now)
            await chat.commit(tx, changes, [handed_off], now)
        return Recorded(None)
