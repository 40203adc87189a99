"""The agent workspace in a real browser (Debian's Chromium through Playwright), against the service in this test's
process with its built-in simulator playing the customers: one screen that does not reload, nothing sent twice,
nothing lost (issue 38, defects 1 to 5).

- A reply clicked three times 300 ms apart under 800 ms of network latency reaches the customer once.
- A refused reply keeps its text, with a person's sentence beside the box.
- An ended session keeps the draft and offers to sign in again, back to the chat.
- A customer's message moves neither the focus (a link of the list, a label's field, the reply box) nor the list's
  or the thread's scroll.
- A note, a label and a snooze reach another member's open chat.
- The list and the chat side by side at 1280 px with no page load while choosing chats and acting, the contact
  card beside them; one column on a phone; claim and reply without JavaScript; axe-core on the new states; no
  Content-Security-Policy violation.
- Over HTTP: the same key twice sends once and answers the first's outcome; another member's same key is theirs;
  the library is served to be kept a year, and without it the pages are plain forms.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import trio
from playwright.sync_api import Browser, BrowserContext, Page, expect

from inbox_actors.access import accounts
from inbox_actors.outbound_http.verified_tls import verified_context
from inbox_http.web import app_assets, vendor_assets
from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.e2e.web_app import chromium_browser, no_sideways_scroll, sign_in, watched_page
from tests.waiting import eventually

PASSWORD = "a-long-enough-password"
ADMIN = "ann@example.com"
AGENT = "raj@example.com"
ASHA, BILAL, CHEN = "919811200001", "919811200002", "919811200003"
DRAFT = "Half-written: your order left the warehouse on"


class Team:
    """A Scale workspace with an admin and an agent who sign in, chats handed to the team, and the simulator."""

    def __init__(self, service, number: str, key: str) -> None:
        self.url, self.simulator, self.number, self.key = service.url, service.simulator_url, number, key

    def sent_to(self, phone: str) -> list[dict]:
        """What the simulator received from the business number for this customer."""
        answer = httpx.get(f"{self.simulator}/simulator/numbers/{self.number}/messages", params={"to": phone},
                           verify=verified_context(), timeout=10)
        assert answer.status_code == 200, answer.text
        return answer.json()["data"]

    def customer_writes(self, phone: str, text: str) -> None:
        answer = httpx.post(f"{self.simulator}/simulator/customers/{phone}/messages", verify=verified_context(),
                            json={"phone_number_id": self.number, "text": text}, timeout=10)
        assert answer.status_code == 200 and answer.json()["delivered_to_service"], answer.text


async def _team(service, *handed_off: str, **names: str) -> Team:
    workspace_id, number, _, key = await scale_workspace(service.db)
    for email, role in ((ADMIN, "admin"), (AGENT, "agent")):
        member = await accounts.add_member(service.db, workspace_id=workspace_id, name=email.split("@")[0].title(),
                                           email=email, role=role)
        await accounts.set_member_password(service.db, member_id=member, password=PASSWORD)
    for phone in handed_off:
        await customer_writes(service, number, phone, "Can I talk to a person?", name=names.get(phone, "Asha"))

    async def queued() -> bool:
        answers = [await service.client.get(f"/api/inbox/conversations/{phone}", headers=bearer(key))
                   for phone in handed_off]
        return all(answer.json().get("state") == "HANDOFF_PENDING" for answer in answers)

    await eventually(queued)
    return Team(service, number, key)


def _signed_in(browser: Browser, team: Team, email: str, then: str, errors: list[str],
               **options) -> tuple[BrowserContext, Page]:
    context = browser.new_context(**({"viewport": {"width": 1280, "height": 900}} | options))
    page = watched_page(context, errors)
    _watch_policy(page, errors)
    sign_in(page, team.url, email, PASSWORD, then=then)
    return context, page


def _watch_policy(page: Page, errors: list[str]) -> None:
    """Content-Security-Policy violations: the console's reports go to `errors`, the document's own events to
    `window.__violations` (`_no_violations`)."""
    page.add_init_script("window.__violations = []; document.addEventListener('securitypolicyviolation', "
                         "(e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));")
    page.on("console", lambda message: errors.append(message.text)
            if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text else None)


def _no_violations(page: Page) -> None:
    assert page.evaluate("window.__violations") == [], page.evaluate("window.__violations")


def _live(page: Page) -> None:
    page.wait_for_selector("body[data-live-connected=true]", state="attached", timeout=10_000)


def _stays(page: Page) -> None:
    """Mark the document: a page load would start a new one without the mark."""
    page.evaluate("window.__stayed = true")


def _stayed(page: Page) -> None:
    assert page.evaluate("window.__stayed === true"), "the page was loaded again"


# -- defect 1: a reply sent three times -------------------------------------------------------------------


def _three_clicks(chromium: str, team: Team, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        context, page = _signed_in(browser, team, AGENT, f"/app/chats/{ASHA}", errors)
        _live(page)
        reply = "Your parcel is on its way, Asha."
        page.get_by_label("Reply to Asha").fill(reply)
        latency = context.new_cdp_session(page)
        latency.send("Network.enable")
        latency.send("Network.emulateNetworkConditions", {"offline": False, "latency": 800,
                                                          "downloadThroughput": -1, "uploadThroughput": -1})
        send = page.get_by_role("button", name="Send", exact=True)
        box = send.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.click(x, y)
        in_flight = page.evaluate("() => { const b = document.querySelector('#reply-form button[type=submit]');"
                                  " return {text: b.textContent, disabled: b.disabled}; }")
        assert in_flight == {"text": "Sending…", "disabled": True}, in_flight
        assert_accessible(page, "a reply being sent")
        for _ in range(2):
            page.wait_for_timeout(300)
            page.mouse.click(x, y)
        expect(page.get_by_role("status")).to_have_text("Sent.", timeout=10_000)
        page.wait_for_timeout(1_000)  # a second request, sent before the first's answer, has been answered by now
        received = [m for m in team.sent_to(ASHA) if m.get("text") == reply]
        print(f"\nthree clicks 300 ms apart, 800 ms latency: {len(received)} message(s) reached the customer")
        assert len(received) == 1, received
        expect(page.get_by_label("Reply to Asha")).to_have_value("")
        page.screenshot(path=str(folder / "01-sent-once.png"))
        _no_violations(page)
        assert errors == []


async def test_a_reply_clicked_three_times_under_latency_reaches_the_customer_once(service, chromium, artifacts):
    team = await _team(service, ASHA)
    await in_browser_thread(_three_clicks, chromium, team, artifacts)


# -- defect 2: a refused reply -------------------------------------------------------------------------------


def _refused_reply(chromium: str, team: Team, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        _, page = _signed_in(browser, team, AGENT, f"/app/chats/{ASHA}", errors)
        _stays(page)
        too_long = "Sorry for the wait. " * 205  # 4,100 characters: more than a message may have
        # Set as a paste past the box's maxlength would be; the service is the rule's keeper.
        page.eval_on_selector("#reply-text", "(box, text) => { box.value = text; }", too_long)
        page.get_by_role("button", name="Send", exact=True).click()
        alert = page.locator("#composer").get_by_role("alert")
        expect(alert).to_have_text(re.compile(r"A reply is 1 to 4,096 characters"))
        assert "Expected" not in alert.text_content() and "$.text" not in alert.text_content()
        box = page.get_by_label("Reply to Asha")
        expect(box).to_have_value(too_long)
        assert alert.get_attribute("id") in (box.get_attribute("aria-describedby") or "").split()
        assert page.get_by_role("alert").count() == 1  # beside the box, and nowhere else
        below = alert.bounding_box()["y"] >= box.bounding_box()["y"] + box.bounding_box()["height"] - 1
        assert below, "the sentence is not beside the box"
        assert_accessible(page, "a refused reply")
        page.screenshot(path=str(folder / "02-refused-reply.png"))
        box.fill("Sorry for the wait: it ships today.")
        page.get_by_role("button", name="Send", exact=True).click()
        expect(page.get_by_role("status")).to_have_text("Sent.")
        expect(page.locator("#composer").get_by_role("alert")).to_have_count(0)
        _stayed(page)
        _no_violations(page)
        assert errors == []
    assert [m["text"] for m in team.sent_to(ASHA) if m.get("text", "").startswith("Sorry")] == [
        "Sorry for the wait: it ships today."]


async def test_a_refused_reply_keeps_its_text_with_a_persons_sentence_beside_the_box(service, chromium, artifacts):
    team = await _team(service, ASHA)
    await in_browser_thread(_refused_reply, chromium, team, artifacts)


# -- defect 3: an ended session ------------------------------------------------------------------------------


def _ended_session(chromium: str, team: Team, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        context, page = _signed_in(browser, team, AGENT, f"/app/chats/{ASHA}", errors)
        _live(page)
        _stays(page)
        at = page.url
        page.get_by_label("Reply to Asha").fill(DRAFT)
        # The session ends elsewhere (signed out in another browser, say): the server forgets it.
        cookie = next(c["value"] for c in context.cookies() if c["name"] == "inbox_session")
        csrf = page.locator("input[name=csrf]").first.input_value()
        ended = httpx.post(f"{team.url}/app/sign-out", data={"csrf": csrf}, cookies={"inbox_session": cookie},
                           headers={"Origin": team.url})
        assert ended.status_code == 303, ended.text
        # The customer writes: the live update meets the ended session.
        team.customer_writes(ASHA, "Hello? Anyone?")
        banner = page.get_by_role("alert")
        expect(banner).to_contain_text("Your session has ended — sign in again; your draft is kept")
        assert page.url == at
        expect(page.get_by_label("Reply to Asha")).to_have_value(DRAFT)
        assert_accessible(page, "the session has ended")
        page.screenshot(path=str(folder / "03-session-ended.png"))
        # Send meets it too: nothing is lost.
        page.get_by_role("button", name="Send", exact=True).click()
        expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled()
        expect(page.get_by_label("Reply to Asha")).to_have_value(DRAFT)
        _stayed(page)
        assert not [m for m in team.sent_to(ASHA) if m.get("text") == DRAFT]
        # Signing in again returns to the chat, draft and all.
        page.get_by_role("link", name="Sign in again").click()
        expect(page).to_have_url(re.compile(r"/app/sign-in\?next="))
        page.get_by_label("Email").fill(AGENT)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(at)
        expect(page.get_by_label("Reply to Asha")).to_have_value(DRAFT)
        # A second tab of the same member sees the draft change.
        second = watched_page(context, errors)
        second.goto(at)
        expect(second.get_by_label("Reply to Asha")).to_have_value(DRAFT)
        page.get_by_label("Reply to Asha").fill(DRAFT + " Monday.")
        expect(second.get_by_label("Reply to Asha")).to_have_value(DRAFT + " Monday.")
        page.get_by_role("button", name="Send", exact=True).click()
        expect(page.get_by_role("status")).to_have_text("Sent.")
        page.reload()
        expect(page.get_by_label("Reply to Asha")).to_have_value("")  # sent: the draft is gone
        assert errors == []


async def test_an_ended_session_keeps_the_draft_and_signing_in_again_returns_to_it(service, chromium, artifacts):
    team = await _team(service, ASHA)
    await in_browser_thread(_ended_session, chromium, team, artifacts)


# -- defect 4: focus and scroll on a live update -------------------------------------------------------------


def _focus_and_scroll(chromium: str, team: Team, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        _, page = _signed_in(browser, team, ADMIN, f"/app/chats/{ASHA}", errors,
                             viewport={"width": 1280, "height": 640})
        _live(page)
        _stays(page)
        said = iter(range(100))

        def customer_writes_and_it_shows() -> None:
            text = f"One more thing ({next(said)})"
            team.customer_writes(ASHA, text)
            expect(page.locator(".msg.from-customer", has_text=text)).to_be_visible()
            expect(page.locator(f"#row-{ASHA} .preview")).to_have_text(text)  # the list was read again too

        def focused() -> str:
            return page.evaluate("document.activeElement.id")

        # A link of the list keeps the focus (the chat it names moves in the list meanwhile).
        page.locator(f"#link-{BILAL}").focus()
        customer_writes_and_it_shows()
        assert focused() == f"link-{BILAL}"
        # A label's field in the chat's head, its box left open.
        page.locator("summary", has_text="Label").click()
        page.get_by_label("Label", exact=True).focus()
        customer_writes_and_it_shows()
        assert focused() == "label-name"
        assert page.locator("#label-box").evaluate("box => box.open")
        # The reply box, with what is typed in it.
        page.get_by_label("Reply to Asha").fill("Let me check")
        customer_writes_and_it_shows()
        assert focused() == "reply-text"
        expect(page.get_by_label("Reply to Asha")).to_have_value("Let me check")

        # The thread stays at its end when it was there, and where it was when it was not.
        thread = page.locator("#thread")
        assert thread.evaluate("t => t.scrollHeight > t.clientHeight"), "the thread is too short to scroll"
        thread.evaluate("t => { t.scrollTop = t.scrollHeight; }")
        customer_writes_and_it_shows()
        assert thread.evaluate("t => t.scrollHeight - t.scrollTop - t.clientHeight < 2")
        thread.evaluate("t => { t.scrollTop = 40; }")
        customer_writes_and_it_shows()
        assert thread.evaluate("t => t.scrollTop") == 40
        # The list keeps its scroll.
        pane = page.locator("#list-pane")
        assert pane.evaluate("p => p.scrollHeight > p.clientHeight"), "the list is too short to scroll"
        pane.evaluate("p => { p.scrollTop = 60; }")
        customer_writes_and_it_shows()
        assert pane.evaluate("p => p.scrollTop") == 60
        page.screenshot(path=str(folder / "04-focus-kept.png"))
        _stayed(page)
        _no_violations(page)
        assert errors == []


async def test_a_customers_message_moves_neither_the_focus_nor_the_scroll(service, chromium, artifacts):
    team = await _team(service, ASHA, BILAL, CHEN)
    api = service.client
    assert (await api.post("/api/labels", headers=bearer(team.key), json={"name": "vip"})).status_code == 201
    for n in range(8):  # a thread longer than its pane
        await customer_writes(service, team.number, ASHA, f"Earlier message {n}")
    for n in range(8):  # and a list longer than its pane
        await customer_writes(service, team.number, f"9198113000{n:02d}", "Can I talk to a person?", name=f"C{n}")
    await in_browser_thread(_focus_and_scroll, chromium, team, artifacts)


# -- defect 5: notes, labels and snooze on another member's screen -------------------------------------------


def _another_screen(chromium: str, team: Team, folder: Path) -> None:
    api = httpx.Client(base_url=team.url, headers=bearer(team.key), timeout=10)
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        _, page = _signed_in(browser, team, AGENT, f"/app/chats/{ASHA}", errors)
        _live(page)
        _stays(page)
        base = f"/api/inbox/conversations/{ASHA}"
        assert api.post(f"{base}/notes", json={"text": "Prefers a call after 6 pm"}).status_code == 201
        expect(page.locator(".msg.note", has_text="Prefers a call after 6 pm")).to_be_visible()
        assert api.post(f"{base}/labels", json={"label": "vip"}).status_code == 200
        expect(page.locator(".chat-labels")).to_contain_text("vip")
        expect(page.locator(f"#row-{ASHA} .label")).to_have_text("vip")
        assert api.post(f"{base}/snooze", json={}).status_code == 200
        expect(page.locator(".chat-head .meta")).to_contain_text("snoozed until the customer writes")
        assert api.post(f"{base}/unsnooze").status_code == 200
        expect(page.locator(".chat-head .meta")).not_to_contain_text("snoozed")
        page.screenshot(path=str(folder / "05-heard-from-another-member.png"))
        _stayed(page)
        assert errors == []
    api.close()


async def test_notes_labels_and_snooze_reach_another_members_open_chat(service, chromium, artifacts):
    team = await _team(service, ASHA)
    assert (await service.client.post("/api/labels", headers=bearer(team.key),
                                      json={"name": "vip"})).status_code == 201
    await in_browser_thread(_another_screen, chromium, team, artifacts)
    # Each is an event for screens only: the webhook endpoints' events are what they were.
    rows = await service.db.fetch("SELECT event, outcome FROM webhook_outbox WHERE event = 'chat_changed'")
    assert rows and {row["outcome"] for row in rows} == {"skipped"}


# -- one screen: side by side, on a phone, without JavaScript ------------------------------------------------


def _one_screen(chromium: str, team: Team, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        context, page = _signed_in(browser, team, AGENT, "/app/inbox", errors)
        loads: list[str] = []
        page.on("load", lambda p: loads.append(p.url))
        first = page.goto(f"{team.url}/app/inbox?view=open")
        policy = first.headers["content-security-policy"]
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy and "script-src 'self'" in policy
        _live(page)
        _stays(page)
        loads.clear()
        expect(page.get_by_role("heading", level=1)).to_have_text("Inbox")
        assert_accessible(page, "the workspace, no chat open")

        # Choosing a chat swaps the chat pane only: the address changes, the page stays.
        page.locator(f"#link-{ASHA}").click()
        expect(page.get_by_role("heading", level=1)).to_contain_text("Asha")
        expect(page).to_have_url(re.compile(rf"/app/chats/{ASHA}\?view=open$"))
        listed, chat, card = (page.locator(selector).bounding_box()
                              for selector in ("#list-pane", ".chat-main", "#contact-panel"))
        assert listed["x"] + listed["width"] <= chat["x"] and chat["x"] + chat["width"] <= card["x"], (listed, chat)
        expect(page.locator(f"#link-{ASHA}")).to_have_attribute("aria-current", "true")
        page.locator(f"#link-{BILAL}").click()
        expect(page.get_by_role("heading", level=1)).to_contain_text("Bilal")
        expect(page).to_have_title(re.compile("^Bilal"))
        page.go_back()
        expect(page.get_by_role("heading", level=1)).to_contain_text("Asha")

        # Acting swaps only what the action changed.
        page.get_by_role("button", name="Claim").click()
        expect(page.get_by_role("status")).to_have_text("You claimed this chat.")
        expect(page.locator(".chat-head .state")).to_have_text("With a person")
        page.get_by_label("Reply to Asha").fill("Hello Asha, Raj here.")
        page.get_by_role("button", name="Send", exact=True).click()
        expect(page.get_by_role("status")).to_have_text("Sent.")
        expect(page.locator(".msg.from-agent", has_text="Raj here")).to_be_visible()
        page.locator("summary", has_text="Internal note").click()
        page.get_by_label("A note for the team").fill("Called her back")
        page.get_by_role("button", name="Add note").click()
        expect(page.locator(".msg.note", has_text="Called her back")).to_be_visible()
        page.locator("summary", has_text="Snooze").click()
        page.get_by_label("Until").select_option("1h")
        page.get_by_role("button", name="Snooze", exact=True).click()
        expect(page.get_by_role("status")).to_have_text("Snoozed.")
        assert_accessible(page, "the workspace, a chat open and acted on")
        page.screenshot(path=str(folder / "06-workspace-1280.png"))
        assert loads == [], loads
        _stayed(page)
        _no_violations(page)

        # On a phone: the list, then the chat on its own with a way back.
        phone_errors: list[str] = []
        _, phone = _signed_in(browser, team, AGENT, "/app/inbox", phone_errors,
                              viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
        _live(phone)
        expect(phone.locator("#list-pane")).to_be_visible()
        phone.locator(f"#link-{BILAL}").click()
        expect(phone.get_by_role("heading", level=1)).to_contain_text("Bilal")
        expect(phone.locator("#list-pane")).to_be_hidden()
        no_sideways_scroll(phone)
        assert_accessible(phone, "a chat on a phone")
        phone.screenshot(path=str(folder / "07-phone-chat.png"), full_page=True)
        phone.get_by_role("link", name="All chats").click()
        expect(phone.locator("#list-pane")).to_be_visible()
        expect(phone.locator(".chat-pane .pick")).to_be_hidden()
        no_sideways_scroll(phone)
        assert_accessible(phone, "the list on a phone")
        _no_violations(phone)
        assert errors == [] and phone_errors == []

        # Without JavaScript the forms work as they did: claim and reply.
        plain = browser.new_context(viewport={"width": 1280, "height": 900}, java_script_enabled=False)
        still = plain.new_page()
        sign_in(still, team.url, ADMIN, PASSWORD, then=f"/app/chats/{BILAL}")
        still.get_by_role("button", name="Claim").click()
        expect(still.get_by_role("status")).to_have_text("You claimed this chat.")
        still.get_by_label("Reply to Bilal").fill("Hi Bilal, Ann here.")
        still.get_by_role("button", name="Send", exact=True).click()
        expect(still.get_by_role("status")).to_have_text("Sent.")
        expect(still.locator(".msg.from-agent", has_text="Ann here")).to_be_visible()
    assert [m["text"] for m in team.sent_to(BILAL) if m.get("type") == "text"][-1:] == ["Hi Bilal, Ann here."]


async def test_one_screen_side_by_side_without_reloads_on_a_phone_and_without_javascript(service, chromium,
                                                                                          artifacts):
    team = await _team(service, ASHA, BILAL, **{BILAL: "Bilal"})
    await in_browser_thread(_one_screen, chromium, team, artifacts)


# -- over HTTP: a key's second request ----------------------------------------------------------------------


async def _sent_to(team: Team, phone: str) -> list[dict]:
    async with httpx.AsyncClient(verify=verified_context(), timeout=10) as simulator:
        answer = await simulator.get(f"{team.simulator}/simulator/numbers/{team.number}/messages",
                                     params={"to": phone})
    return answer.json()["data"]


async def _form(client: httpx.AsyncClient, phone: str) -> dict[str, str]:
    html = (await client.get(f"/app/chats/{phone}")).text
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    key = re.search(r'name="idempotency_key" value="([^"]+)"', html)
    assert csrf and key, html[:500]
    return {"csrf": csrf.group(1), "idempotency_key": key.group(1)}


async def test_the_same_key_sends_once_and_answers_as_the_first_and_is_its_members_alone(service):
    team = await _team(service, ASHA)
    async with httpx.AsyncClient(base_url=team.url, timeout=20) as agent, \
            httpx.AsyncClient(base_url=team.url, timeout=20) as admin:
        for client, email in ((agent, AGENT), (admin, ADMIN)):
            assert (await client.post("/app/sign-in", data={"email": email, "password": PASSWORD})).status_code == 303
        form = await _form(agent, ASHA)
        answers: list[httpx.Response] = []

        async def send(headers: dict[str, str]) -> None:
            answers.append(await agent.post(f"/app/chats/{ASHA}/reply", headers=headers,
                                            data={**form, "text": "Once only"}))

        async with trio.open_nursery() as nursery:  # a double submit, and a script's retry, at once
            for headers in ({}, {}, {"HX-Request": "true", "HX-Target": "reply-form"}):
                nursery.start_soon(send, headers)
        assert sorted(answer.status_code for answer in answers) == [200, 303, 303], answers
        assert all("Sent." in answer.text for answer in answers if answer.status_code == 200)
        assert [m["text"] for m in await _sent_to(team, ASHA) if m.get("text") == "Once only"] == ["Once only"]
        # The same key with another text is not a second message of the first: told, and sent as nothing.
        changed = await agent.post(f"/app/chats/{ASHA}/reply", data={**form, "text": "Once only, changed"})
        assert changed.status_code == 422 and "already sent" in changed.text
        # A note is kept once per key as well, and another member's same key is another key: their note is kept.
        note = await _form(agent, ASHA)
        for _ in range(2):
            added = await agent.post(f"/app/chats/{ASHA}/note", data={**note, "text": "Wants a refund"})
            assert added.status_code == 303, added.text
        assert (await agent.get(f"/app/chats/{ASHA}")).text.count("Wants a refund") == 1
        theirs = await admin.post(f"/app/chats/{ASHA}/note", data={
            **(await _form(admin, ASHA)), "idempotency_key": note["idempotency_key"], "text": "Wants a refund"})
        assert theirs.status_code == 303, theirs.text
        assert (await agent.get(f"/app/chats/{ASHA}")).text.count("Wants a refund") == 2


# -- the library: served to keep, and the pages without it --------------------------------------------------


async def test_the_library_is_served_for_a_year_and_without_it_the_pages_are_plain_forms(service, monkeypatch,
                                                                                         tmp_path):
    team = await _team(service)
    for asset in vendor_assets.ASSETS:
        answer = await service.client.get(asset.url, headers={"Accept-Encoding": "gzip"})
        assert answer.status_code == 200 and answer.content == asset.path.read_bytes(), asset
        assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert answer.headers["content-encoding"] == "gzip"
        assert answer.headers["content-type"].startswith("text/javascript")
    assert (await service.client.get("/app/static/vendor/htmx.org-0.0.1/htmx.min.js")).status_code == 404
    async with httpx.AsyncClient(base_url=team.url, timeout=10) as client:
        assert (await client.post("/app/sign-in", data={"email": AGENT, "password": PASSWORD})).status_code == 303
        page = (await client.get("/app/inbox")).text
        # The library is in the workspace's one script (app_assets.WORKSPACE_BUNDLE).
        assert f'<script src="{app_assets.asset_url(app_assets.WORKSPACE_BUNDLE)}"' in page
        monkeypatch.setattr(vendor_assets, "SHARE", tmp_path)  # set-up skipped, or no network then
        page = (await client.get("/app/inbox")).text
        assert app_assets.WORKSPACE_BUNDLE not in page and "htmx-config" not in page
        assert f'<script src="{app_assets.asset_url(app_assets.BUNDLE)}"' in page
        assert '<form role="search" method="get" action="/app/inbox"' in page
