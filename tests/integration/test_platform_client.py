"""The Cloud API client against a real local HTTP server: Meta's request JSON out, every answer a value.

The server is a small Quart-Trio app on an ephemeral port that records each request and answers what the
test scripted; one test goes through the simulator itself.
"""

from __future__ import annotations

import json
import socket
from functools import partial

import pytest
import trio
from quart import Response, request
from quart_trio import QuartTrio

from inbox_actors.platform.client import UNREACHABLE_CODE, CloudApiClient, PlatformClient
from inbox_actors.platform.cloud_api import decode_send_request, encode_send_request
from inbox_actors.platform.payloads import SendAccepted, SendRefused, SendRequest
from inbox_actors.platform.simulator.model import Simulator, SimulatorConfig
from inbox_actors.platform.simulator.server import serve_simulator
from inbox_actors.platform.template_catalog import InMemoryTemplateCatalog, TemplateSpec
from tests.local_http import serve_on_free_port
from tests.waiting import eventually

TOKEN = "test-access-token"
ACCEPTED = {"messaging_product": "whatsapp", "contacts": [{"input": "+447700900123", "wa_id": "447700900123"}],
            "messages": [{"id": "wamid.HBgLNDQ3NzAwOTAwMTIzFQIAERgSQTk"}]}


class ScriptedPlatform:
    """Records requests; answers `(status, body bytes)` from `answers`, or waits `delay` first."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self.answer: tuple[int, bytes] = (200, json.dumps(ACCEPTED).encode())
        self.delay = 0.0
        self.url = ""
        self.in_flight = self.most_in_flight = 0

    def app(self) -> QuartTrio:
        app = QuartTrio(__name__)

        @app.post("/<path:path>")
        async def anything(path: str) -> Response:
            headers = {name.lower(): value for name, value in request.headers.items()}
            self.requests.append((request.path, headers, await request.get_data(as_text=False)))
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            try:
                if self.delay:
                    await trio.sleep(self.delay)
            finally:
                self.in_flight -= 1
            status, body = self.answer
            return Response(body, status=status, content_type="application/json")

        return app

    async def serve(self, task_status=trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            self.url = await nursery.start(partial(serve_on_free_port, self.app()))
            task_status.started(self.url)


@pytest.fixture
async def platform(nursery) -> ScriptedPlatform:
    scripted = ScriptedPlatform()
    await nursery.start(scripted.serve)
    return scripted


@pytest.fixture
async def client(platform):
    async with CloudApiClient(platform.url + "/v21.0", TOKEN, timeout=2.0) as cloud:
        yield cloud


def sent_json(platform: ScriptedPlatform) -> dict:
    return json.loads(platform.requests[-1][2])


# -- the request ----------------------------------------------------------------------------------------------

async def test_text_send_posts_meta_s_json_with_the_bearer_token(platform, client):
    outcome = await client.send("106540352242922", SendRequest(to="447700900123", text="Hello"))
    assert outcome == SendAccepted(message_id="wamid.HBgLNDQ3NzAwOTAwMTIzFQIAERgSQTk")
    path, headers, _ = platform.requests[-1]
    assert path == "/v21.0/106540352242922/messages"
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert headers["content-type"] == "application/json"
    assert sent_json(platform) == {"messaging_product": "whatsapp", "recipient_type": "individual",
                                   "to": "447700900123", "type": "text", "text": {"body": "Hello"}}


async def test_template_send_puts_parameters_in_the_body_component(platform, client):
    await client.send("1", SendRequest(to="447700900123", type="template", template_name="order_update",
                                       template_language="en_US", template_parameters=("Ann", "#42")))
    assert sent_json(platform) == {
        "messaging_product": "whatsapp", "recipient_type": "individual", "to": "447700900123", "type": "template",
        "template": {"name": "order_update", "language": {"code": "en_US"}, "components": [
            {"type": "body", "parameters": [{"type": "text", "text": "Ann"}, {"type": "text", "text": "#42"}]}]},
    }
    await client.send("1", SendRequest(to="447700900123", type="template", template_name="hello_world",
                                       template_language="en_US"))
    assert sent_json(platform)["template"] == {"name": "hello_world", "language": {"code": "en_US"}}


@pytest.mark.parametrize(("request_", "expected"), [
    (SendRequest(to="4477", type="image", media_url="https://x/a.png", text="look"),
     {"image": {"link": "https://x/a.png", "caption": "look"}}),
    (SendRequest(to="4477", type="video", media_url="https://x/a.mp4"), {"video": {"link": "https://x/a.mp4"}}),
    (SendRequest(to="4477", type="audio", media_url="https://x/a.ogg", text="ignored"),
     {"audio": {"link": "https://x/a.ogg"}}),
    (SendRequest(to="4477", type="document", media_url="https://x/a.pdf", text="invoice", filename="a.pdf"),
     {"document": {"link": "https://x/a.pdf", "caption": "invoice", "filename": "a.pdf"}}),
])
async def test_media_sends(platform, client, request_, expected):
    await client.send("1", request_)
    assert sent_json(platform) == {"messaging_product": "whatsapp", "recipient_type": "individual", "to": "4477",
                                   "type": request_.type, **expected}


def test_every_request_kind_survives_the_wire():
    for original in [
        SendRequest(to="447700900123", text="hi"),
        SendRequest(to="447700900123", type="template", template_name="t", template_language="de",
                     template_parameters=("a", "b")),
        SendRequest(to="447700900123", type="image", media_url="https://x/a.png", text="caption"),
        SendRequest(to="447700900123", type="document", media_url="https://x/a.pdf", filename="a.pdf"),
    ]:
        assert decode_send_request(encode_send_request(original)) == original


# -- the answers ----------------------------------------------------------------------------------------------

async def test_meta_s_error_body_becomes_a_refusal_with_every_detail(platform, client):
    platform.answer = (400, json.dumps({"error": {
        "message": "(#131047) Re-engagement message", "type": "OAuthException", "code": 131047,
        "error_subcode": 2494010, "error_user_title": "Re-engagement message",
        "error_data": {"messaging_product": "whatsapp", "details": "More than 24 hours have passed."},
        "fbtrace_id": "AbC"}}).encode())
    outcome = await client.send("1", SendRequest(to="447700900123", text="late"))
    assert outcome == SendRefused(message="(#131047) Re-engagement message", code=131047,
                                  title="Re-engagement message", subcode=2494010,
                                  details="More than 24 hours have passed.", http_status=400)


async def test_without_a_user_title_the_error_type_is_the_title(platform, client):
    platform.answer = (401, (b'{"error": {"message": "Invalid OAuth access token", "type": "OAuthException", '
                             b'"code": 190, "fbtrace_id": "x"}}'))
    outcome = await client.send("1", SendRequest(to="447700900123", text="hi"))
    assert outcome == SendRefused(message="Invalid OAuth access token", code=190, title="OAuthException",
                                  http_status=401)


@pytest.mark.parametrize("answer", [(502, b"<html>Bad gateway</html>"), (200, b"{}"), (200, b"not json")])
async def test_an_answer_that_is_not_meta_s_is_a_generic_refusal(platform, client, answer):
    platform.answer = answer
    outcome = await client.send("1", SendRequest(to="447700900123", text="hi"))
    assert isinstance(outcome, SendRefused)
    assert (outcome.code, outcome.title, outcome.http_status) == (UNREACHABLE_CODE, "Unexpected platform answer",
                                                                  answer[0])
    assert outcome.message == "Something went wrong" and outcome.details


async def test_a_platform_that_is_not_listening_is_a_refusal_not_an_exception():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with CloudApiClient(f"http://127.0.0.1:{port}", TOKEN) as cloud:
        outcome = await cloud.send("1", SendRequest(to="447700900123", text="hi"))
    assert isinstance(outcome, SendRefused)
    assert (outcome.code, outcome.title, outcome.http_status) == (UNREACHABLE_CODE, "Platform unreachable", 0)


async def test_a_platform_that_does_not_answer_in_time_is_a_timeout_refusal(platform):
    platform.delay = 2.0
    async with CloudApiClient(platform.url, TOKEN, timeout=0.1) as cloud:
        outcome = await cloud.send("1", SendRequest(to="447700900123", text="hi"))
    assert isinstance(outcome, SendRefused)
    assert (outcome.code, outcome.title, outcome.http_status) == (UNREACHABLE_CODE, "Platform timeout", 0)


# -- concurrency ----------------------------------------------------------------------------------------------

async def send_at_once(cloud: CloudApiClient, count: int) -> list[SendAccepted | SendRefused]:
    outcomes: list[SendAccepted | SendRefused] = []

    async def one() -> None:
        outcomes.append(await cloud.send("1", SendRequest(to="447700900123", text="hi")))

    async with trio.open_nursery() as nursery:
        for _ in range(count):
            nursery.start_soon(one)
    return outcomes


async def test_at_most_max_concurrent_sends_are_at_the_platform(platform):
    platform.delay = 0.05
    async with CloudApiClient(platform.url, TOKEN, max_concurrent=2) as cloud:
        outcomes = await send_at_once(cloud, 6)
        assert cloud.statistics().borrowed_tokens == 0 and cloud.statistics().tasks_waiting == 0
    assert all(isinstance(outcome, SendAccepted) for outcome in outcomes)
    assert platform.most_in_flight == 2 and len(platform.requests) == 6


async def test_waiting_for_a_slot_is_not_a_platform_timeout(platform):
    platform.delay = 0.1
    async with CloudApiClient(platform.url, TOKEN, timeout=0.3, max_concurrent=1) as cloud:
        outcomes = await send_at_once(cloud, 4)              # the last waits about 0.3 s, then gets its answer
    assert all(isinstance(outcome, SendAccepted) for outcome in outcomes)


async def test_connections_opened_ahead_carry_the_first_sends_even_when_the_platform_listens_late():
    """open_ahead keeps trying until the platform takes connections (it may start after the service), opens
    max_concurrent of them, and a burst of that many sends then goes out on them: no connection is opened while
    the burst leaves."""
    accepted: list[trio.SocketStream] = []

    async def answer_each_request(stream: trio.SocketStream) -> None:
        accepted.append(stream)
        buffer = b""
        while True:
            head, _, rest = buffer.partition(b"\r\n\r\n")
            if not _:
                data = await stream.receive_some(65536)
                if not data:
                    return
                buffer += data
                continue
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length")))
            while len(rest) < length:
                rest += await stream.receive_some(65536)
            buffer = rest[length:]
            await trio.sleep(0.05)           # the burst's sends overlap at the platform
            body = json.dumps(ACCEPTED).encode()
            await stream.send_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                                  + str(len(body)).encode() + b"\r\n\r\n" + body)

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with CloudApiClient(f"http://127.0.0.1:{port}", TOKEN, max_concurrent=4) as cloud, \
            trio.open_nursery() as nursery:
        opening = trio.Event()
        opened: list[int] = []

        async def open_ahead() -> None:
            opening.set()
            opened.append(await cloud.open_ahead(patience=10))

        nursery.start_soon(open_ahead)
        await opening.wait()
        await trio.sleep(0.3)                # refused meanwhile: nothing listens yet
        assert not opened
        listeners = await trio.open_tcp_listeners(port, host="127.0.0.1")
        nursery.start_soon(partial(trio.serve_listeners, answer_each_request, listeners))
        await eventually(lambda: opened and len(accepted) == 4)
        assert opened == [4]
        outcomes = await send_at_once(cloud, 4)
        assert all(isinstance(outcome, SendAccepted) for outcome in outcomes)
        assert len(accepted) == 4
        nursery.cancel_scope.cancel()


# -- against the simulator ------------------------------------------------------------------------------------

async def test_the_client_and_the_simulator_agree(nursery):
    catalog = InMemoryTemplateCatalog([TemplateSpec("welcome", "en_US", 1)])
    simulator = Simulator(SimulatorConfig(app_secret="s", access_token=TOKEN), catalog=catalog)
    url = await nursery.start(serve_simulator, simulator)
    async with CloudApiClient(url, TOKEN) as cloud:
        platform: PlatformClient = cloud
        accepted = await platform.send("111", SendRequest(to="+44 7700 900123", type="template",
                                                          template_name="welcome", template_language="en_US",
                                                          template_parameters=("Ann",)))
        refused = await platform.send("111", SendRequest(to="447700900123", text="hi"))
    assert isinstance(accepted, SendAccepted) and accepted.message_id.startswith("wamid.")
    assert isinstance(refused, SendRefused)
    assert (refused.code, refused.title, refused.http_status) == (131047, "Re-engagement message", 400)
    assert refused.details and "24 hours" in refused.details
    [record] = simulator.sent_messages("111")
    assert (record.to, record.template_parameters) == ("447700900123", ("Ann",))
