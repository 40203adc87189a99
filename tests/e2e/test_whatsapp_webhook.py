"""The platform's webhook over a real socket: verification, signatures, retries and reordering."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from tests.e2e.chat_helpers import chat, customer_writes, outbox_events, scale_workspace
from tests.e2e.conftest import bearer
from tests.e2e.platform_webhooks import customer_message, post_envelope, status
from tests.waiting import eventually

PHONE = "447700900123"


async def test_verification_echoes_the_challenge_only_for_the_right_token(service):
    token = service.app.extensions["inbox"].platform.verify_token
    ok = await service.client.get("/webhooks/whatsapp", params={
        "hub.mode": "subscribe", "hub.verify_token": token, "hub.challenge": "1158201444"})
    assert ok.status_code == 200 and ok.text == "1158201444"
    wrong = await service.client.get("/webhooks/whatsapp", params={
        "hub.mode": "subscribe", "hub.verify_token": "guess", "hub.challenge": "1"})
    assert wrong.status_code == 403 and wrong.json()["error"] == "verification_failed"


async def test_a_bad_or_missing_signature_is_refused_and_nothing_is_stored(service):
    workspace_id, number, _, _ = await scale_workspace(service.db)
    message = customer_message("wamid.bad-signature", PHONE, "hello", datetime.now(timezone.utc))
    wrong_secret = await post_envelope(service, number, messages=[message], secret="not-the-secret")
    missing = await post_envelope(service, number, messages=[message], signature="")
    assert wrong_secret.status_code == 401 and wrong_secret.json()["error"] == "invalid_signature"
    assert missing.status_code == 401
    assert await service.db.fetchval("SELECT count(*) FROM messages") == 0
    assert await outbox_events(service.db, workspace_id) == []


async def test_a_malformed_envelope_is_a_400(service):
    from inbox_actors.platform.webhook_envelope import sign

    body = b'{"object": "whatsapp_business_account", "entry": "nope"}'
    secret = service.app.extensions["inbox"].platform.app_secret
    answer = await service.client.post("/webhooks/whatsapp", content=body,
                                       headers={"X-Hub-Signature-256": sign(secret, body)})
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_envelope"


async def test_the_same_message_delivered_twice_is_stored_once(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    message = customer_message("wamid.retry-1", PHONE, "is anyone there?", datetime.now(timezone.utc))
    first = await post_envelope(service, number, messages=[message])
    again = await post_envelope(service, number, messages=[message, message])
    assert first.status_code == again.status_code == 200
    assert await service.db.fetchval("SELECT count(*) FROM messages WHERE direction = 'inbound'") == 1
    detail = await chat(service, key, PHONE)
    assert detail["counts"]["from_customer"] == 1 and detail["unread_count"] == 1
    events = await outbox_events(service.db, workspace_id)
    assert events.count("message_received") == 1 and events.count("contact_created") == 1


async def test_a_late_status_never_moves_a_message_backwards(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    await customer_writes(service, number, PHONE, "hello")
    sent = await service.client.post("/api/send-message", headers=bearer(key),
                                     json={"to": PHONE, "message": "We are on it."})
    assert sent.status_code == 200, sent.text
    message_id = sent.json()["messageId"]
    # Let the simulator's own statuses land first, then replay them out of order and twice.
    await eventually(lambda: _status_of(service, message_id, "read"))
    now = datetime.now(timezone.utc)
    replay = [status(message_id, PHONE, "read", now),
              status(message_id, PHONE, "delivered", now - timedelta(seconds=5)),
              status(message_id, PHONE, "sent", now - timedelta(seconds=9)),
              status(message_id, PHONE, "failed", now, error_code=131026, error_title="Message undeliverable")]
    answer = await post_envelope(service, number, statuses=replay)
    assert answer.status_code == 200
    assert await _status_of(service, message_id, "read")
    events = await outbox_events(service.db, workspace_id)
    assert events.count("message_status") == 2  # delivered and read, once each
    receipts = await service.db.fetch(
        "SELECT r.status FROM receipts r JOIN messages m ON m.id = r.message_id WHERE m.platform_message_id = $1",
        message_id)
    assert sorted(row["status"] for row in receipts) == ["delivered", "failed", "read", "sent"]


async def test_a_number_no_workspace_owns_is_acknowledged_and_dropped(service):
    message = customer_message("wamid.nobody", PHONE, "hello", datetime.now(timezone.utc))
    answer = await post_envelope(service, "000000000000001", messages=[message])
    assert answer.status_code == 200
    assert await service.db.fetchval("SELECT count(*) FROM messages") == 0


async def _status_of(service, platform_message_id: str, wanted: str) -> bool:
    current = await service.db.fetchval("SELECT status FROM messages WHERE platform_message_id = $1",
                                        platform_message_id)
    return current == wanted


async def test_a_customer_message_with_nul_is_stored_not_retried_forever(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    message = customer_message("wamid.nul", PHONE, "hello\x00there", datetime.now(timezone.utc), name="A\x00B")
    answer = await post_envelope(service, number, messages=[message])
    assert answer.status_code == 200
    assert await service.db.fetchval("SELECT text FROM messages") == "hello\ufffdthere"


async def test_platform_numbers_are_taken_as_complete_numbers(service):
    """A Danish WhatsApp id has 10 digits with its country code; it must not become an Indian number."""
    workspace_id, number, _, key = await scale_workspace(service.db)
    message = customer_message("wamid.dk", "4522334455", "hej", datetime.now(timezone.utc))
    assert (await post_envelope(service, number, messages=[message])).status_code == 200
    assert await service.db.fetchval("SELECT phone FROM conversations") == "4522334455"


async def test_a_status_reported_under_another_spelling_reaches_the_chat_it_was_sent_from(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    await customer_writes(service, number, PHONE, "hello")
    sent = await service.client.post("/api/send-message", headers=bearer(key), json={"to": PHONE, "message": "Hi"})
    message_id = sent.json()["messageId"]
    await eventually(lambda: _status_of(service, message_id, "read"))
    other_spelling = "4477009001239"  # what the platform might report as the recipient's WhatsApp id
    answer = await post_envelope(service, number, statuses=[
        status(message_id, other_spelling, "failed", datetime.now(timezone.utc), error_code=1, error_title="x")])
    assert answer.status_code == 200
    assert await service.db.fetchval("SELECT count(*) FROM conversations") == 1
    assert await _status_of(service, message_id, "read")
