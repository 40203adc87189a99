"""Attachments sent from the agent inbox's composer, and the simulator playing the customer's side of them and of
the read state (issue 38): the service over HTTP on a real socket, its built-in simulator as the platform.

- Over HTTP, without the script: the reply form posted as a multipart form with a file uploads it to the platform's
  media endpoint, then sends it by its media id: the customer gets the file (the simulator's record: its SHA-256,
  type, caption, name), once however often the form is posted (twice at once, then again); the thread shows it
  through the app's own media route. Files the composer refuses (too big, a type WhatsApp does not send, empty,
  audio with text, nothing at all), a body past the form's 8 MiB, and a reply whose window closed meanwhile: a clear
  4xx (or the platform's 502), the text kept, nothing sent.
- In a browser: an image and a PDF attached with `set_input_files`, shown as a chip, sent, seen in the thread (the
  image inline, the PDF a link); a file too big refused beside the box before anything is sent; the ticks of a
  customer who reads only when told turn to read when the simulator's control call says they read.
"""

from __future__ import annotations

import base64
import hashlib
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import trio
from playwright.sync_api import Browser, BrowserContext, Page, expect

from inbox_actors.access import accounts
from inbox_actors.outbound_http.verified_tls import verified_context
from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.e2e.platform_webhooks import customer_message, post_envelope
from tests.e2e.web_app import chromium_browser, sign_in, wait_until_live, watched_page
from tests.waiting import eventually

PASSWORD = "a-long-enough-password"
AGENT = "raj@example.com"
ASHA, BILAL, CHEN = "919811500001", "919811500002", "919811500003"
# The smallest PNG there is: one transparent pixel.
PIXEL = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")
PDF = b"%PDF-1.4\n" + b"%" * 2000 + b"\n%%EOF\n"
MIB = 1024 * 1024
# An upload and a send under a busy machine's load: longer than a text reply's answer.
SENT_WITHIN_MS = 20_000


class Team:
    """A Scale workspace with an agent (Raj) who signs in, chats handed to the team, and the simulator."""

    def __init__(self, service, number: str, key: str) -> None:
        self.url, self.simulator, self.number, self.key = service.url, service.simulator_url, number, key

    async def media_sent_to(self, phone: str) -> list[dict]:
        """The media messages the simulator accepted for `phone`, oldest first (with what the customer got)."""
        async with httpx.AsyncClient(verify=verified_context(), base_url=self.simulator, timeout=10) as sim:
            answer = await sim.get(f"/simulator/numbers/{self.number}/messages", params={"to": phone})
        assert answer.status_code == 200, answer.text
        return [message for message in answer.json()["data"] if message["type"] != "text"]


async def _team(service, **chats: str) -> Team:
    workspace_id, number, _, key = await scale_workspace(service.db)
    member = await accounts.add_member(service.db, workspace_id=workspace_id, name="Raj", email=AGENT, role="agent")
    await accounts.set_member_password(service.db, member_id=member, password=PASSWORD)
    for phone, name in chats.items():
        await customer_writes(service, number, phone, "Can I talk to a person?", name=name)

    async def queued() -> bool:
        answers = [await service.client.get(f"/api/inbox/conversations/{phone}", headers=bearer(key))
                   for phone in chats]
        return all(answer.json().get("state") == "HANDOFF_PENDING" for answer in answers)

    await eventually(queued)
    return Team(service, number, key)


async def _simulator(service, method: str, path: str, **options) -> httpx.Response:
    async with httpx.AsyncClient(verify=verified_context(), base_url=service.simulator_url, timeout=10) as sim:
        return await sim.request(method, path, **options)


def _form_of(page: str) -> dict[str, str]:
    return {"csrf": re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1),
            "idempotency_key": re.search(r'id="reply-form".*?name="idempotency_key" value="([^"]+)"', page,
                                         re.S).group(1)}


# -- over HTTP, without the script -----------------------------------------------------------------------------


async def test_an_attachment_is_uploaded_then_sent_once_by_its_id_and_shown_through_the_apps_route(service):
    team = await _team(service, **{ASHA: "Asha Rao"})
    async with httpx.AsyncClient(base_url=team.url, timeout=30) as agent:
        assert (await agent.post("/app/sign-in", data={"email": AGENT, "password": PASSWORD})).status_code == 303
        form = _form_of((await agent.get(f"/app/chats/{ASHA}")).text)
        picture = {"attachment": ("parcel.png", PIXEL, "image/png")}
        fields = {**form, "text": "The parcel, as it left us"}
        answers: list[httpx.Response] = []

        async def post() -> None:
            answers.append(await agent.post(f"/app/chats/{ASHA}/reply?view=open", data=fields, files=picture))

        # Double-submitted (two at once, as a second click), then retried after the answer.
        async with trio.open_nursery() as nursery:
            nursery.start_soon(post)
            nursery.start_soon(post)
        await post()
        assert [answer.status_code for answer in answers] == [303, 303, 303], [a.text[:300] for a in answers]
        assert answers[0].headers["location"] == f"/app/chats/{ASHA}?view=open&done=reply"

        # The customer got the picture once: its bytes, type and caption, by the media id it was uploaded under.
        [got] = await team.media_sent_to(ASHA)
        assert (got["type"], got["mime_type"], got["text"]) == ("image", "image/png", "The parcel, as it left us")
        assert got["sha256"] == hashlib.sha256(PIXEL).hexdigest() and got["file_size"] == len(PIXEL)
        assert got["media_id"] and got["media_url"] is None
        stats = (await _simulator(service, "GET", "/simulator/stats")).json()
        assert stats["media_uploads"] == 1        # the second request waited for the first's answer: no upload

        # A PDF goes as a document with its name; the text box may be left empty.
        form = _form_of((await agent.get(f"/app/chats/{ASHA}")).text)
        sent = await agent.post(f"/app/chats/{ASHA}/reply", data={**form, "text": ""},
                                files={"attachment": ("invoice-2291.pdf", PDF, "application/pdf")})
        assert sent.status_code == 303, sent.text[:500]
        document = (await team.media_sent_to(ASHA))[-1]
        assert (document["type"], document["filename"], document["mime_type"], document["text"]) == (
            "document", "invoice-2291.pdf", "application/pdf", None)
        assert document["sha256"] == hashlib.sha256(PDF).hexdigest()

        # The thread: both are the member's, shown through the app's own media route (re-read from the platform by
        # their media ids, or from the cache the upload filled).
        thread = (await service.client.get(f"/api/reporting/v1/conversations/{ASHA}/messages",
                                           headers=bearer(team.key))).json()["data"]
        image, pdf = [m for m in thread if m["type"] in ("image", "document")]
        assert image["sender_type"] == "agent" and image["mime_type"] == "image/png"
        assert image["media_url"] == f"/api/reporting/v1/conversations/{ASHA}/messages/{image['id']}/media"
        assert pdf["filename"] == "invoice-2291.pdf"
        page = (await agent.get(f"/app/chats/{ASHA}")).text
        assert f'<img class="media" src="/app/chats/{ASHA}/media/{image["id"]}" alt="The parcel, as it left us"' in page
        assert re.search(rf'href="/app/chats/{ASHA}/media/{pdf["id"]}">invoice-2291\.pdf \(2\.0 KB\)</a>', page)
        fetched = await agent.get(f"/app/chats/{ASHA}/media/{image['id']}")
        assert fetched.status_code == 200 and fetched.content == PIXEL
        assert fetched.headers["content-type"].startswith("image/png")
        assert (await agent.get(f"/app/chats/{ASHA}/media/{pdf['id']}")).content == PDF


async def test_files_the_composer_refuses_keep_the_text_and_send_nothing(service):
    team = await _team(service, **{BILAL: "Bilal"})
    async with httpx.AsyncClient(base_url=team.url, timeout=30) as agent:
        assert (await agent.post("/app/sign-in", data={"email": AGENT, "password": PASSWORD})).status_code == 303
        form = _form_of((await agent.get(f"/app/chats/{BILAL}")).text)

        async def refused(status: int, sentence: str, text: str, file: tuple | None) -> None:
            answer = await agent.post(f"/app/chats/{BILAL}/reply", data={**form, "text": text},
                                      files={"attachment": file} if file else None)
            assert answer.status_code == status, answer.text[:500]
            assert sentence in answer.text, answer.text[:2000]
            if text:
                assert f">{text}</textarea>" in answer.text          # what was typed is kept

        big_picture = b"\x89PNG\r\n\x1a\n" + b"\0" * (5 * MIB)
        await refused(413, "at most 7 MB (a picture 5 MB); this one is larger", "Here it is",
                      ("big.png", big_picture, "image/png"))
        await refused(415, "WhatsApp takes pictures (JPEG, PNG), videos (MP4, 3GP), audio (AAC, AMR, MP3, M4A, OGG) "
                      "and documents (PDF, Word, Excel, PowerPoint, plain text); setup.exe is none of these.",
                      "The installer", ("setup.exe", b"MZ" * 100, "application/x-msdownload"))
        await refused(415, "sticker.webp is none of these", "", ("sticker.webp", b"RIFF" * 10, "image/webp"))
        await refused(400, "empty.pdf is empty; attach the file again.", "Empty", ("empty.pdf", b"",
                                                                                  "application/pdf"))
        await refused(400, "WhatsApp sends audio without text", "Listen", ("note.mp3", b"ID3" * 50, "audio/mpeg"))
        await refused(400, "Write a reply or attach a file, then send.", "", None)
        # A video over 7 MiB but within the form's 8 MiB: the rule's sentence.
        await refused(413, "this one is larger", "The clip", ("clip.mp4", b"\0" * (7 * MIB + 1), "video/mp4"))
        # Past the form's 8 MiB the service answers before reading the body (the script says so sooner).
        over = await agent.post(f"/app/chats/{BILAL}/reply", data=form,
                                files={"attachment": ("huge.pdf", b"\0" * (8 * MIB), "application/pdf")})
        assert over.status_code == 413 and over.json()["error"] == "payload_too_large"
        # A browser that names no type: the file's name says it.
        named = await agent.post(f"/app/chats/{BILAL}/reply", data={**form, "text": "Sheet"},
                                 files={"attachment": ("prices.xlsx", b"PK\x03\x04" * 64, "application/octet-stream")})
        assert named.status_code == 303, named.text[:500]
    [sheet] = await team.media_sent_to(BILAL)
    assert sheet["mime_type"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    stats = (await _simulator(service, "GET", "/simulator/stats")).json()
    assert stats["media_uploads"] == 1 and stats["uploads_refused"] == {}   # nothing refused was uploaded


async def test_a_reply_whose_window_closed_meanwhile_keeps_its_text_beside_the_templates(service):
    team = await _team(service)
    long_ago = datetime.now(timezone.utc) - timedelta(hours=25)
    answer = await post_envelope(service, team.number, messages=[customer_message("wamid.old", CHEN, "hi", long_ago)])
    assert answer.status_code == 200
    async with httpx.AsyncClient(base_url=team.url, timeout=30) as agent:
        assert (await agent.post("/app/sign-in", data={"email": AGENT, "password": PASSWORD})).status_code == 303
        page = (await agent.get(f"/app/chats/{CHEN}")).text
        assert 'id="reply-form"' not in page and "Send a template" in page
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)
        # A reply composed while the window was open, sent after it closed.
        answer = await agent.post(f"/app/chats/{CHEN}/reply", data={"csrf": csrf, "text": "Your photo",
                                                                     "idempotency_key": "k-window-1"},
                                  files={"attachment": ("photo.jpg", b"\xff\xd8\xff" + b"\0" * 100, "image/jpeg")})
    assert answer.status_code == 502, answer.text[:500]
    assert "window has closed, so only a template can reach them now; your text is kept" in answer.text
    assert ">Your photo</textarea>" in answer.text and "Send a template" in answer.text
    assert await team.media_sent_to(CHEN) == []


# -- in a browser ------------------------------------------------------------------------------------------------


def _signed_in(browser: Browser, team: Team, then: str, errors: list[str]) -> tuple[BrowserContext, Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = watched_page(context, errors)
    sign_in(page, team.url, AGENT, PASSWORD, then=then)
    return context, page


def _attach_and_read(chromium: str, team: Team, folder: Path) -> None:
    files = folder / "attachments"
    files.mkdir(exist_ok=True)
    (files / "parcel.png").write_bytes(PIXEL)
    (files / "invoice-2291.pdf").write_bytes(PDF)
    (files / "huge.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * (6 * MIB))
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        _, page = _signed_in(browser, team, f"/app/chats/{ASHA}", errors)
        page.goto(f"{team.url}/app/chats/{ASHA}?view=open")
        wait_until_live(page)
        box = page.get_by_label("Reply to Asha Rao")
        attach = page.get_by_label("Attach", exact=True)

        # Too big: refused beside the box before anything is sent, the text kept, no file left chosen.
        box.fill("The parcel, as it left us")
        attach.set_input_files(str(files / "huge.png"))
        expect(page.locator("#reply-error")).to_contain_text("a picture 5 MB); this one is larger")
        expect(page.locator("#reply-file-chip")).to_be_hidden()
        expect(box).to_have_value("The parcel, as it left us")

        # An image: its chip, its name and size; Remove takes it away; chosen again and sent with the text.
        attach.set_input_files(str(files / "parcel.png"))
        expect(page.locator("#reply-file-chip")).to_be_visible()
        expect(page.locator("#reply-file-name")).to_have_text("parcel.png (68 bytes)")
        expect(page.locator("#reply-error")).to_be_hidden()
        assert_accessible(page, "a reply with a file chosen")
        page.get_by_role("button", name="Remove the attached file").click()
        expect(page.locator("#reply-file-chip")).to_be_hidden()
        assert page.evaluate("document.getElementById('reply-file').files.length") == 0
        attach.set_input_files(str(files / "parcel.png"))
        page.get_by_role("button", name="Send", exact=True).click()
        expect(page.get_by_role("status")).to_have_text("Sent.", timeout=SENT_WITHIN_MS)
        image = page.locator(".msg.from-agent img.media")
        expect(image).to_have_attribute("alt", "The parcel, as it left us")
        page.wait_for_function("() => document.querySelector('.msg.from-agent img.media').naturalWidth === 1")
        expect(page.locator("#reply-file-chip")).to_be_hidden()
        assert page.evaluate("document.getElementById('reply-file').files.length") == 0
        expect(box).to_have_value("")

        # A PDF alone: a link with its name and size.
        attach.set_input_files(str(files / "invoice-2291.pdf"))
        expect(page.locator("#reply-file-name")).to_have_text("invoice-2291.pdf (2.0 KB)")
        page.get_by_role("button", name="Send", exact=True).click()
        link = page.locator(".msg.from-agent a.media-file", has_text="invoice-2291.pdf")
        expect(link).to_have_text("invoice-2291.pdf (2.0 KB)", timeout=SENT_WITHIN_MS)
        answer = page.request.get(team.url + link.get_attribute("href"))
        assert answer.status == 200 and answer.body() == PDF

        # The customer reads only when told: delivered ✓✓ until the control call, then read, live.
        delivered = page.locator(".msg.from-agent .tick", has_text="✓✓")
        expect(delivered).to_have_count(2, timeout=SENT_WITHIN_MS)
        expect(page.locator(".msg.from-agent .tick.read")).to_have_count(0)
        read = httpx.post(f"{team.simulator}/simulator/customers/{ASHA}/read", json={"phone_number_id": team.number},
                          verify=verified_context(), timeout=10)
        assert read.status_code == 200 and read.json() == {"phone": ASHA, "read_statuses": 2, "read_receipts": True}
        expect(page.locator(".msg.from-agent .tick.read")).to_have_count(2, timeout=SENT_WITHIN_MS)
        assert_accessible(page, "a chat with the member's files, read")
        page.screenshot(path=str(folder / "attachments-sent-and-read.png"))
        assert errors == []


async def test_an_image_and_a_pdf_attached_in_the_browser_reach_the_thread_and_turn_read(service, chromium,
                                                                                        artifacts):
    team = await _team(service, **{ASHA: "Asha Rao"})
    settings = await _simulator(service, "PUT", f"/simulator/customers/{ASHA}", json={"auto_read": False})
    assert settings.json() == {"phone": ASHA, "read_receipts": True, "auto_read": False}
    await in_browser_thread(_attach_and_read, chromium, team, artifacts)
    got = await team.media_sent_to(ASHA)
    assert [(m["type"], m["status"]) for m in got] == [("image", "read"), ("document", "read")]
    assert [m["sha256"] for m in got] == [hashlib.sha256(PIXEL).hexdigest(), hashlib.sha256(PDF).hexdigest()]
