"""The agent workspace's defects 6 to 11 of issue 38, each in a real browser (Debian's Chromium through Playwright)
against the service in this test's process, its built-in simulator playing the customers:

- 6: a snoozed chat leaves Mine and All open for the Snoozed view (which says when it wakes), and comes back when
  the customer writes.
- 7: a contact without a chat opens (its card, "No messages yet") and a template starts the chat.
- 8: a customer's image shows in the thread, through the app's own media route; a document is a link with its
  name and size.
- 9: a sent template shows the text the customer got, in the thread and in the list's preview.
- 10: a transfer's reason reaches the member it went to; the chat shows its trail (claim, label, snooze, transfer)
  among the messages, by time.
- 11: the Search button on one line at 1280 and 390 px; label colours in the list and the chat's head; a resolved
  chat not "waiting"; a favicon and no 404 on any page; `?view=all` falls back with a notice; a HEAD request not
  logged as a warning; opening a chat marks it read for the member who opened it only.
"""

from __future__ import annotations

import base64
import logging
import re
from pathlib import Path

import httpx
import trio
from playwright.sync_api import Browser, BrowserContext, Page, expect

from inbox_actors.access import accounts
from inbox_actors.outbound_http.verified_tls import verified_context
from inbox_actors.platform import templates
from tests import builders
from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.e2e.web_app import chromium_browser, no_sideways_scroll, sign_in, wait_until_live, watched_page
from tests.waiting import eventually

PASSWORD = "a-long-enough-password"
ANN, RAJ = "ann@example.com", "raj@example.com"
ASHA, BILAL, DANA = "919811400001", "919811400002", "919811400003"
ORDER_UPDATE = "Hello {{1}}, your order {{2}} is on its way."
# How many lines a button's text takes.
LINES = "b => { const r = document.createRange(); r.selectNodeContents(b); return r.getClientRects().length; }"
# The smallest PNG there is: one transparent pixel.
PIXEL = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")


class Team:
    """A Scale workspace with Ann (admin) and Raj (agent), who sign in, each with a key of their own for the API;
    chats handed to the team; and the simulator playing the customers."""

    def __init__(self, service, number: str, keys: dict[str, str], members: dict[str, int]) -> None:
        self.url, self.simulator, self.number = service.url, service.simulator_url, number
        self.keys, self.members = keys, members

    def api(self, email: str = ANN) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=bearer(self.keys[email]), timeout=10)

    def sent_to(self, phone: str) -> list[dict]:
        answer = httpx.get(f"{self.simulator}/simulator/numbers/{self.number}/messages", params={"to": phone},
                           verify=verified_context(), timeout=10)
        assert answer.status_code == 200, answer.text
        return answer.json()["data"]

    def customer_sends(self, phone: str, **message) -> None:
        answer = httpx.post(f"{self.simulator}/simulator/customers/{phone}/messages", verify=verified_context(),
                            json={"phone_number_id": self.number, **message}, timeout=10)
        assert answer.status_code == 200 and answer.json()["delivered_to_service"], answer.text


async def _team(service, *handed_off: str, **names: str) -> Team:
    workspace_id, number, _, _ = await scale_workspace(service.db)
    keys, members = {}, {}
    for email, role in ((ANN, "admin"), (RAJ, "agent")):
        member = await accounts.add_member(service.db, workspace_id=workspace_id, name=email.split("@")[0].title(),
                                           email=email, role=role)
        await accounts.set_member_password(service.db, member_id=member, password=PASSWORD)
        keys[email] = (await builders.key(service.db, workspace_id, member)).key
        members[email] = member
    await templates.add_template(service.db, workspace_id=workspace_id, name="order_update", language="en",
                                 body=ORDER_UPDATE)
    for phone in handed_off:
        await customer_writes(service, number, phone, "Can I talk to a person?", name=names.get(phone, "Asha"))

    async def queued() -> bool:
        answers = [await service.client.get(f"/api/inbox/conversations/{phone}", headers=bearer(keys[ANN]))
                   for phone in handed_off]
        return all(answer.json().get("state") == "HANDOFF_PENDING" for answer in answers)

    await eventually(queued)
    return Team(service, number, keys, members)


def _signed_in(browser: Browser, team: Team, email: str, then: str, errors: list[str],
               **options) -> tuple[BrowserContext, Page]:
    """A member's own browser context, signed in and showing `then`, its script errors and Content-Security-Policy
    reports collected in `errors`."""
    context = browser.new_context(**({"viewport": {"width": 1280, "height": 900}} | options))
    page = watched_page(context, errors)
    page.add_init_script("window.__violations = []; document.addEventListener('securitypolicyviolation', "
                         "(e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));")
    page.on("console", lambda message: errors.append(message.text)
            if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text else None)
    path = then.partition("?")[0]
    sign_in(page, team.url, email, PASSWORD, then=path)
    if then != path:
        page.goto(f"{team.url}{then}")
    return context, page


def _row(page: Page, phone: str):
    return page.locator(f"#row-{phone}")


# -- 6: snooze hides the chat, and the Snoozed view lists it -------------------------------------------------


def _snoozed(chromium: str, team: Team, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        _, page = _signed_in(browser, team, RAJ, f"/app/chats/{ASHA}?view=mine", errors)
        wait_until_live(page)
        page.get_by_role("button", name="Claim").click()
        expect(_row(page, ASHA)).to_be_visible()  # claimed: the chat is in Mine
        page.locator("summary", has_text="Snooze").click()
        page.get_by_label("Until").select_option("4h")
        page.get_by_role("button", name="Snooze", exact=True).click()
        expect(page.get_by_role("status")).to_have_text("Snoozed.")
        expect(_row(page, ASHA)).to_have_count(0)  # gone from Mine
        page.locator("#view-open").click()
        expect(page.locator("#view-open")).to_have_attribute("aria-current", "page")
        expect(_row(page, ASHA)).to_have_count(0)  # and from All open
        page.locator("#view-snoozed").click()
        expect(page.locator("#view-snoozed")).to_have_attribute("aria-current", "page")
        expect(_row(page, ASHA).locator(".wakes")).to_have_text(
            re.compile(r"^wakes \d\d [A-Z][a-z]{2} \d\d:\d\d UTC([+-]\d\d:\d\d)?$"))
        assert_accessible(page, "the Snoozed view")
        page.screenshot(path=str(folder / "defect-06-snoozed-view.png"))
        # The customer writes: the snooze ends, the chat leaves the Snoozed view and is back in Mine.
        team.customer_sends(ASHA, text="Any news?")
        expect(_row(page, ASHA)).to_have_count(0)
        page.locator("#view-mine").click()
        expect(_row(page, ASHA).locator(".preview")).to_have_text("Any news?")
        assert errors == []


async def test_a_snoozed_chat_leaves_mine_and_all_open_for_the_snoozed_view_until_the_customer_writes(
        service, chromium, artifacts):
    team = await _team(service, ASHA)
    await in_browser_thread(_snoozed, chromium, team, artifacts)


# -- 7: a contact without a chat, and a chat started with a template -----------------------------------------


def _contact_without_chat(chromium: str, team: Team, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        _, page = _signed_in(browser, team, RAJ, "/app/inbox?view=open", errors)
        wait_until_live(page)
        page.get_by_label("Search chats").fill("Dana")
        page.get_by_role("button", name="Search").click()
        expect(_row(page, DANA)).to_contain_text("No chat yet")
        page.locator(f"#link-{DANA}").click()
        expect(page.get_by_role("heading", level=1)).to_contain_text("Dana Shah")
        expect(page.locator("#thread")).to_contain_text("No messages yet.")
        expect(page.locator("#contact-panel")).to_contain_text("dana@example.com")
        assert_accessible(page, "a contact without a chat")
        page.screenshot(path=str(folder / "defect-07-contact-without-chat.png"))
        start = page.locator("#start-chat")
        start.get_by_label("Value of {{1}}").fill("Dana")
        start.get_by_label("Value of {{2}}").fill("A-77")
        start.get_by_role("button", name="Send order_update").click()
        expect(page.get_by_role("status")).to_have_text("Template sent.")
        expect(page.locator(".msg.from-system .text, .msg.from-agent .text")).to_have_text(
            "Hello Dana, your order A-77 is on its way.")
        expect(page.locator(".chat-head .state")).to_have_text("With the bot")
        assert errors == []
    sent = [m for m in team.sent_to(DANA) if m.get("type") == "template"]
    assert len(sent) == 1, sent


async def test_a_contact_without_a_chat_opens_and_a_template_starts_the_chat(service, chromium, artifacts):
    team = await _team(service)
    created = await service.client.post("/api/contacts", headers=bearer(team.keys[ANN]), json={
        "phone": DANA, "name": "Dana Shah", "email": "dana@example.com"})
    assert created.status_code == 201, created.text
    await in_browser_thread(_contact_without_chat, chromium, team, artifacts)


# -- 8: customer media in the thread -------------------------------------------------------------------------


def _media(chromium: str, team: Team, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        _, page = _signed_in(browser, team, RAJ, f"/app/chats/{ASHA}", errors)
        image = page.locator(".msg img.media")
        expect(image).to_have_attribute("alt", "The parcel, crushed")
        expect(image).to_have_attribute("loading", "lazy")
        assert image.get_attribute("src").startswith(f"/app/chats/{ASHA}/media/")
        expect(page.locator(".msg .text", has_text="The parcel, crushed")).to_have_count(1)  # the caption, once
        page.wait_for_function("() => document.querySelector('.msg img.media').naturalWidth === 1")
        document = page.locator(".msg a.media-file", has_text="invoice")
        expect(document).to_have_text(re.compile(r"^invoice-2291\.pdf \(1\.[0-9] KB\)$"))
        answer = page.request.get(team.url + document.get_attribute("href"))
        assert answer.status == 200 and answer.body().startswith(b"%PDF"), answer.status
        expect(page.locator(".msg a.media-file", has_text="voice-note")).to_have_count(1)
        assert page.evaluate("window.__violations") == []
        assert_accessible(page, "a chat with media")
        page.screenshot(path=str(folder / "defect-08-media.png"))
        assert errors == []


async def test_customer_media_shows_in_the_thread_through_the_apps_own_route(service, chromium, artifacts):
    team = await _team(service, ASHA)
    pdf = b"%PDF-1.4\n" + b"%" * 1200
    for message in ({"type": "image", "text": "The parcel, crushed", "mime_type": "image/png",
                     "content_base64": base64.b64encode(PIXEL).decode()},
                    {"type": "document", "filename": "invoice-2291.pdf", "mime_type": "application/pdf",
                     "content_base64": base64.b64encode(pdf).decode()},
                    {"type": "audio", "filename": "voice-note.ogg"}):
        async with httpx.AsyncClient(verify=verified_context(), base_url=service.simulator_url, timeout=10) as sim:
            sent = await sim.post(f"/simulator/customers/{ASHA}/messages",
                                  json={"phone_number_id": team.number, **message})
        assert sent.status_code == 200 and sent.json()["delivered_to_service"], sent.text
    await in_browser_thread(_media, chromium, team, artifacts)


# -- 9: a sent template's text --------------------------------------------------------------------------------


def _template_text(chromium: str, team: Team, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        _, page = _signed_in(browser, team, RAJ, f"/app/chats/{ASHA}?view=open", errors)
        said = "Hello Asha, your order 1234 is on its way."
        expect(page.locator(".msg:not(.from-customer) .text")).to_have_text(said)
        expect(_row(page, ASHA).locator(".preview")).to_have_text(said)
        assert "[template" not in page.content()
        page.screenshot(path=str(folder / "defect-09-template-text.png"))
        assert errors == []


async def test_a_sent_template_shows_the_text_the_customer_got(service, chromium, artifacts):
    team = await _team(service, ASHA)
    sent = await service.client.post("/api/send-message", headers=bearer(team.keys[ANN]), json={
        "to": ASHA, "type": "template",
        "template": {"name": "order_update", "language": "en", "parameters": ["Asha", "1234"]}})
    assert sent.status_code == 200, sent.text
    await in_browser_thread(_template_text, chromium, team, artifacts)


# -- 10: a transfer's reason, and the chat's trail -----------------------------------------------------------


def _trail(chromium: str, team: Team, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        _, page = _signed_in(browser, team, RAJ, f"/app/chats/{ASHA}", errors)
        wait_until_live(page)
        with team.api(ANN) as ann:
            base = f"/api/inbox/conversations/{ASHA}"
            assert ann.post(f"{base}/transfer", json={"to_user_id": team.members[RAJ],
                                                      "reason": "She wants a call back in Hindi"}).status_code == 200
        # Heard live: the head says who handed it over and why.
        expect(page.locator("#handed-over")).to_have_text("Transferred to you by Ann: She wants a call back in Hindi")
        trail = page.locator("#messages > li.trail")
        expect(trail).to_have_count(4)
        said = [re.sub(r"\s+\d\d [A-Z][a-z]{2} \d\d:\d\d$", "", text.strip()) for text in trail.all_inner_texts()]
        assert said == ["Ann claimed the chat", "Ann added the label vip",
                        "Ann snoozed the chat until the customer writes",
                        "Ann transferred the chat to Raj: She wants a call back in Hindi"], said
        # Interleaved by time: the customer's second message came between the snooze and the transfer.
        kinds = page.locator("#messages > li").evaluate_all(
            "items => items.map(li => li.classList.contains('trail') ? li.textContent.trim().split(' ')[1]"
            " : (li.textContent.includes('rather speak Hindi') ? 'hindi' : 'message'))")
        assert [kind for kind in kinds if kind != "message"] == ["claimed", "added", "snoozed", "hindi",
                                                                 "transferred"], kinds
        assert_accessible(page, "a chat with its trail")
        page.screenshot(path=str(folder / "defect-10-trail.png"))
        assert errors == []


async def test_a_transfers_reason_reaches_its_member_and_the_chat_shows_its_trail(service, chromium, artifacts):
    team = await _team(service, ASHA)
    api, key = service.client, bearer(team.keys[ANN])
    base = f"/api/inbox/conversations/{ASHA}"
    assert (await api.post("/api/labels", headers=key, json={"name": "vip"})).status_code == 201
    assert (await api.post(f"{base}/claim", headers=key)).status_code == 200
    assert (await api.post(f"{base}/labels", headers=key, json={"label": "vip"})).status_code == 200
    assert (await api.post(f"{base}/snooze", headers=key, json={})).status_code == 200
    await trio.sleep(1.1)  # the platform's times have whole seconds: the customer writes in a later one
    await customer_writes(service, team.number, ASHA, "I would rather speak Hindi")
    await in_browser_thread(_trail, chromium, team, artifacts)


# -- 11: the rest ----------------------------------------------------------------------------------------------


def _the_rest(chromium: str, team: Team, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        context, page = _signed_in(browser, team, ANN, f"/app/chats/{ASHA}?view=open", errors)
        missing: list[str] = []
        context.on("response", lambda answer: missing.append(answer.url) if answer.status == 404 else None)
        # A favicon, and no 404 on a page (the list with a chat, an admin page).
        icon = page.locator("link[rel=icon]")
        expect(icon).to_have_count(1)
        assert page.request.get(team.url + icon.get_attribute("href")).status == 200
        # Label colours on the chat's head and on its row.
        expect(page.locator(".chat-labels .label svg rect[fill='#d97706']")).to_have_count(1)
        expect(_row(page, ASHA).locator("svg rect[fill='#d97706']")).to_have_count(1)
        # The Search button's word on one line, here and on a phone.
        assert page.get_by_role("button", name="Search").evaluate(LINES) == 1
        # A resolved chat does not wait.
        page.locator("#view-resolved").click()
        expect(_row(page, BILAL)).to_be_visible()
        expect(_row(page, BILAL)).not_to_contain_text("waiting")
        page.locator(f"#link-{BILAL}").click()
        expect(page.get_by_role("heading", level=1)).to_contain_text("Bilal")
        expect(page.locator(".chat-head .meta")).not_to_contain_text("waiting")
        # An unknown view is the default view, with a notice.
        answer = page.goto(f"{team.url}/app/inbox?view=all")
        assert answer.status == 200
        expect(page.locator("#view-notice")).to_have_text("There is no view “all”: here is the Queue.")
        expect(page.locator("#view-queue")).to_have_attribute("aria-current", "page")
        page.goto(f"{team.url}/app/labels")
        page.goto(f"{team.url}/app/team")
        page.wait_for_timeout(300)
        assert missing == [], missing
        phone = watched_page(browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                                 has_touch=True), errors)
        sign_in(phone, team.url, ANN, PASSWORD, then="/app/inbox")
        assert phone.get_by_role("button", name="Search").evaluate(LINES) == 1
        no_sideways_scroll(phone)
        page.screenshot(path=str(folder / "defect-11-the-rest.png"))
        assert errors == []


async def test_search_button_label_colours_a_resolved_chat_the_favicon_and_an_unknown_view(service, chromium,
                                                                                            artifacts):
    team = await _team(service, ASHA, BILAL, **{BILAL: "Bilal"})
    api, key = service.client, bearer(team.keys[ANN])
    assert (await api.post("/api/labels", headers=key, json={"name": "refund", "colour": "#d97706"})).status_code \
        == 201
    assert (await api.post(f"/api/inbox/conversations/{ASHA}/labels", headers=key,
                           json={"label": "refund"})).status_code == 200
    assert (await api.post(f"/api/inbox/conversations/{BILAL}/claim", headers=key)).status_code == 200
    assert (await api.post(f"/api/inbox/conversations/{BILAL}/resolve", headers=key)).status_code == 200
    await in_browser_thread(_the_rest, chromium, team, artifacts)


async def _head(url: str, path: str) -> bytes:
    """A HEAD request as `curl -I` makes it: the answer's head read, then the connection closed at once (a HEAD's
    answer has no body to wait for)."""
    address = httpx.URL(url)
    stream = await trio.open_tcp_stream(address.host, address.port)
    async with stream:
        await stream.send_all(f"HEAD {path} HTTP/1.1\r\nHost: {address.host}\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += await stream.receive_some(4096)
    return head.split(b"\r\n", 1)[0]


async def test_a_head_request_is_answered_as_a_get_and_not_logged_as_a_warning(service, caplog):
    caplog.set_level(logging.WARNING, logger="inbox_http.requests_in_flight")
    for path, status in (("/app/static/app.css", b"200"), ("/app/sign-in", b"200"), ("/app/inbox", b"303")):
        assert (await _head(service.url, path)).split()[1] == status, path
    await trio.sleep(0.3)  # the server has finished with the requests
    assert [record.getMessage() for record in caplog.records if record.name == "inbox_http.requests_in_flight"] == []


def _read_per_member(chromium: str, team: Team, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        _, raj = _signed_in(browser, team, RAJ, "/app/inbox?view=open", errors)
        _, ann = _signed_in(browser, team, ANN, "/app/inbox?view=open", errors)
        for page in (raj, ann):
            wait_until_live(page)
            expect(_row(page, ASHA).locator(".badge")).to_contain_text("1")
        ann.locator(f"#link-{ASHA}").click()
        expect(ann.get_by_role("heading", level=1)).to_contain_text("Asha")
        expect(_row(ann, ASHA).locator(".badge")).to_have_count(0)  # read for Ann, who opened it
        team.customer_sends(BILAL, text="Still there?")  # an event that reads Raj's list again
        expect(_row(raj, BILAL).locator(".preview")).to_have_text("Still there?")
        expect(_row(raj, ASHA).locator(".badge")).to_contain_text("1")  # still unread for Raj
        expect(raj.locator("#view-open .badge")).to_contain_text("2")
        raj.locator(f"#link-{ASHA}").click()
        # The list is read again once the read is recorded (a live event): longer than a click's answer on a busy
        # machine.
        expect(_row(raj, ASHA).locator(".badge")).to_have_count(0, timeout=15_000)
        raj.screenshot(path=str(folder / "defect-11-read-per-member.png"))
        assert errors == []


async def test_opening_a_chat_marks_it_read_for_the_member_who_opened_it_only(service, chromium, artifacts):
    team = await _team(service, ASHA, BILAL, **{BILAL: "Bilal"})
    await in_browser_thread(_read_per_member, chromium, team, artifacts)
