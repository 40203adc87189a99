"""The simulator playing the customer's side of media and of the read state, on real sockets (issue 38):

- uploads (`POST /{phone_number_id}/media`, multipart) judged as Meta judges them, each refusal Meta's code and
  shape; an accepted file kept on the shelf, where `GET /{media-id}` and its URL serve it;
- media sends by an uploaded id (recorded with the file the customer got: its SHA-256, type, size) and by link;
  an id the platform never gave refused in Meta's words; a file its message kind cannot carry fails after
  acceptance (131053), as Meta's does;
- the read state: a customer who reads only when told (`auto_read: false`) is read by `POST
  /simulator/customers/{phone}/read`, whose `read` statuses come signed, after the statuses still before them;
  with read receipts off the customer reads and the business is not told;
- the service's media client uploading to the simulator: the id, Meta's refusal, or no answer, each a value.
"""

from __future__ import annotations

import hashlib

import httpx
import pytest

from inbox_actors.outbound_http.verified_tls import verified_context
from inbox_actors.platform.client import TITLE_UNREACHABLE, UNREACHABLE_CODE
from inbox_actors.platform.cloud_api import decode_send_request, encode_send_request
from inbox_actors.platform.media import MediaFetcher
from inbox_actors.platform.payloads import SendRefused, SendRequest
from inbox_actors.platform.simulator.model import Simulator, SimulatorConfig
from inbox_actors.platform.simulator.server import serve_simulator
from inbox_actors.platform.webhook_envelope import verify_signature
from tests.integration.test_simulator import (
    AUTH,
    CUSTOMER,
    DELAYS,
    NO_RECEIPTS,
    NUMBER,
    SECRET,
    TOKEN,
    ManualClock,
    WhatsAppReceiver,
    customer_writes,
    error_of,
    send,
    until_every_status_settled,
)
from tests.waiting import eventually
from tests.webhook_receiver import serve_receiver

MIB = 1024 * 1024
PNG = b"\x89PNG\r\n\x1a\n" + b"picture" * 20
PDF = b"%PDF-1.4\n" + b"%" * 300


@pytest.fixture
async def receiver(nursery) -> WhatsAppReceiver:
    receiving = WhatsAppReceiver()
    await nursery.start(serve_receiver, receiving)
    return receiving


@pytest.fixture
async def simulator(nursery, receiver) -> Simulator:
    config = SimulatorConfig(app_secret=SECRET, access_token=TOKEN, webhook_url=receiver.url, delays=DELAYS,
                             webhook_retry_delays=(0.01, 0.01), webhook_timeout=1.0)
    running = Simulator(config, clock=ManualClock())
    await nursery.start(serve_simulator, running)
    return running


@pytest.fixture
async def http(simulator):
    async with httpx.AsyncClient(verify=verified_context(), base_url=simulator.url, timeout=5.0) as client:
        yield client


async def upload(http, content: bytes, mime_type: str, *, name: str = "file", fields: dict | None = None,
                 headers=AUTH, path: str = f"/v21.0/{NUMBER}/media") -> httpx.Response:
    data = {"messaging_product": "whatsapp", "type": mime_type} if fields is None else fields
    return await http.post(path, data=data, files={"file": (name, content, mime_type)}, headers=headers)


async def uploaded(http, content: bytes = PNG, mime_type: str = "image/png", name: str = "parcel.png") -> str:
    answer = await upload(http, content, mime_type, name=name)
    assert answer.status_code == 200, answer.text
    assert set(answer.json()) == {"id"}
    return answer.json()["id"]


def media(kind: str, **body) -> dict:
    return {"type": kind, kind: body}


async def sent_records(http, to: str = CUSTOMER) -> list[dict]:
    return (await http.get(f"/simulator/numbers/{NUMBER}/messages", params={"to": to})).json()["data"]


# -- uploads ---------------------------------------------------------------------------------------------------


async def test_an_upload_answers_an_id_whose_file_get_media_serves(http):
    media_id = await uploaded(http)
    located = await http.get(f"/v21.0/{media_id}", headers=AUTH)
    assert located.status_code == 200
    where = located.json()
    assert (where["mime_type"], where["file_size"], where["id"], where["messaging_product"]) == (
        "image/png", len(PNG), media_id, "whatsapp")
    fetched = await http.get(where["url"], headers=AUTH)
    assert fetched.status_code == 200 and fetched.content == PNG
    assert fetched.headers["content-type"] == "image/png"
    unversioned = await upload(http, PDF, "application/pdf", path=f"/{NUMBER}/media")
    assert unversioned.status_code == 200
    stats = (await http.get("/simulator/stats")).json()
    assert (stats["media_uploads"], stats["uploads_refused"]) == (2, {})


@pytest.mark.parametrize(("content", "mime_type", "fields", "headers", "status", "code", "message"), [
    (PNG, "image/png", None, {}, 401, 190, "Invalid OAuth access token - Cannot parse access token"),
    (PNG, "image/png", {"type": "image/png"}, AUTH, 400, 100, "(#100) The parameter messaging_product is required."),
    (PNG, "image/png", {"messaging_product": "whatsapp"}, AUTH, 400, 100, "(#100) The parameter type is required."),
    (b"MZ", "application/x-msdownload", None, AUTH, 400, 100,
     "(#100) Param file must be a file with one of the following types: audio/aac, audio/mp4, audio/mpeg, audio/amr, "
     "audio/ogg, audio/opus, application/vnd.ms-powerpoint, application/msword, "
     "application/vnd.openxmlformats-officedocument.wordprocessingml.document, "
     "application/vnd.openxmlformats-officedocument.presentationml.presentation, "
     "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet, application/pdf, text/plain, "
     "application/vnd.ms-excel, image/jpeg, image/png, image/webp, video/mp4, video/3gpp. Received file of type "
     "'application/x-msdownload'."),
    (b"\0" * (5 * MIB + 1), "image/jpeg", None, AUTH, 400, 131053, "(#131053) Media upload error"),
    (b"\0" * (500 * 1024 + 1), "image/webp", None, AUTH, 400, 131053, "(#131053) Media upload error"),
])
async def test_uploads_are_judged_as_meta_judges_them(http, content, mime_type, fields, headers, status, code, message):
    answer = await upload(http, content, mime_type, fields=fields, headers=headers)
    assert answer.status_code == status, answer.text
    error = error_of(answer)
    assert (error["code"], error["message"], error["type"]) == (code, message, "OAuthException")
    assert error["fbtrace_id"]
    if code == 131053:
        assert error["error_user_title"] == "Media upload error"
        assert error["error_data"]["details"].startswith(f"The file is {len(content):,} bytes; the platform takes")
    stats = (await http.get("/simulator/stats")).json()
    assert stats["media_uploads"] == 0 and stats["uploads_refused"] == {str(code): 1}


async def test_an_upload_without_a_file_part_and_a_large_document_within_meta_s_limit(http):
    no_file = await http.post(f"/{NUMBER}/media", data={"messaging_product": "whatsapp", "type": "image/png"},
                              headers=AUTH)
    assert no_file.status_code == 400 and error_of(no_file)["message"] == "(#100) The parameter file is required."
    # Meta takes documents up to 100 MB; the simulator keeps what it took (a 6 MiB PDF here).
    big = b"%PDF" + b"\0" * (6 * MIB)
    media_id = await uploaded(http, big, "application/pdf", "big.pdf")
    assert (await http.get(f"/{media_id}", headers=AUTH)).json()["file_size"] == len(big)


# -- media sends -------------------------------------------------------------------------------------------------


async def test_media_sent_by_id_records_what_the_customer_got(http, receiver):
    await customer_writes(http)
    media_id = await uploaded(http)
    answer = await send(http, **media("image", id=media_id, caption="The parcel"))
    assert answer.status_code == 200, answer.text
    message_id = answer.json()["messages"][0]["id"]
    document_id = await uploaded(http, PDF, "application/pdf", "invoice.pdf")
    assert (await send(http, **media("document", id=document_id, filename="invoice.pdf"))).status_code == 200
    linked = await send(http, **media("video", link="https://files.example/clip.mp4"))
    assert linked.status_code == 200
    await eventually(lambda: receiver.statuses_of(message_id) == ["sent", "delivered", "read"])
    image, document, video = await sent_records(http)
    assert (image["type"], image["media_id"], image["mime_type"], image["file_size"], image["text"]) == (
        "image", media_id, "image/png", len(PNG), "The parcel")
    assert image["sha256"] == hashlib.sha256(PNG).hexdigest() and image["media_url"] is None
    assert (document["filename"], document["sha256"]) == ("invoice.pdf", hashlib.sha256(PDF).hexdigest())
    assert (video["media_url"], video["media_id"], video["sha256"]) == ("https://files.example/clip.mp4", None, None)


async def test_an_id_the_platform_never_gave_and_a_link_beside_an_id_are_refused(http):
    await customer_writes(http)
    unknown = await send(http, **media("image", id="123456789"))
    assert unknown.status_code == 400
    assert error_of(unknown)["message"] == ("(#100) Param image['id'] is not a valid whatsapp business account "
                                            "media attachment ID")
    media_id = await uploaded(http)
    both = await send(http, **media("image", id=media_id, link="https://files.example/a.png"))
    assert both.status_code == 400 and error_of(both)["code"] == 100
    assert await sent_records(http) == []


async def test_a_file_its_message_kind_cannot_carry_fails_after_acceptance(http, receiver):
    await customer_writes(http)
    document_id = await uploaded(http, PDF, "application/pdf", "invoice.pdf")
    answer = await send(http, **media("image", id=document_id))
    assert answer.status_code == 200
    message_id = answer.json()["messages"][0]["id"]
    await eventually(lambda: receiver.statuses_of(message_id) == ["sent", "failed"])
    [failed] = [status for status in receiver.statuses() if status.status == "failed"]
    assert (failed.error_code, failed.error_title) == (131053, "Media upload error")


def test_a_send_by_id_survives_the_wire():
    request = SendRequest(to="447700900123", type="document", text="invoice", media_id="4490", filename="a.pdf")
    assert encode_send_request(request).count(b'"id":"4490"') == 1
    assert b'"link"' not in encode_send_request(request)
    assert decode_send_request(encode_send_request(request)) == request


# -- the read state -----------------------------------------------------------------------------------------------


async def test_a_customer_who_reads_when_told_is_read_by_the_control_call(http, receiver):
    await customer_writes(http)
    settings = await http.put(f"/simulator/customers/{CUSTOMER}", json={"auto_read": False})
    assert settings.json() == {"phone": CUSTOMER, "read_receipts": True, "auto_read": False}
    first = (await send(http)).json()["messages"][0]["id"]
    second = (await send(http)).json()["messages"][0]["id"]
    await until_every_status_settled(http, receiver)
    assert receiver.statuses_of(first) == receiver.statuses_of(second) == ["sent", "delivered"]

    read = await http.post(f"/simulator/customers/{CUSTOMER}/read", json={"phone_number_id": NUMBER})
    assert read.status_code == 200
    assert read.json() == {"phone": CUSTOMER, "read_statuses": 2, "read_receipts": True}
    await until_every_status_settled(http, receiver)
    assert receiver.statuses_of(first) == receiver.statuses_of(second) == ["sent", "delivered", "read"]
    for signature, body in receiver.posts:
        assert verify_signature(SECRET, body, signature)
    assert [row["status"] for row in await sent_records(http)] == ["read", "read"]
    # Read already: nothing more to post; without a body, every business number's chat.
    again = await http.post(f"/simulator/customers/{CUSTOMER}/read")
    assert again.json()["read_statuses"] == 0
    stats = (await http.get("/simulator/stats")).json()
    assert stats["read_statuses_requested"] == 2


async def test_a_read_told_while_statuses_are_on_their_way_comes_after_them(http, receiver):
    await customer_writes(http)
    assert (await http.put(f"/simulator/customers/{CUSTOMER}", json={"auto_read": False})).status_code == 200
    message_id = (await send(http)).json()["messages"][0]["id"]
    read = await http.post(f"/simulator/customers/{CUSTOMER}/read", json={})
    assert read.json()["read_statuses"] == 1
    await until_every_status_settled(http, receiver)
    assert receiver.statuses_of(message_id) == ["sent", "delivered", "read"]


async def test_with_read_receipts_off_the_customer_reads_and_nothing_is_posted(http, receiver):
    await customer_writes(http, NO_RECEIPTS)
    message_id = (await send(http, to=NO_RECEIPTS)).json()["messages"][0]["id"]
    await until_every_status_settled(http, receiver)
    read = await http.post(f"/simulator/customers/{NO_RECEIPTS}/read")
    assert read.json() == {"phone": NO_RECEIPTS, "read_statuses": 0, "read_receipts": False}
    await until_every_status_settled(http, receiver)
    assert receiver.statuses_of(message_id) == ["sent", "delivered"]


async def test_bad_read_and_settings_calls_are_400(http):
    assert (await http.post("/simulator/customers/12-ab/read")).status_code == 400
    assert (await http.post(f"/simulator/customers/{CUSTOMER}/read", json={"number": NUMBER})).status_code == 400
    assert (await http.put(f"/simulator/customers/{CUSTOMER}", json={"auto_read": "no"})).status_code == 400
    assert (await http.put(f"/simulator/customers/{CUSTOMER}", json={"reads": False})).status_code == 400


# -- the service's media client -------------------------------------------------------------------------------


async def test_the_media_client_uploads_to_the_simulator_and_keeps_the_file_it_sent(simulator):
    fetcher = MediaFetcher(simulator.url + "/v21.0", TOKEN)
    try:
        media_id = await fetcher.upload(NUMBER, PNG, "image/png", "parcel.png")
        assert isinstance(media_id, str)
        stream = await fetcher.open(media_id, None)
        assert stream.mime_type == "image/png" and b"".join([chunk async for chunk in stream.chunks]) == PNG
        assert fetcher.downloads == 0                      # the thread shows it from what was uploaded
        assert await fetcher.size(media_id) == len(PNG)
        refused = await fetcher.upload(NUMBER, b"MZ", "application/x-msdownload", "setup.exe")
        assert isinstance(refused, SendRefused) and (refused.code, refused.http_status) == (100, 400)
    finally:
        await fetcher.aclose()
    wrong_token = MediaFetcher(simulator.url, "wrong")
    try:
        refused = await wrong_token.upload(NUMBER, PNG, "image/png", "parcel.png")
        assert isinstance(refused, SendRefused) and (refused.code, refused.http_status) == (190, 401)
    finally:
        await wrong_token.aclose()


async def test_an_upload_to_a_platform_that_is_not_there_is_a_value():
    fetcher = MediaFetcher("http://127.0.0.1:9", TOKEN)
    try:
        refused = await fetcher.upload(NUMBER, PNG, "image/png", "parcel.png")
    finally:
        await fetcher.aclose()
    assert isinstance(refused, SendRefused)
    assert (refused.code, refused.title, refused.http_status) == (UNREACHABLE_CODE, TITLE_UNREACHABLE, 0)
