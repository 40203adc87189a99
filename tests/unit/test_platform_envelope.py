"""The inbound webhook's signature and envelope: Meta's shapes in, the service's batches out, and back."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from inbox_actors.platform.payloads import InboundBatch, InboundMessage, StatusUpdate
from inbox_actors.platform.webhook_envelope import (
    InvalidEnvelope,
    build_envelope,
    parse_envelope,
    sign,
    verify_signature,
)

SECRET = "app-secret"
AT = datetime(2026, 3, 1, 12, 30, 5, tzinfo=timezone.utc)


def meta_envelope(*values: dict, field: str = "messages") -> bytes:
    """An envelope as Meta posts it, with fields the service does not read."""
    changes = [{"field": field, "value": value} for value in values]
    return json.dumps({"object": "whatsapp_business_account",
                       "entry": [{"id": "102290129340398", "changes": changes}]}).encode()


def meta_value(**parts) -> dict:
    return {"messaging_product": "whatsapp",
            "metadata": {"display_phone_number": "15550783881", "phone_number_id": "106540352242922"}, **parts}


# -- signatures ---------------------------------------------------------------------------------------------

def test_a_signature_verifies_only_the_exact_body_with_the_same_secret():
    body = b'{"object":"whatsapp_business_account","entry":[]}'
    header = sign(SECRET, body)
    assert header.startswith("sha256=") and len(header) == len("sha256=") + 64
    assert verify_signature(SECRET, body, header)
    assert not verify_signature(SECRET, body + b" ", header)
    assert not verify_signature("other-secret", body, header)


@pytest.mark.parametrize("header", [None, "", "sha256=", "sha1=abc", "sha256=zz", "abc"])
def test_missing_or_malformed_signatures_are_refused(header):
    assert not verify_signature(SECRET, b"{}", header)


def test_a_known_signature_matches_meta_s_algorithm():
    # HMAC-SHA256 of "hello" under "app-secret", computed independently (openssl dgst -sha256 -hmac).
    expected = "sha256=ad5c6aa52b4bf4d1955ccd07b1393163fa5aa461e01cedabf58a512035063c49"
    assert sign(SECRET, b"hello") == expected
    assert verify_signature(SECRET, b"hello", expected.upper().replace("SHA256=", "sha256="))


# -- reading Meta's envelope ---------------------------------------------------------------------------------

def test_a_text_message_with_its_sender_s_profile_name():
    body = meta_envelope(meta_value(
        contacts=[{"profile": {"name": "Kerry Fisher"}, "wa_id": "16315551234"}],
        messages=[{"from": "16315551234", "id": "wamid.ABGGFlCGg0cvAgo-sJQh43L5Pe4W", "timestamp": "1772368205",
                   "type": "text", "text": {"body": "Hello, my order?"}, "context": {"forwarded": False}}],
    ))
    [batch] = parse_envelope(body)
    assert batch == InboundBatch(phone_number_id="106540352242922", messages=(InboundMessage(
        message_id="wamid.ABGGFlCGg0cvAgo-sJQh43L5Pe4W", from_phone="16315551234", at=AT, type="text",
        text="Hello, my order?", profile_name="Kerry Fisher"),))


def test_media_messages_carry_their_id_and_caption():
    body = meta_envelope(meta_value(messages=[
        {"from": "16315551234", "id": "wamid.1", "timestamp": "1772368205", "type": "image",
         "image": {"caption": "the receipt", "mime_type": "image/jpeg", "sha256": "x", "id": "1234567"}},
        {"from": "16315551234", "id": "wamid.2", "timestamp": "1772368205", "type": "location",
         "location": {"latitude": 1.0, "longitude": 2.0}},
    ]))
    [batch] = parse_envelope(body)
    image, location = batch.messages
    assert (image.type, image.text, image.media_id, image.profile_name) == ("image", "the receipt", "1234567", None)
    assert (location.type, location.text, location.media_id) == ("location", None, None)


def test_statuses_with_and_without_errors():
    body = meta_envelope(meta_value(statuses=[
        {"id": "wamid.out1", "status": "delivered", "timestamp": "1772368205", "recipient_id": "16315551234",
         "conversation": {"id": "c1", "origin": {"type": "service"}}, "pricing": {"billable": True}},
        {"id": "wamid.out2", "status": "failed", "timestamp": "1772368205", "recipient_id": "16315551234",
         "errors": [{"code": 131026, "title": "Message undeliverable", "message": "Message undeliverable",
                     "error_data": {"details": "..."}}]},
    ]))
    [batch] = parse_envelope(body)
    assert batch.messages == ()
    assert batch.statuses == (
        StatusUpdate(message_id="wamid.out1", recipient_phone="16315551234", status="delivered", at=AT),
        StatusUpdate(message_id="wamid.out2", recipient_phone="16315551234", status="failed", at=AT,
                     error_code=131026, error_title="Message undeliverable"),
    )


def test_one_batch_per_messages_change_and_other_fields_are_ignored():
    other = {"object": "whatsapp_business_account", "entry": [{"id": "1", "changes": [
        {"field": "message_template_status_update", "value": {"event": "APPROVED", "message_template_id": 1}},
        {"field": "messages", "value": meta_value()},
        {"field": "messages", "value": {**meta_value(), "metadata": {"phone_number_id": "999"}}},
    ]}]}
    batches = parse_envelope(json.dumps(other).encode())
    assert [batch.phone_number_id for batch in batches] == ["106540352242922", "999"]


@pytest.mark.parametrize("body", [
    b"",
    b"not json",
    b"[]",
    b'{"entry": []}',                                                  # no object
    b'{"object": "page", "entry": []}',                                # another product's webhook
    meta_envelope({"metadata": {}}),                                   # no phone_number_id
    meta_envelope(meta_value(messages=[{"id": "wamid.1", "timestamp": "1", "type": "text"}])),  # no sender
    meta_envelope(meta_value(messages=[{"from": "1", "id": "w", "timestamp": "soon", "type": "text"}])),
    meta_envelope(meta_value(statuses=[{"id": "w", "status": "sent"}])),  # no timestamp, no recipient
    b'{"object": "whatsapp_business_account", "entry": [{"changes": [{"field": "messages"}]}]}',
])
def test_malformed_envelopes_are_refused_by_name(body):
    with pytest.raises(InvalidEnvelope):
        parse_envelope(body)


# -- writing, and the round trip ----------------------------------------------------------------------------

def test_build_envelope_writes_meta_s_shape():
    message = InboundMessage(message_id="wamid.in", from_phone="447700900123", at=AT, type="text", text="hi",
                             profile_name="Ann")
    envelope = json.loads(build_envelope("106540352242922", "15550783881", messages=[message]))
    assert envelope["object"] == "whatsapp_business_account"
    [entry] = envelope["entry"]
    [change] = entry["changes"]
    assert change["field"] == "messages"
    assert change["value"] == {
        "messaging_product": "whatsapp",
        "metadata": {"phone_number_id": "106540352242922", "display_phone_number": "15550783881"},
        "contacts": [{"wa_id": "447700900123", "profile": {"name": "Ann"}}],
        "messages": [{"from": "447700900123", "id": "wamid.in", "timestamp": "1772368205", "type": "text",
                      "text": {"body": "hi"}}],
    }


def test_messages_and_statuses_survive_a_round_trip():
    messages = [
        InboundMessage(message_id="wamid.a", from_phone="447700900123", at=AT, type="text", text="hi",
                       profile_name="Ann"),
        InboundMessage(message_id="wamid.b", from_phone="447700900123", at=AT, type="document",
                       text="invoice", media_id="998877", profile_name="Ann"),
        InboundMessage(message_id="wamid.c", from_phone="919812345678", at=AT, type="audio", media_id="42"),
    ]
    statuses = [
        StatusUpdate(message_id="wamid.x", recipient_phone="447700900123", status="read", at=AT),
        StatusUpdate(message_id="wamid.y", recipient_phone="998100000001", status="failed", at=AT,
                     error_code=131026, error_title="Message undeliverable"),
    ]
    body = build_envelope("555", "15550000000", messages=messages, statuses=statuses)
    assert parse_envelope(body) == [InboundBatch(phone_number_id="555", messages=tuple(messages),
                                                 statuses=tuple(statuses))]
