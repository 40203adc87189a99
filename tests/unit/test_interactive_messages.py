"""The service's interactive list message on the wire: encoded as Meta's list message and decoded back, each of
Meta's limits refused by name; and the customer's choice coming back through the webhook envelope, with the row's
id and the message it replies to."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import msgspec
import pytest

from inbox_actors.platform.cloud_api import InvalidSendRequest, decode_send_request, encode_send_request
from inbox_actors.platform.payloads import (
    INTERACTIVE,
    MESSAGE_TYPES,
    InboundBatch,
    InboundMessage,
    InteractiveList,
    ListRow,
    SendRequest,
)
from inbox_actors.platform.webhook_envelope import build_envelope, parse_envelope

TO = "447700900123"
NUMBER = "106540352242922"
AT = datetime(2026, 3, 1, 12, 30, 5, tzinfo=timezone.utc)
SURVEY = InteractiveList(
    body="How did we do today?", button="Rate us", section_title="Your rating",
    rows=(ListRow(id="csat-5", title="Very good", description="Everything was sorted out"),
          ListRow(id="csat-3", title="Okay"),
          ListRow(id="csat-1", title="Poor", description="I still need help")),
)


def survey_send(**changes) -> SendRequest:
    return SendRequest(to=TO, type=INTERACTIVE, interactive=msgspec.structs.replace(SURVEY, **changes))


def list_body(**interactive) -> dict:
    """A list message as Meta takes it, its `interactive` parts replaced by those given."""
    parts = {"type": "list", "body": {"text": "How did we do?"}, "action": {
        "button": "Rate us", "sections": [{"rows": [{"id": "a", "title": "Good"}, {"id": "b", "title": "Bad"}]}]}}
    return {"messaging_product": "whatsapp", "recipient_type": "individual", "to": TO, "type": "interactive",
            "interactive": {**parts, **interactive}}


def rows(count: int, **row) -> list[dict]:
    return [{"id": f"row-{n}", "title": f"Row {n}", **row} for n in range(count)]


def refusal_of(body: dict) -> str:
    with pytest.raises(InvalidSendRequest) as refused:
        decode_send_request(json.dumps(body).encode())
    return str(refused.value)


# -- encoding -------------------------------------------------------------------------------------------------

def test_a_list_send_is_encoded_as_meta_s_list_message():
    body = json.loads(encode_send_request(msgspec.structs.replace(survey_send(), callback_data="4711")))
    assert body == {
        "messaging_product": "whatsapp", "recipient_type": "individual", "to": TO, "type": "interactive",
        "interactive": {"type": "list", "body": {"text": "How did we do today?"}, "action": {
            "button": "Rate us", "sections": [{"title": "Your rating", "rows": [
                {"id": "csat-5", "title": "Very good", "description": "Everything was sorted out"},
                {"id": "csat-3", "title": "Okay"},
                {"id": "csat-1", "title": "Poor", "description": "I still need help"}]}]}},
        "biz_opaque_callback_data": "4711",
    }


def test_a_section_without_a_title_is_written_without_one():
    body = json.loads(encode_send_request(survey_send(section_title=None)))
    [section] = body["interactive"]["action"]["sections"]
    assert "title" not in section


def test_an_interactive_send_without_its_list_is_the_caller_s_bug():
    with pytest.raises(InvalidSendRequest):
        encode_send_request(SendRequest(to=TO, type=INTERACTIVE))


@pytest.mark.parametrize("request_", [
    survey_send(),
    survey_send(section_title=None),
    msgspec.structs.replace(survey_send(), callback_data="4711"),
    survey_send(rows=tuple(ListRow(id="x" * 200, title="t" * 24, description="d" * 72) if n == 0 else
                           ListRow(id=f"row-{n}", title=f"Row {n}") for n in range(10)), body="b" * 1024,
                button="B" * 20),
])
def test_list_sends_survive_a_round_trip(request_):
    assert decode_send_request(encode_send_request(request_)) == request_


def test_interactive_is_on_the_wire_but_not_a_type_clients_send():
    assert INTERACTIVE not in MESSAGE_TYPES


# -- decoding Meta's request ----------------------------------------------------------------------------------

def test_rows_of_every_section_are_read_under_the_first_section_s_title():
    body = list_body(action={"button": "Choose", "sections": [
        {"title": "Happy", "rows": [{"id": "5", "title": "Great"}]},
        {"title": "Unhappy", "rows": [{"id": "1", "title": "Bad", "description": "Not solved"}]}]},
        header={"type": "text", "text": "Survey"}, footer={"text": "Thanks"})
    request = decode_send_request(json.dumps(body).encode())
    assert request == SendRequest(to=TO, type=INTERACTIVE, interactive=InteractiveList(
        body="How did we do?", button="Choose", section_title="Happy",
        rows=(ListRow(id="5", title="Great"), ListRow(id="1", title="Bad", description="Not solved"))))


@pytest.mark.parametrize("changes, words", [
    ({"type": "button"}, "interactive.type 'button' is not supported; it must be list"),
    ({"type": "product_list"}, "must be list"),
    ({"body": {"text": ""}}, "interactive.body.text is required"),
    ({"body": None}, "interactive.body.text is required"),
    ({"body": {"text": "b" * 1025}}, "interactive.body.text must be at most 1024 characters long (1025 given)"),
    ({"action": {"sections": [{"rows": rows(1)}]}}, "interactive.action.button is required"),
    ({"action": {"button": "B" * 21, "sections": [{"rows": rows(1)}]}},
     "interactive.action.button must be at most 20 characters long"),
    ({"action": {"button": "Rate"}}, "interactive.action.sections is required"),
    ({"action": {"button": "Rate", "sections": [{"rows": []}]}}, "at least one row"),
    ({"action": {"button": "Rate", "sections": [{"rows": rows(11)}]}},
     "total row count 11 exceeds the maximum of 10 rows"),
    ({"action": {"button": "Rate", "sections": [{"title": "One", "rows": rows(6)},
                                                {"title": "Two", "rows": rows(5, id="more")}]}},
     "total row count 11 exceeds the maximum of 10 rows across all sections"),
    ({"action": {"button": "Rate", "sections": [{"rows": [{"id": "a", "title": "t" * 25}]}]}},
     "interactive.action.sections[0].rows[0].title must be at most 24 characters long"),
    ({"action": {"button": "Rate", "sections": [{"rows": [{"id": "a", "title": "t", "description": "d" * 73}]}]}},
     "interactive.action.sections[0].rows[0].description must be at most 72 characters long"),
    ({"action": {"button": "Rate", "sections": [{"rows": [{"id": "i" * 201, "title": "t"}]}]}},
     "interactive.action.sections[0].rows[0].id must be at most 200 characters long"),
    ({"action": {"button": "Rate", "sections": [{"rows": [{"id": "", "title": "t"}]}]}}, "are required"),
    ({"action": {"button": "Rate", "sections": [{"rows": [{"id": "a", "title": ""}]}]}}, "are required"),
    ({"action": {"button": "Rate", "sections": [{"rows": [{"id": "a", "title": "One"}, {"id": "a", "title": "Two"}]}]}},
     "interactive.action.sections[0].rows[1].id 'a' is not unique"),
    ({"action": {"button": "Rate", "sections": [{"title": "One", "rows": [{"id": "a", "title": "A"}]},
                                                {"title": "Two", "rows": [{"id": "a", "title": "B"}]}]}},
     "interactive.action.sections[1].rows[0].id 'a' is not unique"),
    ({"action": {"button": "Rate", "sections": [{"title": "One", "rows": rows(1)},
                                                {"rows": [{"id": "z", "title": "Z"}]}]}},
     "interactive.action.sections[1].title is required when a list has more than one section"),
    ({"action": {"button": "Rate", "sections": [{"title": "s" * 25, "rows": rows(1)}]}},
     "interactive.action.sections[0].title must be at most 24 characters long"),
])
def test_what_meta_refuses_of_a_list_is_refused_by_name(changes, words):
    assert words in refusal_of(list_body(**changes))


def test_an_interactive_message_without_interactive_is_refused():
    body = list_body()
    del body["interactive"]
    assert "interactive is required" in refusal_of(body)


def test_a_row_that_is_not_meta_s_shape_is_refused():
    assert refusal_of(list_body(action={"button": "Rate", "sections": [{"rows": [{"id": 5, "title": "Five"}]}]}))


# -- the customer's choice in the webhook envelope ----------------------------------------------------------------

def meta_envelope(message: dict) -> bytes:
    value = {"messaging_product": "whatsapp",
             "metadata": {"display_phone_number": "15550783881", "phone_number_id": NUMBER},
             "contacts": [{"profile": {"name": "Kerry Fisher"}, "wa_id": "16315551234"}], "messages": [message]}
    change = {"field": "messages", "value": value}
    return json.dumps({"object": "whatsapp_business_account",
                       "entry": [{"id": "102290129340398", "changes": [change]}]}).encode()


def only_message(raw: bytes) -> InboundMessage:
    [batch] = parse_envelope(raw)
    [message] = batch.messages
    return message


def test_a_list_reply_as_meta_posts_it_gives_the_row_s_id_and_the_message_replied_to():
    message = only_message(meta_envelope({
        "context": {"from": "15550783881", "id": "wamid.survey"}, "from": "16315551234", "id": "wamid.choice",
        "timestamp": "1772368205", "type": "interactive",
        "interactive": {"type": "list_reply", "list_reply": {"id": "csat-5", "title": "Very good",
                                                             "description": "Everything was sorted out"}}}))
    assert message == InboundMessage(message_id="wamid.choice", from_phone="16315551234", at=AT, type="interactive",
                                     text="Very good", profile_name="Kerry Fisher", reply_id="csat-5",
                                     context_id="wamid.survey")


def test_a_reply_button_and_a_quick_reply_button_give_their_ids():
    reply = only_message(meta_envelope({
        "context": {"from": "15550783881", "id": "wamid.question"}, "from": "16315551234", "id": "wamid.1",
        "timestamp": "1772368205", "type": "interactive",
        "interactive": {"type": "button_reply", "button_reply": {"id": "yes", "title": "Yes please"}}}))
    assert (reply.text, reply.reply_id, reply.context_id) == ("Yes please", "yes", "wamid.question")
    quick = only_message(meta_envelope({
        "context": {"from": "15550783881", "id": "wamid.template"}, "from": "16315551234", "id": "wamid.2",
        "timestamp": "1772368205", "type": "button", "button": {"text": "Stop promotions", "payload": "opt-out"}}))
    assert (quick.text, quick.reply_id, quick.context_id) == ("Stop promotions", "opt-out", "wamid.template")


def test_any_message_s_context_id_is_kept_and_a_forwarded_context_has_none():
    quoted = only_message(meta_envelope({
        "context": {"from": "15550783881", "id": "wamid.earlier"}, "from": "16315551234", "id": "wamid.3",
        "timestamp": "1772368205", "type": "text", "text": {"body": "About this one"}}))
    assert (quoted.text, quoted.reply_id, quoted.context_id) == ("About this one", None, "wamid.earlier")
    forwarded = only_message(meta_envelope({
        "context": {"forwarded": True}, "from": "16315551234", "id": "wamid.4", "timestamp": "1772368205",
        "type": "text", "text": {"body": "Look"}}))
    assert (forwarded.reply_id, forwarded.context_id) == (None, None)


def test_build_envelope_writes_a_list_reply_as_meta_does():
    choice = InboundMessage(message_id="wamid.choice", from_phone=TO, at=AT, type="interactive", text="Okay",
                            reply_id="csat-3", context_id="wamid.survey")
    value = json.loads(build_envelope(NUMBER, "15550783881", messages=[choice]))["entry"][0]["changes"][0]["value"]
    assert value["messages"] == [{
        "from": TO, "id": "wamid.choice", "timestamp": "1772368205", "type": "interactive",
        "context": {"from": "15550783881", "id": "wamid.survey"},
        "interactive": {"type": "list_reply", "list_reply": {"id": "csat-3", "title": "Okay"}},
    }]


def test_replies_survive_a_round_trip():
    messages = [
        InboundMessage(message_id="wamid.a", from_phone=TO, at=AT, type="interactive", text="Very good",
                       profile_name="Ann", reply_id="csat-5", context_id="wamid.survey"),
        InboundMessage(message_id="wamid.b", from_phone=TO, at=AT, type="button", text="Stop promotions",
                       profile_name="Ann", reply_id="opt-out", context_id="wamid.template"),
        InboundMessage(message_id="wamid.c", from_phone=TO, at=AT, type="text", text="and one more thing",
                       profile_name="Ann", context_id="wamid.survey"),
        InboundMessage(message_id="wamid.d", from_phone=TO, at=AT, type="image", text="see", media_id="42",
                       profile_name="Ann"),
    ]
    body = build_envelope(NUMBER, "15550000000", messages=messages)
    assert parse_envelope(body) == [InboundBatch(phone_number_id=NUMBER, messages=tuple(messages))]
