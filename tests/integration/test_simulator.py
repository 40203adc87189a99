"""The platform simulator on a real socket, posting its webhooks to a receiver on another real socket.

Delays are real but tiny (10 to 30 ms); the 24-hour window moves with a hand-set clock. The receiver can answer
slowly, fail, or hold posts, and counts how many of each kind (statuses, customer messages) it has at once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import msgspec
import pytest
import trio

from inbox_actors.outbound_http.verified_tls import verified_context
from inbox_actors.platform.payloads import InboundMessage, StatusUpdate
from inbox_actors.platform.simulator.model import Simulator, SimulatorConfig
from inbox_actors.platform.simulator.rules import StatusDelays
from inbox_actors.platform.simulator.server import serve_simulator
from inbox_actors.platform.template_catalog import InMemoryTemplateCatalog, TemplateSpec
from inbox_actors.platform.webhook_envelope import SIGNATURE_HEADER, parse_envelope, verify_signature
from tests.waiting import eventually
from tests.webhook_receiver import Received, Receiver, serve_receiver

SECRET = "simulator-app-secret"
TOKEN = "simulator-access-token"
NUMBER = "106540352242922"
CUSTOMER = "447700900123"
NO_RECEIPTS = "447700900120"          # ends in 0: read receipts off by default
DELAYS = StatusDelays(sent=0.01, delivered=0.02, read=0.03)
AUTH = {"Authorization": f"Bearer {TOKEN}"}


class ManualClock:
    def __init__(self) -> None:
        self.at = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)

    def now(self) -> datetime:
        return self.at


@dataclass
class WhatsAppReceiver(Receiver):
    """The service's webhook endpoint, reduced to recording what arrives (and failing when told to): the shared
    receiver, answering its own way because the simulator treats status posts and customer messages apart."""

    posts: list[tuple[str | None, bytes]] = field(default_factory=list)   # (signature header, raw body), answered 2xx
    fail_next: int = 0
    status_code: int = 200
    delay: float = 0.0                                                     # before answering
    statuses_held: trio.Event | None = None                                # status posts wait for it when set up
    in_flight: dict[str, int] = field(default_factory=lambda: {"statuses": 0, "messages": 0})
    most_in_flight: dict[str, int] = field(default_factory=lambda: {"statuses": 0, "messages": 0})

    async def answer(self, received: Received) -> int:
        kind = "statuses" if any(batch.statuses for batch in parse_envelope(received.body)) else "messages"
        self.in_flight[kind] += 1
        self.most_in_flight[kind] = max(self.most_in_flight[kind], self.in_flight[kind])
        try:
            if kind == "statuses" and self.statuses_held is not None:
                await self.statuses_held.wait()
            await trio.sleep(self.delay)
        finally:
            self.in_flight[kind] -= 1
        if self.fail_next:
            self.fail_next -= 1
            return 503
        self.posts.append((received.headers.get(SIGNATURE_HEADER.lower()), received.body))
        return self.status_code

    def statuses(self) -> list[StatusUpdate]:
        return [status for _, body in self.posts for batch in parse_envelope(body) for status in batch.statuses]

    def messages(self) -> list[InboundMessage]:
        return [message for _, body in self.posts for batch in parse_envelope(body) for message in batch.messages]

    def statuses_of(self, message_id: str) -> list[str]:
        return [status.status for status in self.statuses() if status.message_id == message_id]

    def status_envelopes(self) -> list[list[StatusUpdate]]:
        """The statuses of each status post, in the order the posts were answered."""
        return [[status for batch in parse_envelope(body) for status in batch.statuses]
                for _, body in self.posts if any(batch.statuses for batch in parse_envelope(body))]


@pytest.fixture
async def receiver(nursery) -> WhatsAppReceiver:
    receiving = WhatsAppReceiver()
    await nursery.start(serve_receiver, receiving)
    return receiving


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def simulator_config(receiver) -> SimulatorConfig:
    return SimulatorConfig(app_secret=SECRET, access_token=TOKEN, webhook_url=receiver.url, delays=DELAYS,
                           webhook_retry_delays=(0.01, 0.01), webhook_timeout=1.0)


@pytest.fixture
async def simulator(nursery, simulator_config, clock) -> Simulator:
    catalog = InMemoryTemplateCatalog([TemplateSpec("order_update", "en_US", 2, "UTILITY"),
                                       TemplateSpec("spring_sale", "en_US", 0, "MARKETING")])
    running = Simulator(simulator_config, catalog=catalog, clock=clock)
    await nursery.start(serve_simulator, running)
    return running


@pytest.fixture
async def http(simulator):
    async with httpx.AsyncClient(verify=verified_context(), base_url=simulator.url, timeout=5.0) as client:
        yield client


async def send(http, to: str = CUSTOMER, *, number: str = NUMBER, headers=AUTH, **content) -> httpx.Response:
    body = {"messaging_product": "whatsapp", "recipient_type": "individual", "to": to,
            **(content or {"type": "text", "text": {"body": "Hello"}})}
    return await http.post(f"/{number}/messages", json=body, headers=headers)


def template(name: str = "order_update", language: str = "en_US", parameters=("Ann", "#42")) -> dict:
    return {"type": "template", "template": {"name": name, "language": {"code": language}, "components": [
        {"type": "body", "parameters": [{"type": "text", "text": value} for value in parameters]}]}}


async def customer_writes(http, phone: str = CUSTOMER, text: str = "Hi there", **extra) -> httpx.Response:
    return await http.post(f"/simulator/customers/{phone}/messages",
                           json={"phone_number_id": NUMBER, "text": text, **extra})


def error_of(response: httpx.Response) -> dict:
    return response.json()["error"]


# -- authentication and shape ---------------------------------------------------------------------------------

async def test_sends_need_the_access_token(http):
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        response = await send(http, headers=headers)
        assert response.status_code == 401
        assert error_of(response)["code"] == 190
        assert error_of(response)["type"] == "OAuthException" and error_of(response)["fbtrace_id"]


async def test_a_body_meta_would_not_take_is_error_100(http):
    response = await send(http, type="text", text={})
    assert response.status_code == 400 and error_of(response)["code"] == 100
    response = await http.post(f"/{NUMBER}/messages", content=b"nope", headers=AUTH)
    assert response.status_code == 400 and error_of(response)["code"] == 100


async def test_unknown_paths_answer_meta_s_error_body(http):
    response = await http.get("/nowhere")
    assert response.status_code == 400 and error_of(response)["code"] == 100   # as the Graph API answers


# -- the rules --------------------------------------------------------------------------------------------------

async def test_the_24_hour_window_opens_when_the_customer_writes_and_closes_a_day_later(http, clock):
    assert error_of(await send(http))["code"] == 131047                # never wrote
    assert (await customer_writes(http)).json()["delivered_to_service"]
    assert (await send(http)).status_code == 200
    clock.at += timedelta(hours=24, minutes=1)
    refused = await send(http)
    assert refused.status_code == 400
    assert error_of(refused)["message"] == "(#131047) Re-engagement message"
    assert error_of(refused)["error_user_title"] == "Re-engagement message"
    assert "24 hours" in error_of(refused)["error_data"]["details"]
    assert (await send(http, **template())).status_code == 200        # a template may go out


async def test_unknown_template_or_language_is_132001_and_a_wrong_count_132000(http):
    assert error_of(await send(http, **template(name="nope")))["code"] == 132001
    assert error_of(await send(http, **template(language="de")))["code"] == 132001
    assert error_of(await send(http, **template(parameters=("Ann",))))["code"] == 132000


async def test_numbers_starting_999_are_undeliverable(http):
    response = await send(http, to="999123456789", **template())
    assert response.status_code == 400 and error_of(response)["code"] == 131026


async def test_marketing_to_997_numbers_is_declined(http):
    response = await send(http, to="997123456789", **template(name="spring_sale", parameters=()))
    assert response.status_code == 400 and error_of(response)["code"] == 131049
    assert (await send(http, to="997123456789", **template())).status_code == 200     # utility goes


async def test_throughput_per_business_number(nursery, simulator_config, clock):
    limited = Simulator(msgspec.structs.replace(simulator_config, throughput_per_second=3),
                        catalog=InMemoryTemplateCatalog([TemplateSpec("hi", "en", 0)]), clock=clock)
    url = await nursery.start(serve_simulator, limited)
    async with httpx.AsyncClient(verify=verified_context(), base_url=url) as http:
        hi = template(name="hi", language="en", parameters=())
        codes = [(await send(http, **hi)).status_code for _ in range(4)]
        other_number = await send(http, number="222", **hi)
        stats = (await http.get("/simulator/stats")).json()
    assert codes == [200, 200, 200, 400]
    assert other_number.status_code == 200
    assert stats["sends_accepted"] == 4 and stats["sends_refused"] == {"130429": 1}


async def test_throughput_counts_a_send_when_it_arrived_not_when_it_was_handled(nursery, simulator_config, clock):
    """Sends a busy simulator handles together are counted at their arrival (the server's stamp, app.py), as
    the platform counts them: two that arrived 1.5 s apart both fit a limit of one a second."""
    limited = Simulator(msgspec.structs.replace(simulator_config, throughput_per_second=1),
                        catalog=InMemoryTemplateCatalog([TemplateSpec("hi", "en", 0)]), clock=clock)
    await nursery.start(serve_simulator, limited)
    body = json.dumps({"messaging_product": "whatsapp", "to": CUSTOMER,
                       **template(name="hi", language="en", parameters=())}).encode()
    now = trio.current_time()
    answers = [await limited.send(NUMBER, AUTH["Authorization"], body, arrived_at=at)
               for at in (now - 1.5, now, now)]
    assert [getattr(answer, "message_id", None) is not None for answer in answers] == [True, True, False]


# -- accepted sends and their statuses ------------------------------------------------------------------------

async def test_an_accepted_send_gets_an_id_then_signed_statuses_in_order(http, receiver):
    response = await send(http, to="+44 7700 900123", **template())
    assert response.status_code == 200
    answer = response.json()
    message_id = answer["messages"][0]["id"]
    assert message_id.startswith("wamid.")
    assert answer["contacts"] == [{"input": "+44 7700 900123", "wa_id": CUSTOMER}]
    await eventually(lambda: receiver.statuses_of(message_id) == ["sent", "delivered", "read"])
    for signature, body in receiver.posts:
        assert verify_signature(SECRET, body, signature)
    assert {status.recipient_phone for status in receiver.statuses()} == {CUSTOMER}
    [batch] = parse_envelope(receiver.posts[0][1])
    assert batch.phone_number_id == NUMBER
    sent = (await http.get(f"/simulator/numbers/{NUMBER}/messages", params={"to": CUSTOMER})).json()["data"]
    assert [(row["message_id"], row["status"], row["template_parameters"]) for row in sent] == [
        (message_id, "read", ["Ann", "#42"])]
    assert [event["status"] for event in sent[0]["statuses"]] == ["sent", "delivered", "read"]


async def test_every_status_echoes_the_send_s_callback_data_as_meta_does(http, receiver):
    tracked = await send(http, biz_opaque_callback_data="4711", **template())
    untracked = await send(http, **template())
    tracked_id, untracked_id = (answer.json()["messages"][0]["id"] for answer in (tracked, untracked))
    await eventually(lambda: len(receiver.statuses_of(tracked_id)) == len(receiver.statuses_of(untracked_id)) == 3)
    assert {status.callback_data for status in receiver.statuses() if status.message_id == tracked_id} == {"4711"}
    assert {status.callback_data for status in receiver.statuses() if status.message_id == untracked_id} == {None}
    raw = [status for _, body in receiver.posts for status in json.loads(body)["entry"][0]["changes"][0]["value"]
           ["statuses"] if status["id"] == tracked_id]
    assert {status["biz_opaque_callback_data"] for status in raw} == {"4711"}
    sent = (await http.get(f"/simulator/numbers/{NUMBER}/messages", params={"to": CUSTOMER})).json()["data"]
    assert [row["callback_data"] for row in sent] == ["4711", None]
    too_long = await send(http, biz_opaque_callback_data="x" * 513, **template())
    assert too_long.status_code == 400 and error_of(too_long)["code"] == 100


async def test_ids_are_unique(http):
    ids = {(await send(http, **template())).json()["messages"][0]["id"] for _ in range(5)}
    assert len(ids) == 5


async def test_read_receipts_off_by_default_for_numbers_ending_in_0_and_settable(http, receiver):
    quiet = (await send(http, to=NO_RECEIPTS, **template())).json()["messages"][0]["id"]
    await until_every_status_settled(http, receiver)
    assert receiver.statuses_of(quiet) == ["sent", "delivered"]

    assert (await http.put(f"/simulator/customers/{NO_RECEIPTS}", json={"read_receipts": True})).status_code == 200
    assert (await http.put(f"/simulator/customers/{CUSTOMER}", json={"read_receipts": False})).status_code == 200
    now_reads = (await send(http, to=NO_RECEIPTS, **template())).json()["messages"][0]["id"]
    now_quiet = (await send(http, to=CUSTOMER, **template())).json()["messages"][0]["id"]
    await until_every_status_settled(http, receiver)
    assert receiver.statuses_of(now_reads) == ["sent", "delivered", "read"]
    assert receiver.statuses_of(now_quiet) == ["sent", "delivered"]
    assert (await http.put(f"/simulator/customers/{CUSTOMER}", json={"read_receipts": "yes"})).status_code == 400


async def until_every_status_settled(http, receiver: WhatsAppReceiver) -> None:
    """Returns once no status of any message accepted so far is still to come: a barrier, not a pause.

    The simulator fixes a message's statuses when it accepts the send (`planned_statuses`) and counts the message
    in `status_timelines_running` until every one of them has come due and its envelope has been answered, or
    dropped; the receiver records a post before it answers. So at zero every status the simulator meant to post
    has reached the receiver, unless it was dropped, and nothing was.
    """
    stats = await eventually_stats(http, lambda s: s["status_timelines_running"] == 0)
    assert (stats["webhooks_dropped"], stats["status_queue_dropped"], stats["status_timelines_dropped"]) == (0, 0, 0)
    assert stats["statuses_posted"] == len(receiver.statuses())


async def test_998_numbers_are_sent_then_fail(http, receiver):
    message_id = (await send(http, to="998123456789", **template())).json()["messages"][0]["id"]
    await eventually(lambda: receiver.statuses_of(message_id) == ["sent", "failed"])
    [failed] = [status for status in receiver.statuses() if status.status == "failed"]
    assert (failed.error_code, failed.error_title) == (131026, "Message undeliverable")


async def start_simulator(nursery, config: SimulatorConfig, clock, **changes) -> Simulator:
    simulator = Simulator(msgspec.structs.replace(config, **changes), clock=clock,
                          catalog=InMemoryTemplateCatalog([TemplateSpec("order_update", "en_US", 2, "UTILITY")]))
    await nursery.start(serve_simulator, simulator)
    return simulator


async def send_to_each(http, recipients, *, number: str = NUMBER) -> list[str]:
    """Template sends to `recipients` at once; their message ids, in the same order."""
    ids: dict[str, str] = {}

    async def one(to: str) -> None:
        ids[to] = (await send(http, to=to, number=number, **template())).json()["messages"][0]["id"]

    async with trio.open_nursery() as nursery:
        for to in recipients:
            nursery.start_soon(one, to)
    return [ids[to] for to in recipients]


RECIPIENTS = [f"44770090{n:04d}" for n in (*range(1, 10), 11)]       # ten, none ending in 0: all read


async def until_every_status_due(http, ids: list[str], *, number: str = NUMBER) -> None:
    """Returns once every status of `ids` (recipients who read) has come due, instead of sleeping past the delays.

    A status comes due in one step: recorded in the sent log (`GET /simulator/numbers/{n}/messages`), then
    queued for its number's next envelope (or dropped, the queue being full). So once each message shows `read`,
    its last, all of its statuses are queued, dropped or in an envelope already taken.
    """
    with trio.fail_after(3):
        while True:
            sent = (await http.get(f"/simulator/numbers/{number}/messages")).json()["data"]
            status = {row["message_id"]: row["status"] for row in sent}
            if all(status.get(id_) == "read" for id_ in ids):
                return
            await trio.sleep(0.005)


async def test_statuses_due_while_a_post_is_in_flight_share_the_next_envelope(nursery, simulator_config, clock,
                                                                               receiver):
    simulator = await start_simulator(nursery, simulator_config, clock, webhooks_per_number=1)
    receiver.statuses_held = trio.Event()
    async with httpx.AsyncClient(verify=verified_context(), base_url=simulator.url) as http:
        ids = await send_to_each(http, RECIPIENTS)
        await until_every_status_due(http, ids)           # the first envelope is still held
        receiver.statuses_held.set()
        await eventually(lambda: all(receiver.statuses_of(id_) == ["sent", "delivered", "read"] for id_ in ids))
        stats = (await http.get("/simulator/stats")).json()
    envelopes = receiver.status_envelopes()
    assert len(envelopes) == 2                            # what was due first, then everything that gathered
    assert sum(map(len, envelopes)) == 30 == stats["statuses_posted"]
    assert stats["webhooks_posted"] == 2 and stats["statuses_queued"] == 0
    for signature, body in receiver.posts:
        assert verify_signature(SECRET, body, signature)
        [batch] = parse_envelope(body)
        assert batch.phone_number_id == NUMBER and not batch.messages
    # A message whose statuses share an envelope has them listed in order. Which of them made the first envelope
    # depends on how late the schedule woke for the first due status (under load, `sent` and `delivered` or all
    # three): whatever it took, the two envelopes together hold the message's statuses once each, in order.
    for id_ in ids:
        first, then = ([status.status for status in envelope if status.message_id == id_] for envelope in envelopes)
        assert first + then == ["sent", "delivered", "read"]


async def test_an_envelope_carries_at_most_statuses_per_webhook(nursery, simulator_config, clock, receiver):
    simulator = await start_simulator(nursery, simulator_config, clock, webhooks_per_number=1,
                                      statuses_per_webhook=4)
    receiver.statuses_held = trio.Event()
    async with httpx.AsyncClient(verify=verified_context(), base_url=simulator.url) as http:
        ids = await send_to_each(http, RECIPIENTS)
        await until_every_status_due(http, ids)
        receiver.statuses_held.set()
        await eventually(lambda: all(receiver.statuses_of(id_) == ["sent", "delivered", "read"] for id_ in ids))
    sizes = [len(envelope) for envelope in receiver.status_envelopes()]
    assert max(sizes) == 4 and sum(sizes) == 30 and len(sizes) >= 8


async def test_a_number_has_several_envelopes_in_flight_but_a_message_one(nursery, simulator_config, clock, receiver):
    simulator = await start_simulator(nursery, simulator_config, clock, webhooks_per_number=3)
    receiver.delay = 0.05
    async with httpx.AsyncClient(verify=verified_context(), base_url=simulator.url) as http:
        ids = await send_to_each(http, RECIPIENTS)
        await eventually(lambda: all(receiver.statuses_of(id_) == ["sent", "delivered", "read"] for id_ in ids))
    assert receiver.most_in_flight["statuses"] <= 3
    assert len(receiver.status_envelopes()) < 30


async def test_status_posts_are_bounded_across_numbers_and_leave_customers_a_lane(nursery, simulator_config, clock,
                                                                                   receiver):
    simulator = await start_simulator(nursery, simulator_config, clock, webhook_concurrency=2,
                                      customer_webhook_concurrency=2)
    receiver.delay = 0.03
    async with httpx.AsyncClient(verify=verified_context(), base_url=simulator.url) as http:
        ids = []
        async with trio.open_nursery() as sending:
            for number in (NUMBER, "222", "333", "444"):
                sending.start_soon(lambda n=number: _extend(ids, send_to_each(http, RECIPIENTS[:3], number=n)))
        await eventually(lambda: all(receiver.statuses_of(id_) == ["sent", "delivered", "read"] for id_ in ids))
        assert len(ids) == 12 and receiver.most_in_flight["statuses"] <= 2

        # Every status slot held: customers still get through, on their own connections, two at a time.
        receiver.statuses_held = trio.Event()
        await send(http, **template())
        await eventually(lambda: receiver.in_flight["statuses"] == 1)
        results = []
        async with trio.open_nursery() as writing:
            for phone in RECIPIENTS[:5]:
                writing.start_soon(lambda p=phone: _extend(results, _written(http, p)))
        receiver.statuses_held.set()
    assert [result["delivered_to_service"] for result in results] == [True] * 5
    assert receiver.most_in_flight["messages"] == 2


async def _extend(into: list, awaitable) -> None:
    result = await awaitable
    into.extend(result if isinstance(result, list) else [result])


async def _written(http, phone: str) -> dict:
    return (await customer_writes(http, phone=phone)).json()


async def test_waiting_for_a_connection_is_not_the_service_s_timeout(nursery, simulator_config, clock, receiver):
    simulator = await start_simulator(nursery, simulator_config, clock, customer_webhook_concurrency=1,
                                      webhook_timeout=0.25)
    receiver.delay = 0.1
    results = []
    async with httpx.AsyncClient(verify=verified_context(), base_url=simulator.url) as http, \
            trio.open_nursery() as writing:
        for phone in RECIPIENTS[:4]:                      # the last waits 0.3 s for the one connection
            writing.start_soon(lambda p=phone: _extend(results, _written(http, p)))
    assert [result["service_status"] for result in results] == [200] * 4


async def test_a_failed_envelope_is_retried_while_its_messages_later_statuses_wait(nursery, simulator_config, clock,
                                                                                  receiver):
    # `delivered` and `read` come due 90 ms after `sent`, while its envelope is between attempts (at 0.01, 0.11 and
    # 0.21 s): at the usual 10 ms apart, a schedule woken late on a loaded machine put `delivered` beside `sent`.
    simulator = await start_simulator(nursery, simulator_config, clock, webhook_retry_delays=(0.1, 0.1),
                                      delays=StatusDelays(sent=0.01, delivered=0.1, read=0.1))
    receiver.fail_next = 2                          # the envelope with `sent` needs both retries
    async with httpx.AsyncClient(verify=verified_context(), base_url=simulator.url) as http:
        message_id = (await send(http, **template())).json()["messages"][0]["id"]
        await eventually(lambda: receiver.statuses_of(message_id) == ["sent", "delivered", "read"])
        stats = (await http.get("/simulator/stats")).json()
    assert [[status.status for status in envelope] for envelope in receiver.status_envelopes()] == [
        ["sent"], ["delivered", "read"]]
    assert (stats["webhooks_posted"], stats["webhooks_failed"], stats["webhooks_dropped"]) == (2, 2, 0)
    assert stats["statuses_posted"] == 3


async def test_an_envelope_without_a_2xx_after_every_retry_is_dropped_and_its_statuses_counted(
        nursery, simulator_config, clock, receiver):
    simulator = await start_simulator(nursery, simulator_config, clock, webhook_retry_delays=(0.02, 0.02))
    receiver.fail_next = 1000
    async with httpx.AsyncClient(verify=verified_context(), base_url=simulator.url) as http:
        dropped = (await send(http, **template())).json()["messages"][0]["id"]
        stats = await eventually_stats(http, lambda s: s["status_timelines_running"] == 0)
        receiver.fail_next = 0
        kept = (await send(http, **template())).json()["messages"][0]["id"]
        await eventually(lambda: receiver.statuses_of(kept) == ["sent", "delivered", "read"])
    # Three attempts at each envelope (`sent` alone, then `delivered` and `read`, held meanwhile, together).
    assert (stats["webhooks_posted"], stats["webhooks_dropped"]) == (0, 3)
    assert stats["webhooks_failed"] in (3, 6)
    assert stats["statuses_posted"] == 0
    assert receiver.statuses_of(dropped) == []


async def test_statuses_beyond_a_full_queue_are_dropped_and_counted(nursery, simulator_config, clock, receiver):
    simulator = await start_simulator(nursery, simulator_config, clock, webhooks_per_number=1,
                                      max_queued_statuses=2)
    receiver.statuses_held = trio.Event()
    async with httpx.AsyncClient(verify=verified_context(), base_url=simulator.url) as http:
        ids = await send_to_each(http, RECIPIENTS[:3])
        await until_every_status_due(http, ids)
        receiver.statuses_held.set()
        stats = await eventually_stats(http, lambda s: s["status_timelines_running"] == 0)
    assert stats["status_queue_dropped"] >= 1
    assert stats["statuses_posted"] + stats["status_queue_dropped"] == 9 and stats["webhooks_dropped"] == 0
    for id_ in ids:                                 # what was posted of each message is still in order
        posted = receiver.statuses_of(id_)
        assert posted == [status for status in ("sent", "delivered", "read") if status in posted]


async def test_too_many_messages_awaiting_statuses_get_none(nursery, simulator_config, clock, receiver):
    simulator = await start_simulator(nursery, simulator_config, clock, max_status_timelines=1)
    receiver.statuses_held = trio.Event()
    async with httpx.AsyncClient(verify=verified_context(), base_url=simulator.url) as http:
        first, second = [(await send(http, **template())).json()["messages"][0]["id"] for _ in range(2)]
        receiver.statuses_held.set()
        await eventually(lambda: receiver.statuses_of(first) == ["sent", "delivered", "read"])
        stats = await eventually_stats(http, lambda s: s["status_timelines_running"] == 0)
    assert stats["status_timelines_dropped"] == 1 and receiver.statuses_of(second) == []


async def eventually_stats(http, condition) -> dict:
    """The simulator's statistics once `condition` holds of them."""
    async def stats():
        current = (await http.get("/simulator/stats")).json()
        return current if condition(current) else None
    return await eventually(stats, timeout=3.0, interval=0.01)


# -- customers ------------------------------------------------------------------------------------------------

async def test_a_customer_message_arrives_as_a_signed_envelope(http, receiver, clock):
    response = await customer_writes(http, text="Where is my order?", name="Kerry")
    assert response.status_code == 200
    answer = response.json()
    assert answer["delivered_to_service"] is True and answer["service_status"] == 200
    [(signature, body)] = receiver.posts
    assert verify_signature(SECRET, body, signature)
    [batch] = parse_envelope(body)
    assert batch.phone_number_id == NUMBER
    assert batch.messages == (InboundMessage(
        message_id=answer["message_id"], from_phone=CUSTOMER, at=clock.at, type="text", text="Where is my order?",
        profile_name="Kerry"),)

    image = (await customer_writes(http, text="receipt", type="image")).json()
    [message] = [m for m in receiver.messages() if m.message_id == image["message_id"]]
    assert (message.type, message.text) == ("image", "receipt") and message.media_id


async def test_the_customer_learns_what_the_service_answered(http, receiver, simulator):
    receiver.status_code = 403
    answer = (await customer_writes(http)).json()
    assert (answer["delivered_to_service"], answer["service_status"]) == (False, 403)
    simulator.webhook_url = "http://127.0.0.1:9/nowhere"            # nothing listens on the discard port
    answer = (await customer_writes(http)).json()
    assert (answer["delivered_to_service"], answer["service_status"]) == (False, 0)
    # The customer did write: the window is open whatever the service did with the webhook.
    assert (await send(http)).status_code == 200


async def test_bad_customer_messages_are_400(http):
    assert (await customer_writes(http, phone="not-a-phone")).status_code == 400
    assert (await customer_writes(http, text="")).status_code == 400
    assert (await customer_writes(http, type="sticker")).status_code == 400
    response = await http.post(f"/simulator/customers/{CUSTOMER}/messages", json={"text": "no number"})
    assert response.status_code == 400 and "phone_number_id" in response.json()["error"]


# -- the command ----------------------------------------------------------------------------------------------

@pytest.mark.slow
async def test_the_simulator_command_prints_its_ready_line_and_stops_on_sigterm():
    root = Path(__file__).resolve().parents[2]
    command = [sys.executable, "-m", "inbox_http.cli", "simulator", "--port", "0", "--app-secret", SECRET,
               "--access-token", TOKEN, "--template", "hi:en:0:MARKETING"]
    process = await trio.lowlevel.open_process(command, cwd=root, stdout=subprocess.PIPE,
                                               env={**os.environ, "PYTHONPATH": str(root)})
    try:
        ready = json.loads(await read_line(process.stdout))
        assert ready["status"] == "ready" and ready["url"].startswith("http://127.0.0.1:")
        async with httpx.AsyncClient(verify=verified_context(), base_url=ready["url"]) as http:
            response = await send(http, to="997123456789", type="template",
                                  template={"name": "hi", "language": {"code": "en"}})
        assert error_of(response)["code"] == 131049
        process.send_signal(signal.SIGTERM)
        with trio.fail_after(10):
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
        with trio.CancelScope(shield=True):
            await process.wait()
        await process.stdout.aclose()


async def read_line(stream: trio.abc.ReceiveStream, timeout: float = 15.0) -> bytes:
    received = b""
    with trio.fail_after(timeout):
        while b"\n" not in received:
            chunk = await stream.receive_some()
            assert chunk, "the process closed its output before the ready line"
            received += chunk
    return received.split(b"\n", 1)[0]
