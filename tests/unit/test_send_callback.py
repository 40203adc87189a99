"""A send's callback data on the wire: the message row's id out in the Cloud API request, echoed back on its
statuses (Meta's `biz_opaque_callback_data`), and read back into the row id only when it is one of ours."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import msgspec
import pytest

from inbox_actors.conversations.send_answers import message_verdict
from inbox_actors.conversations.send_callback import callback_data, message_id_of
from inbox_actors.platform.cloud_api import InvalidSendRequest, decode_send_request, encode_send_request
from inbox_actors.platform.payloads import SendRequest, StatusUpdate
from inbox_actors.platform.webhook_envelope import build_envelope, parse_envelope

AT = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def test_the_request_carries_the_callback_data_only_when_there_is_one():
    tracked = SendRequest(to="447700900123", type="template", template_name="order_update", template_language="en",
                          callback_data=callback_data(4711))
    body = json.loads(encode_send_request(tracked))
    assert body["biz_opaque_callback_data"] == "4711"
    assert decode_send_request(encode_send_request(tracked)) == tracked
    untracked = msgspec.structs.replace(tracked, callback_data=None)
    assert "biz_opaque_callback_data" not in json.loads(encode_send_request(untracked))
    assert decode_send_request(encode_send_request(untracked)).callback_data is None


def test_callback_data_longer_than_meta_takes_is_refused():
    body = json.loads(encode_send_request(SendRequest(to="447700900123", text="hi")))
    body["biz_opaque_callback_data"] = "x" * 513
    with pytest.raises(InvalidSendRequest):
        decode_send_request(json.dumps(body).encode())


def test_statuses_carry_it_back_through_the_envelope():
    statuses = [StatusUpdate(message_id="wamid.a", recipient_phone="447700900123", status="sent", at=AT,
                             callback_data="4711"),
                StatusUpdate(message_id="wamid.b", recipient_phone="447700900123", status="read", at=AT)]
    raw = build_envelope("106540352242922", "15550000000", statuses=statuses)
    value = json.loads(raw)["entry"][0]["changes"][0]["value"]
    assert [status.get("biz_opaque_callback_data") for status in value["statuses"]] == ["4711", None]
    [batch] = parse_envelope(raw)
    assert list(batch.statuses) == statuses


@pytest.mark.parametrize("text, row_id", [
    ("4711", 4711), ("9223372036854775807", 2**63 - 1), (None, None), ("", None), ("0", None), ("-3", None),
    ("12a", None), ("9223372036854775808", None), ("٣", None), ("order-42", None), (" 12", None),
])
def test_only_a_row_id_of_ours_is_read_back(text, row_id):
    assert message_id_of(text) == row_id


def test_a_message_row_answers_once_its_outcome_is_known():
    assert message_verdict("pending", None, "whatsapp", None, None) is None
    sent = message_verdict("delivered", "wamid.a", "whatsapp", None, None)
    assert sent.status == 200 and msgspec.to_builtins(sent.body) == {
        "success": True, "messageId": "wamid.a", "channel": "whatsapp"}
    failed = message_verdict("failed", None, "whatsapp", 131000, "Send outcome unknown")
    assert failed.status == 500 and msgspec.to_builtins(failed.body)["errorCode"] == 131000
