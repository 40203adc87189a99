"""A workspace taken over goes on with its chats' bot turns (turn_resumption.py), against a real PostgreSQL: a chat
whose customer waits on a turn the former node never finished is woken and its bot decides; chats answered, held by
a person or written to long ago are left alone."""

from __future__ import annotations

import itertools
from datetime import datetime, timezone

from inbox_actors.conversations import conversation
from inbox_actors.conversations.bot import FaqBot
from inbox_actors.conversations.conversation import ConversationDeps, CustomerWrote, conversation_kind
from inbox_actors.conversations.send_pacer import send_pacer_kind
from inbox_actors.conversations.turn_resumption import wake_unanswered_chats
from inbox_actors.platform.payloads import InboundMessage
from inbox_actors.runtime import ActorSystem
from inbox_actors.runtime.clock import WallClock
from tests import builders
from tests.integration.test_conversation_actor import RecordingPlatform
from tests.waiting import eventually

_ids = itertools.count(1)
OWED, ANSWERED, STALE = "919800020001", "919800020002", "919800020003"


def _writes(phone: str) -> CustomerWrote:
    return CustomerWrote(InboundMessage(message_id=f"wamid.resume-{next(_ids)}", from_phone=phone,
                                        at=datetime.now(timezone.utc), type="text", text="do you ship abroad?"))


async def _state(db, phone: str) -> tuple[str, str | None]:
    row = await db.fetchrow("SELECT state, handover_reason FROM conversations WHERE phone = $1", phone)
    return row["state"], row["handover_reason"]


async def test_the_node_that_takes_a_workspace_wakes_the_chats_whose_bot_turn_was_left_mid_way(db, nursery):
    workspace_id = await builders.workspace(db)
    # The former node: its chats stored the customers' words, and their bot turns died with it (no bot ran here).
    former = ActorSystem([conversation_kind(ConversationDeps(db=db, clock=WallClock(), platform=RecordingPlatform(),
                                                             responder=None)), send_pacer_kind()])
    await nursery.start(former.run)
    for phone in (OWED, ANSWERED, STALE):
        await conversation.ask_conversation(former, workspace_id, phone, _writes(phone))
    await former.shutdown(2)
    await db.execute("UPDATE conversations SET waiting_since = NULL WHERE phone = $1", ANSWERED)
    await db.execute("UPDATE conversations SET last_customer_message_at = now() - interval '11 minutes'"
                     " WHERE phone = $1", STALE)

    taker = ActorSystem([conversation_kind(ConversationDeps(db=db, clock=WallClock(), platform=RecordingPlatform(),
                                                            responder=FaqBot(db))), send_pacer_kind()])
    await nursery.start(taker.run)
    try:
        assert await wake_unanswered_chats(db, taker, workspace_id) == 1
        # No FAQ answer matches: the bot's decision is to hand the chat to a person, as it would have been then.
        async def handed_over():
            state = await _state(db, OWED)
            return state if state[0] == "HANDOFF_PENDING" else None
        assert await eventually(handed_over) == ("HANDOFF_PENDING", "bot_has_no_answer")
        assert [await _state(db, phone) for phone in (ANSWERED, STALE)] == [("AI_ONLY", None), ("AI_ONLY", None)]
        assert await wake_unanswered_chats(db, taker, workspace_id) == 0      # nothing owed any more
    finally:
        await taker.shutdown(2)
