"""The bot's answer is never silently lost: a throughput refusal is tried again in a later slot until it goes,
and an answer the platform refuses for good hands the chat to a person (`bot_reply_not_delivered`)."""

from __future__ import annotations

import pytest
import trio

from inbox_actors.conversations import bot
from inbox_actors.platform.simulator.rules import UNDELIVERABLE_PREFIX
from tests.e2e.chat_helpers import chat, customer_writes, scale_workspace
from tests.e2e.conftest import with_settings
from tests.waiting import eventually


@pytest.fixture
def service_settings(service_settings):
    # The pacer believes the number may send 80 a second; the platform takes 2: it refuses most of a burst.
    return with_settings(service_settings, simulator_throughput=2, platform_sends_per_second=80)


async def test_bot_answers_refused_for_throughput_are_sent_later_not_dropped(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    await bot.add_answer(service.db, workspace_id=workspace_id, keywords=["price"], answer="Plans start at 10.")
    phones = [f"91982200000{n}" for n in range(1, 7)]
    async with trio.open_nursery() as nursery:
        for phone in phones:
            nursery.start_soon(customer_writes, service, number, phone, "What is the price?")

    async def all_answered():
        chats = [await chat(service, key, phone) for phone in phones]
        return chats if all(c["counts"]["from_bot"] == 1 and not c["needs_reply"] for c in chats) else None

    answered = await eventually(all_answered, timeout=20)
    assert {c["state"] for c in answered} == {"AI_ONLY"}
    assert await service.db.fetchval(
        "SELECT count(*) FROM messages WHERE sender_type = 'bot' AND status = 'failed'") == 0


async def test_a_bot_answer_the_platform_refuses_hands_the_chat_to_a_person(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    await bot.add_answer(service.db, workspace_id=workspace_id, keywords=["price"], answer="Plans start at 10.")
    phone = UNDELIVERABLE_PREFIX + "0" * (12 - len(UNDELIVERABLE_PREFIX))
    await customer_writes(service, number, phone, "What is the price?")

    async def handed_off():
        detail = await chat(service, key, phone)
        return detail if detail["state"] == "HANDOFF_PENDING" else None

    detail = await eventually(handed_off)
    assert detail["handover_reason"] == "bot_reply_not_delivered" and detail["needs_reply"] is True
    failed = await service.db.fetchrow("SELECT text, status FROM messages WHERE sender_type = 'bot'")
    assert failed["status"] == "failed" and failed["text"] == "Plans start at 10."
