"""A whole chat over real sockets: a customer writes through the simulator, the bot answers, the customer asks
for a person, a member claims and replies, statuses come back, the chat is resolved."""

from __future__ import annotations

from collections import Counter

from inbox_actors.conversations import bot
from tests.e2e.chat_helpers import chat, customer_writes, outbox_events, scale_workspace
from tests.e2e.conftest import bearer
from tests.waiting import eventually

PHONE = "919876543211"


async def test_customer_bot_handoff_claim_reply_resolve(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    await bot.add_answer(service.db, workspace_id=workspace_id, keywords=["price"], answer="Plans start at 10.")

    written = await customer_writes(service, number, "+91 98765 43211", "What is the price?")
    assert written["delivered_to_service"] is True

    async def bot_answer_delivered():
        detail = await chat(service, key, PHONE)
        return detail if detail["counts"]["from_bot"] == 1 and not detail["needs_reply"] else None

    detail = await eventually(bot_answer_delivered)
    assert detail["state"] == "AI_ONLY"
    assert detail["contact_name"] == "Asha"
    assert detail["last_message"]["sender_type"] == "bot"
    assert detail["last_message"]["preview"] == "Plans start at 10."
    assert detail["unread_count"] == 1

    await customer_writes(service, number, PHONE, "Can I talk to a real person please")

    async def handed_off():
        detail = await chat(service, key, PHONE)
        return detail if detail["state"] == "HANDOFF_PENDING" else None

    detail = await eventually(handed_off)
    assert detail["handover_reason"] == "customer_asked_for_person"
    assert detail["needs_reply"] is True and detail["waiting_for_person_since"] is not None
    assert detail["counts"] == {"messages": 3, "from_customer": 2, "from_bot": 1}

    claimed = await service.client.post(f"/api/inbox/conversations/{PHONE}/claim", headers=bearer(key))
    assert claimed.status_code == 200, claimed.text
    assert claimed.json()["state"] == "HUMAN_ACTIVE"
    assert claimed.json()["assigned_to"]["user_id"] == admin

    replied = await service.client.post(f"/api/inbox/conversations/{PHONE}/reply", headers=bearer(key),
                                        json={"message": "Hi, I am here to help."})
    assert replied.status_code == 200, replied.text
    message_id = replied.json()["messageId"]
    assert message_id.startswith("wamid.")

    async def reply_delivered():
        detail = await chat(service, key, PHONE)
        return detail if not detail["needs_reply"] and detail["waiting_for_person_since"] is None else None

    await eventually(reply_delivered)
    statuses = await eventually(lambda: _receipts(service, message_id, at_least=3))
    assert statuses == ["sent", "delivered", "read"]

    resolved = await service.client.post(f"/api/inbox/conversations/{PHONE}/resolve", headers=bearer(key),
                                         json={"reason": "answered"})
    assert resolved.status_code == 200, resolved.text
    assert resolved.json()["state"] == "AI_ONLY" and resolved.json()["assigned_to"] is None
    assert resolved.json()["resolved_at"] is not None

    events = Counter(await outbox_events(service.db, workspace_id))
    assert events["contact_created"] == 1
    assert events["message_received"] == 2
    assert events["message_sent"] == 2  # the bot's answer and the member's reply
    assert events["handoff"] == 1
    assert events["conversation_assigned"] == 1
    assert events["conversation_resolved"] == 1
    assert events["message_status"] == 4  # delivered and read, for each of the two sends

    history = await service.db.fetch(
        "SELECT event, to_member, by_member, reason, source FROM assignment_events ORDER BY id")
    assert [(row["event"], row["source"]) for row in history] == [("claimed", "events"), ("resolved", "events")]
    assert history[0]["to_member"] == admin and history[1]["reason"] == "answered"


async def _receipts(service, platform_message_id: str, *, at_least: int) -> list[str] | None:
    rows = await service.db.fetch(
        "SELECT r.status FROM receipts r JOIN messages m ON m.id = r.message_id"
        " WHERE m.platform_message_id = $1 ORDER BY r.at", platform_message_id)
    return [row["status"] for row in rows] if len(rows) >= at_least else None
