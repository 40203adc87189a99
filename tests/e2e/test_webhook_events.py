"""Which operation emits which event, as docs/webhooks.md's table says, checked at a real receiver (sla_breached:
tests/integration/test_sla_clock.py; credits_threshold: tests/e2e/test_credits.py)."""

from __future__ import annotations

from inbox_actors.conversations import bot
from inbox_actors.domain import events
from tests import builders
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.waiting import eventually
from tests.webhook_receiver import Receiver, webhook_receiver

CONFIG = "/api/webhook/outbound/config"
PHONE = "919812300001"



async def subscribe_all(service, auth, url: str) -> None:
    response = await service.client.put(CONFIG, headers=auth, json={"endpoint_url": url,
                                                                     "events": list(events.ALL_EVENTS)})
    assert response.status_code == 200, response.text


async def next_event(receiver: Receiver, name: str, **expected) -> dict:
    """The first delivered `name` event whose data has the `expected` values."""
    async def found():
        for delivery in receiver.events(name):
            data = delivery.envelope["data"]
            if all(data.get(k) == v for k, v in expected.items()):
                return delivery.envelope
        return None
    return await eventually(found)


async def test_contact_writes_emit_contact_created_and_tag_added(service):
    _, _, _, key = await scale_workspace(service.db)
    auth = bearer(key)
    async with webhook_receiver() as receiver:
        await subscribe_all(service, auth, receiver.url)
        created = await service.client.post("/api/contacts", headers=auth, json={"phone": PHONE, "name": "Asha"})
        assert created.status_code == 201, created.text
        envelope = await next_event(receiver, "contact_created", phone=PHONE)
        assert envelope["actor"].startswith("api_key:") and envelope["data"]["name"] == "Asha"
        tagged = await service.client.put(f"/api/contacts/{PHONE}/tags", headers=auth, json={"tags": ["vip"]})
        assert tagged.status_code == 200, tagged.text
        envelope = await next_event(receiver, "tag_added", phone=PHONE, tag="vip")
        assert envelope["data"]["tags"] == ["vip"]


async def test_a_customer_s_first_message_and_the_bot_s_hand_off(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    async with webhook_receiver() as receiver:
        await subscribe_all(service, bearer(key), receiver.url)
        await customer_writes(service, number, PHONE, "I need a person please")
        assert (await next_event(receiver, "contact_created", phone=PHONE))["actor"] == "customer"
        received = await next_event(receiver, "message_received", phone=PHONE)
        assert received["data"]["text"] == "I need a person please" and received["data"]["sender_type"] == "customer"
        handoff = await next_event(receiver, "handoff", phone=PHONE)
        assert handoff["actor"] == "bot" and handoff["data"]["reason"]


async def test_team_actions_emit_assigned_seen_and_resolved(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    auth = bearer(key)
    colleague = await builders.member(service.db, workspace_id, "agent", permissions=["inbox"])
    async with webhook_receiver() as receiver:
        await subscribe_all(service, auth, receiver.url)
        await customer_writes(service, number, PHONE, "I need a person please")
        await next_event(receiver, "handoff", phone=PHONE)
        base = f"/api/inbox/conversations/{PHONE}"
        assert (await service.client.post(f"{base}/claim", headers=auth)).status_code == 200
        claimed = await next_event(receiver, "conversation_assigned", phone=PHONE, event="claimed")
        assert claimed["data"]["to"]["user_id"] == admin and claimed["data"]["state"] == "HUMAN_ACTIVE"
        assert (await service.client.post(f"{base}/open", headers=auth)).status_code == 200
        seen = await next_event(receiver, "conversation_seen", phone=PHONE)
        assert seen["data"]["user"]["user_id"] == admin and seen["data"]["marked_read"] == 1
        moved = await service.client.post(f"{base}/transfer", headers=auth, json={"to_user_id": colleague})
        assert moved.status_code == 200, moved.text
        transferred = await next_event(receiver, "conversation_assigned", phone=PHONE, event="transferred")
        assert transferred["data"]["from"]["user_id"] == admin and transferred["data"]["to"]["user_id"] == colleague
        assert (await service.client.post(f"{base}/resolve", headers=auth)).status_code == 200
        resolved = await next_event(receiver, "conversation_resolved", phone=PHONE)
        assert resolved["data"]["event"] == "resolved" and resolved["data"]["state"] == "AI_ONLY"


async def test_a_send_emits_message_sent_then_message_status_with_the_platform_time(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    auth = bearer(key)
    await bot.add_answer(service.db, workspace_id=workspace_id, keywords=["hello"], answer="Hi!")
    async with webhook_receiver() as receiver:
        await subscribe_all(service, auth, receiver.url)
        await customer_writes(service, number, PHONE, "hello")
        await next_event(receiver, "message_sent", phone=PHONE, sender_type="bot")
        sent = await service.client.post("/api/send-message", headers=auth, json={"to": PHONE, "message": "Shipped"})
        assert sent.status_code == 200, sent.text
        message_id = sent.json()["messageId"]
        envelope = await next_event(receiver, "message_sent", phone=PHONE, message_id=message_id)
        assert envelope["actor"].startswith("api_key:") and envelope["data"]["text"] == "Shipped"
        status = await next_event(receiver, "message_status", message_id=message_id, status="delivered")
        assert status["actor"] == "platform" and status["data"]["timestamp"]
