"""`POST /api/send-message` over real sockets, through the simulator: success, every send error code, the
sentence 400s, consent, assignment and channel rules, phone spellings, feature switch, idempotent retries."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import httpx
import pytest

from inbox_actors.platform import templates
from tests import builders
from tests.e2e.chat_helpers import customer_writes, outbox_events, scale_workspace
from tests.e2e.conftest import bearer
from tests.e2e.platform_webhooks import customer_message, post_envelope
from tests.waiting import eventually

PHONE = "919812345671"


async def send(service, key: str, body: dict, **headers):
    return await service.client.post("/api/send-message", headers={**bearer(key), **headers}, json=body)


async def test_a_text_inside_the_window_is_sent_and_recorded_as_system_with_the_key_name(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    await customer_writes(service, number, PHONE, "hello")
    answer = await send(service, key, {"to": "+91 98123 45671", "message": "Your order shipped."})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["success"] is True and body["messageId"].startswith("wamid.") and body["channel"] == "whatsapp"
    row = await service.db.fetchrow("SELECT * FROM messages WHERE platform_message_id = $1", body["messageId"])
    key_name = await service.db.fetchval("SELECT name FROM api_keys WHERE workspace_id = $1", workspace_id)
    assert row["sender_type"] == "system" and row["sender_label"] == key_name and row["text"] == "Your order shipped."
    await eventually(lambda: _status(service, body["messageId"], "read"))
    assert "message_sent" in await outbox_events(service.db, workspace_id)


@pytest.mark.parametrize("body, sentence", [
    ({"message": "hi"}, "Phone number is required"),
    ({"to": "", "message": "hi"}, "Phone number is required"),
    ({"to": PHONE}, "Message text is required"),
    ({"to": PHONE, "message": "   "}, "Message text is required"),
    ({"to": PHONE, "type": "template"}, "Template name is required"),
    ({"to": PHONE, "type": "template", "template": {"language": "en"}}, "Template name is required"),
])
async def test_missing_fields_get_the_spec_sentences(service, body, sentence):
    _, _, _, key = await scale_workspace(service.db)
    answer = await send(service, key, body)
    assert answer.status_code == 400 and answer.json() == {"error": sentence}
    assert await service.db.fetchval("SELECT count(*) FROM messages") == 0


@pytest.mark.parametrize("body", [
    {"to": "12-34", "message": "hi"}, {"to": PHONE, "type": "sticker", "message": "hi"},
    {"to": PHONE, "type": "image"}, {"to": PHONE, "message": 5},
])
async def test_other_bad_bodies_get_a_clear_400_and_send_nothing(service, body):
    _, _, _, key = await scale_workspace(service.db)
    answer = await send(service, key, body)
    assert answer.status_code == 400 and set(answer.json()) == {"error"}
    assert await service.db.fetchval("SELECT count(*) FROM messages") == 0


async def test_text_outside_the_24_hour_window_is_refused_with_131047_and_recorded_as_failed(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    long_ago = datetime.now(timezone.utc) - timedelta(hours=25)
    await post_envelope(service, number, messages=[customer_message("wamid.old", PHONE, "hi", long_ago)])
    answer = await send(service, key, {"to": PHONE, "message": "Sorry for the wait"})
    assert answer.status_code == 500
    body = answer.json()
    assert set(body) == {"error", "errorCode", "errorTitle", "errorSubcode", "errorDetails"}
    assert body["errorCode"] == 131047 and body["error"] == "Re-engagement message"
    failed = await service.db.fetchrow("SELECT status, error_code FROM messages WHERE direction = 'outbound'")
    assert failed["status"] == "failed" and failed["error_code"] == 131047
    assert "message_sent" not in await outbox_events(service.db, workspace_id)


async def test_a_number_that_never_wrote_gets_131047_for_text(service):
    _, _, _, key = await scale_workspace(service.db)
    answer = await send(service, key, {"to": "919800000001", "message": "hello"})
    assert answer.status_code == 500 and answer.json()["errorCode"] == 131047


async def test_templates_outside_the_window_and_every_template_error(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    await templates.add_template(service.db, workspace_id=workspace_id, name="order_update", language="en",
                                 body="Hello {{1}}, order {{2}} is on its way.")
    await templates.add_template(service.db, workspace_id=workspace_id, name="big_sale", language="en",
                                 body="Sale today!", category_name="MARKETING")
    order_update = {"name": "order_update", "language": "en", "parameters": ["Ravi", "42"]}
    ok = await send(service, key, {"to": "919811111111", "type": "template", "template": order_update})
    assert ok.status_code == 200, ok.text
    cases = [
        ({"name": "order_update", "language": "fr", "parameters": ["a", "b"]}, "919811111112", 132001),
        ({"name": "no_such", "language": "en", "parameters": []}, "919811111112", 132001),
        ({"name": "order_update", "language": "en", "parameters": ["only one"]}, "919811111112", 132000),
        ({"name": "order_update", "language": "en", "parameters": ["a", "b"]}, "999123456789", 131026),
        ({"name": "big_sale", "language": "en", "parameters": []}, "997123456789", 131049),
    ]
    for template, to, code in cases:
        answer = await send(service, key, {"to": to, "type": "template", "template": template})
        assert answer.status_code == 500, (template, answer.text)
        assert answer.json()["errorCode"] == code, (template, answer.json())
        assert isinstance(answer.json()["error"], str) and answer.json()["error"]


async def test_a_workspace_with_the_cloud_api_off_gets_feature_disabled_for_org(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    await service.db.execute("UPDATE workspaces SET cloud_api_enabled = false WHERE id = $1", workspace_id)

    async def refused():
        answer = await send(service, key, {"to": PHONE, "message": "hi"})
        return answer if answer.status_code == 403 else None

    answer = await eventually(refused)
    assert answer.json()["error"] == "feature_disabled_for_org"


async def test_an_opted_out_contact_gets_a_clear_refusal_and_nothing_is_sent(service):
    _, number, _, key = await scale_workspace(service.db)
    await customer_writes(service, number, PHONE, "hello")
    out = await service.client.post(f"/api/contacts/{PHONE}/opt-out", headers=bearer(key))
    assert out.status_code == 200, out.text
    answer = await send(service, key, {"to": PHONE, "message": "Buy now"})
    assert answer.status_code == 403 and "opted out" in answer.json()["error"]
    assert await service.db.fetchval("SELECT count(*) FROM messages WHERE direction = 'outbound'") == 0


async def test_an_assigned_only_key_sends_only_to_chats_assigned_to_its_creator(service):
    workspace_id, number, admin, admin_key = await scale_workspace(service.db)
    agent = await builders.member(service.db, workspace_id, "agent")
    limited = (await builders.key(service.db, workspace_id, agent, ("whatsapp_api", "inbox_assigned_only"))).key
    await customer_writes(service, number, PHONE, "hello")
    refused = await send(service, limited, {"to": PHONE, "message": "hi"})
    assert refused.status_code == 404 and refused.json() == {"error": "Contact not found"}
    transfer_via = await service.client.post(f"/api/inbox/conversations/{PHONE}/claim", headers=bearer(admin_key))
    assert transfer_via.status_code == 200
    moved = await service.client.post(f"/api/inbox/conversations/{PHONE}/transfer", headers=bearer(admin_key),
                                      json={"to_user_id": agent})
    assert moved.status_code == 200, moved.text
    allowed = await send(service, limited, {"to": PHONE, "message": "hi"})
    assert allowed.status_code == 200, allowed.text


async def test_two_spellings_of_one_number_are_one_contact_and_one_chat(service):
    _, number, _, key = await scale_workspace(service.db)
    await customer_writes(service, number, "919812345671", "hello")
    for spelling in ("+91 98123 45671", "9812345671", "919812345671"):
        answer = await send(service, key, {"to": spelling, "message": "hi"})
        assert answer.status_code == 200, answer.text
    assert await service.db.fetchval("SELECT count(*) FROM contacts") == 1
    assert await service.db.fetchval("SELECT count(*) FROM conversations") == 1


async def test_a_web_client_chat_takes_only_text_and_the_answer_names_the_channel(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    # The chat was imported from a web-client session (no API makes one), before its actor ever loaded it.
    contact_id = await service.db.fetchval(
        "INSERT INTO contacts (workspace_id, phone, name) VALUES ($1, $2, 'Web visitor') RETURNING id",
        workspace_id, PHONE)
    await service.db.execute("INSERT INTO conversations (workspace_id, phone, contact_id, channel)"
                             " VALUES ($1, $2, $3, 'web_client')", workspace_id, PHONE, contact_id)
    await customer_writes(service, number, PHONE, "hello from the web")
    media = await send(service, key, {"to": PHONE, "type": "image", "media_url": "https://example.com/a.png"})
    assert media.status_code == 400 and "web-client" in media.json()["error"]
    text = await send(service, key, {"to": PHONE, "message": "Hello from the web"})
    assert text.status_code == 200 and text.json()["channel"] == "web_client"


async def test_an_idempotent_retry_returns_the_first_answer_without_sending_twice(service):
    _, number, _, key = await scale_workspace(service.db)
    await customer_writes(service, number, PHONE, "hello")
    body = {"to": PHONE, "message": "Only once"}
    first = await send(service, key, body, **{"Idempotency-Key": "order-42-shipped"})
    again = await send(service, key, body, **{"Idempotency-Key": "order-42-shipped"})
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json() and again.headers["Idempotent-Replayed"] == "true"
    assert await service.db.fetchval("SELECT count(*) FROM messages WHERE direction = 'outbound'") == 1
    async with httpx.AsyncClient(base_url=service.simulator_url) as simulator:
        sent = (await simulator.get(f"/simulator/numbers/{number}/messages", params={"to": PHONE})).json()
    assert len(sent["data"] if isinstance(sent, dict) else sent) == 1
    other = await send(service, key, {"to": PHONE, "message": "Something else"},
                       **{"Idempotency-Key": "order-42-shipped"})
    assert other.status_code == 422 and set(other.json()) == {"error"}


async def test_a_failed_send_is_replayed_too(service):
    _, _, _, key = await scale_workspace(service.db)
    body = {"to": "919800000002", "message": "hello"}
    first = await send(service, key, body, **{"Idempotency-Key": "k1"})
    again = await send(service, key, body, **{"Idempotency-Key": "k1"})
    assert first.status_code == again.status_code == 500 and first.json() == again.json()


async def _status(service, platform_message_id: str, wanted: str) -> bool:
    return await service.db.fetchval("SELECT status FROM messages WHERE platform_message_id = $1",
                                     platform_message_id) == wanted


@pytest.mark.parametrize("body", [
    {"to": PHONE, "message": "hi\u0000there"},
    {"to": PHONE, "type": "template", "template": {"name": "t\u0000", "language": "en"}},
    {"to": PHONE, "type": "template", "template": {"name": "t", "language": "en", "parameters": ["a\u0007"]}},
    {"to": PHONE, "type": "document", "media_url": "https://x.io/a.pdf", "filename": "a\u0000.pdf"},
])
async def test_control_characters_are_refused_before_anything_is_sent(service, body):
    _, number, _, key = await scale_workspace(service.db)
    await customer_writes(service, number, PHONE, "hello")
    answer = await send(service, key, body, **{"Idempotency-Key": "control"})
    assert answer.status_code == 400 and "control characters" in answer.json()["error"]
    assert await service.db.fetchval("SELECT count(*) FROM messages WHERE direction = 'outbound'") == 0


async def test_with_the_cloud_api_off_a_reply_is_refused_as_a_send_is_and_nothing_goes_out(service):
    # One rule for every send (use_cases/chats.py): a member's reply is a send through the platform too.
    workspace_id, number, _, key = await scale_workspace(service.db)
    await customer_writes(service, number, PHONE, "hello")
    await service.db.execute("UPDATE workspaces SET cloud_api_enabled = false WHERE id = $1", workspace_id)

    async def refused():
        answer = await service.client.post(f"/api/inbox/conversations/{PHONE}/reply", headers=bearer(key),
                                           json={"message": "hi"})
        return answer if answer.status_code == 403 else None

    answer = await eventually(refused)
    assert answer.json()["error"] == "feature_disabled_for_org"
    assert await service.db.fetchval(
        "SELECT count(*) FROM messages WHERE direction = 'outbound' AND sender_type = 'agent'") == 0


async def test_an_assigned_only_key_writes_only_the_contacts_of_chats_assigned_to_its_creator(service):
    # As the contact reads and MCP's contact tools: another member's customer is "Contact not found".
    workspace_id, number, admin, admin_key = await scale_workspace(service.db)
    agent = await builders.member(service.db, workspace_id, "agent")
    limited = (await builders.key(service.db, workspace_id, agent, ("contacts", "inbox_assigned_only"))).key
    await customer_writes(service, number, PHONE, "hello")
    refused = await service.client.put(f"/api/contacts/{PHONE}/tags", headers=bearer(limited),
                                       json={"tags": ["vip"]})
    assert refused.status_code == 404 and refused.json() == {"error": "Contact not found"}
    assert await service.db.fetchval("SELECT tags FROM contacts WHERE phone = $1", PHONE) == []
    await service.client.post(f"/api/inbox/conversations/{PHONE}/claim", headers=bearer(admin_key))
    moved = await service.client.post(f"/api/inbox/conversations/{PHONE}/transfer", headers=bearer(admin_key),
                                      json={"to_user_id": agent})
    assert moved.status_code == 200, moved.text
    allowed = await service.client.put(f"/api/contacts/{PHONE}/tags", headers=bearer(limited),
                                       json={"tags": ["vip"]})
    assert allowed.status_code == 200, allowed.text
