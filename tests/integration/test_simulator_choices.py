"""The simulator and the service's interactive list message, on real sockets: a list send judged as Meta judges it
(its limits, the 24-hour window), kept in the sent list, and a simulated customer choosing one of its rows through
`POST /simulator/customers/{phone}/choices`, which reaches the service as Meta's signed `list_reply` webhook."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from inbox_actors.outbound_http.verified_tls import verified_context
from inbox_actors.platform.simulator.model import Simulator, SimulatorConfig
from inbox_actors.platform.simulator.server import serve_simulator
from inbox_actors.platform.webhook_envelope import verify_signature
from tests.integration.test_simulator import (
    CUSTOMER,
    DELAYS,
    NUMBER,
    SECRET,
    TOKEN,
    ManualClock,
    WhatsAppReceiver,
    customer_writes,
    error_of,
    send,
)
from tests.waiting import eventually
from tests.webhook_receiver import serve_receiver

SURVEY_ROWS = [{"id": "csat-5", "title": "Very good", "description": "Everything was sorted out"},
               {"id": "csat-3", "title": "Okay"},
               {"id": "csat-1", "title": "Poor", "description": "I still need help"}]


@pytest.fixture
async def receiver(nursery) -> WhatsAppReceiver:
    receiving = WhatsAppReceiver()
    await nursery.start(serve_receiver, receiving)
    return receiving


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def simulator(nursery, receiver, clock) -> Simulator:
    running = Simulator(SimulatorConfig(app_secret=SECRET, access_token=TOKEN, webhook_url=receiver.url,
                                        delays=DELAYS, webhook_retry_delays=(0.01,), webhook_timeout=1.0),
                        clock=clock)
    await nursery.start(serve_simulator, running)
    return running


@pytest.fixture
async def http(simulator):
    async with httpx.AsyncClient(verify=verified_context(), base_url=simulator.url, timeout=5.0) as client:
        yield client


def survey(body: str = "How did we do today?", rows=SURVEY_ROWS, **action) -> dict:
    return {"type": "interactive", "interactive": {"type": "list", "body": {"text": body}, "action": {
        "button": "Rate us", "sections": [{"title": "Your rating", "rows": rows}], **action}}}


async def send_survey(http, **content) -> str:
    response = await send(http, **survey(**content))
    assert response.status_code == 200, response.text
    return response.json()["messages"][0]["id"]


async def choose(http, choice: str, *, phone: str = CUSTOMER, number: str = NUMBER, **extra) -> httpx.Response:
    return await http.post(f"/simulator/customers/{phone}/choices",
                           json={"phone_number_id": number, "choice": choice, **extra})


async def test_a_list_send_is_kept_with_its_rows_and_its_body_as_text(http):
    await customer_writes(http)
    message_id = await send_survey(http)
    sent = (await http.get(f"/simulator/numbers/{NUMBER}/messages", params={"to": CUSTOMER})).json()["data"]
    [row] = [row for row in sent if row["message_id"] == message_id]
    assert (row["type"], row["text"]) == ("interactive", "How did we do today?")
    assert row["interactive"] == {"body": "How did we do today?", "button": "Rate us", "section_title": "Your rating",
                                  "rows": [{**choice, "description": choice.get("description")}
                                           for choice in SURVEY_ROWS]}


async def test_a_list_meta_would_refuse_is_error_100_in_words_that_name_the_limit(http):
    await customer_writes(http)
    too_many = await send(http, **survey(rows=[{"id": f"row-{n}", "title": f"Row {n}"} for n in range(11)]))
    assert too_many.status_code == 400 and error_of(too_many)["code"] == 100
    assert "total row count 11" in error_of(too_many)["error_data"]["details"]
    long_title = await send(http, **survey(rows=[{"id": "a", "title": "t" * 25}]))
    assert error_of(long_title)["code"] == 100
    assert "title must be at most 24 characters" in error_of(long_title)["error_data"]["details"]
    stats = (await http.get("/simulator/stats")).json()
    assert stats["sends_refused"] == {"100": 2} and stats["sends_accepted"] == 0


async def test_the_customer_chooses_a_row_of_the_newest_list_by_its_title_in_any_case(http, receiver):
    await customer_writes(http)
    older = await send_survey(http, body="An older survey")
    newest = await send_survey(http)
    answer = await choose(http, "very GOOD")
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert result["message_id"].startswith("wamid.") and result["message_id"] not in (older, newest)
    assert (result["delivered_to_service"], result["service_status"], result["media_id"]) == (True, 200, None)
    [choice] = await eventually(lambda: [message for message in receiver.messages() if message.type == "interactive"])
    assert (choice.message_id, choice.from_phone, choice.text, choice.reply_id, choice.context_id) == (
        result["message_id"], CUSTOMER, "Very good", "csat-5", newest)
    for signature, body in receiver.posts:
        assert verify_signature(SECRET, body, signature)
    stats = (await http.get("/simulator/stats")).json()
    assert (stats["customer_messages"], stats["customer_messages_delivered"]) == (2, 2)


async def test_a_choice_names_an_older_list_by_its_message_id_and_a_row_by_its_id(http, receiver):
    await customer_writes(http)
    older = await send_survey(http, body="An older survey")
    await send_survey(http)
    answer = await choose(http, "csat-1", message_id=older)
    assert answer.status_code == 200, answer.text
    [choice] = await eventually(lambda: [message for message in receiver.messages() if message.type == "interactive"])
    assert (choice.text, choice.reply_id, choice.context_id) == ("Poor", "csat-1", older)


async def test_lists_keep_to_the_24_hour_window_and_a_choice_opens_it_again(http, clock):
    assert error_of(await send(http, **survey()))["code"] == 131047           # the customer never wrote
    await customer_writes(http)
    message_id = await send_survey(http)
    clock.at += timedelta(hours=24, minutes=1)
    assert error_of(await send(http, **survey()))["code"] == 131047
    assert (await choose(http, "Okay", message_id=message_id)).status_code == 200
    assert (await send(http, **survey())).status_code == 200
    assert (await send(http)).status_code == 200                              # text too


async def test_choices_the_customer_cannot_make_are_400_with_a_sentence(http):
    await customer_writes(http)
    text_id = (await send(http)).json()["messages"][0]["id"]
    assert "no interactive message" in error_of(await choose(http, "Okay"))
    list_id = await send_survey(http)
    refusals = [
        await choose(http, "Great"),                                          # not a row
        await choose(http, "Okay", message_id=text_id),                       # not a list
        await choose(http, "Okay", message_id="wamid.nothing"),               # never sent
        await choose(http, "Okay", number="222"),                             # that number sent no list
        await choose(http, "Okay", phone="447700900999"),                     # nor to another customer
        await choose(http, "Okay", phone="not-a-phone"),
        await choose(http, "Okay", message_id=list_id, text="and?"),          # a field the route does not take
        await http.post(f"/simulator/customers/{CUSTOMER}/choices", json={"phone_number_id": NUMBER}),
        await http.post(f"/simulator/customers/{CUSTOMER}/choices", content=b"not json"),
    ]
    assert [response.status_code for response in refusals] == [400] * len(refusals)
    sentences = [error_of(response) for response in refusals]
    assert all(isinstance(sentence, str) and sentence for sentence in sentences)
    assert "'Great' is not a row of that list" in sentences[0] and "csat-5" in sentences[0]
    assert f"message {text_id} is a text message" in sentences[1]
    assert "no message wamid.nothing" in sentences[2]
    assert "'not-a-phone' is not a phone number" in sentences[5]
    stats = (await http.get("/simulator/stats")).json()
    assert stats["customer_messages"] == 1                                    # only the first message
