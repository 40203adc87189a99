"""The agent inbox in a real browser: Debian's Chromium driven by Playwright, against `inbox-actors serve --demo`
in a process of its own, with the built-in simulator playing the customers.

The story the issue tells, page by page: the admin signs in with the demo credentials and invites an agent from
the roster; the agent sets a password through the link; a customer writes, the bot hands the chat off and it
appears live in the queue of both; the agent claims it and the admin's screen shows the claim live; the agent
replies and the simulator receives it; in a chat outside the customer's window the agent sends a template; the
agent resolves; the Reporting API tells the same story. Every page is checked with axe-core and saved as a
screenshot (`artifacts`); customer text is shown as text, never markup.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from inbox_actors.platform.payloads import InboundMessage
from inbox_actors.platform.webhook_envelope import build_envelope, sign
from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.conftest import bearer
from tests.e2e.test_serve_process import start_serve, stop
from tests.e2e.web_app import (
    chromium_browser,
    no_sideways_scroll,
    sign_in,
    tab_to,
    wait_until_live,
    watched_page,
)

CUSTOMER = "919811100001"
SILENT = "919811100002"
HOSTILE_TEXT = "<img src=x onerror=alert(1)> Can I talk to a person?"
AGENT_EMAIL = "ravi@demo.example"
AGENT_PASSWORD = "ravi-has-a-long-password"
APP_SECRET = "inbox-app-test-secret"


def _customer_wrote_days_ago(url: str, phone_number_id: str, phone: str, days: int) -> None:
    """The platform's webhook with a message sent `days` ago (as Meta delivers one it held back), signed with the
    app secret the service was started with."""
    at = datetime.now(timezone.utc) - timedelta(days=days)
    body = build_envelope(phone_number_id, "15550000000", messages=[InboundMessage(
        message_id=f"wamid.old-{phone}", from_phone=phone, at=at, type="text", text="Where is my order?",
        profile_name="Bilal")])
    answer = httpx.post(f"{url}/webhooks/whatsapp", content=body, timeout=10,
                        headers={"Content-Type": "application/json", "X-Hub-Signature-256": sign(APP_SECRET, body)})
    assert answer.status_code == 200, answer.text


def _sent_to(platform: httpx.Client, phone_number_id: str, phone: str) -> list[dict]:
    """What the simulator received from the business number for this customer."""
    answer = platform.get(f"/simulator/numbers/{phone_number_id}/messages", params={"to": phone})
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def _story(chromium: str, ready: dict, folder: Path) -> None:
    url, demo = ready["url"], ready["demo"]
    platform = httpx.Client(base_url=ready["platform"], timeout=10)
    api = httpx.Client(base_url=url, timeout=10, headers=bearer(demo["key"]))
    try:
        with chromium_browser(chromium) as browser:
            admin_context = browser.new_context(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            admin = watched_page(admin_context, errors)

            # The admin signs in with the demo credentials the ready line printed; a wrong password first.
            admin.goto(f"{url}/app/sign-in")
            assert_accessible(admin, "sign-in")
            admin.screenshot(path=str(folder / "01-sign-in.png"))
            admin.get_by_label("Email").fill(demo["email"])
            admin.get_by_label("Password").fill("not the password")
            admin.get_by_role("button", name="Sign in").click()
            expect(admin.get_by_role("alert")).to_contain_text("do not match an account")
            sign_in(admin, url, demo["email"], demo["password"])

            # ...and invites an agent from the roster: the link is shown once.
            admin.get_by_role("link", name="Team").click()
            assert_accessible(admin, "team")
            admin.get_by_label("Name").fill("Ravi Kumar")
            admin.get_by_label("Email").fill(AGENT_EMAIL)
            admin.get_by_role("button", name="Add and make an invite link").click()
            link = admin.get_by_label("Link").input_value()
            assert "/app/invite/invite_" in link
            assert_accessible(admin, "invite link")
            admin.screenshot(path=str(folder / "02-invite-link.png"))

            # The agent follows the link, sets a password and is signed in.
            agent_context = browser.new_context(viewport={"width": 1280, "height": 900})
            agent = watched_page(agent_context, errors)
            agent.goto(link)
            assert_accessible(agent, "invite")
            agent.get_by_label("New password").fill(AGENT_PASSWORD)
            agent.get_by_label("The same again").fill(AGENT_PASSWORD)
            agent.get_by_role("button", name="Set password and sign in").click()
            expect(agent).to_have_url(f"{url}/app/inbox")
            agent.goto(f"{url}/app/inbox?view=queue")
            admin.goto(f"{url}/app/inbox?view=queue")
            wait_until_live(agent)
            wait_until_live(admin)
            expect(agent.locator(".chats .empty")).to_be_visible()

            # A customer asks for a person: the bot hands off, and the chat appears in both queues unreloaded.
            sent = platform.post(f"/simulator/customers/{CUSTOMER}/messages",
                                 json={"phone_number_id": demo["phone_number_id"], "text": HOSTILE_TEXT,
                                       "name": "Asha"})
            assert sent.json()["delivered_to_service"], sent.text
            for page in (agent, admin):
                row = page.locator(".chat-row", has_text="Asha")
                expect(row).to_be_visible()
                expect(row.locator(".preview")).to_have_text(HOSTILE_TEXT)  # text, not an element
            assert agent.locator(".preview img").count() == 0
            assert_accessible(agent, "inbox, queue")
            agent.screenshot(path=str(folder / "03-queue.png"))

            # Both open the chat; the agent claims it and the admin's screen shows the claim, unreloaded.
            agent.locator(".chat-row", has_text="Asha").locator("a").click()
            expect(agent.get_by_role("heading", level=1)).to_contain_text("Asha")
            admin.goto(f"{url}/app/chats/{CUSTOMER}")
            wait_until_live(admin)
            expect(admin.locator(".chat-head .state")).to_have_text("Waiting for a person")
            assert_accessible(agent, "chat, waiting for a person")
            agent.get_by_role("button", name="Claim").click()
            expect(agent.get_by_role("status")).to_have_text("You claimed this chat.")
            expect(admin.locator(".chat-head .state")).to_have_text("With a person")
            expect(admin.locator(".chat-head .meta")).to_contain_text("Ravi Kumar")
            admin.screenshot(path=str(folder / "04-claim-seen-by-admin.png"))

            # A customer's message reaches the open chat on screen without a reload.
            wait_until_live(agent)
            started = time.monotonic()
            platform.post(f"/simulator/customers/{CUSTOMER}/messages",
                          json={"phone_number_id": demo["phone_number_id"], "text": "Is anyone there?"})
            expect(agent.locator(".msg.from-customer", has_text="Is anyone there?")).to_be_visible()
            print(f"\na customer's message reached the open chat in {time.monotonic() - started:.2f} s")

            # The agent replies; the simulator receives it, and the thread shows it with its delivery ticks.
            agent.get_by_label("Reply to Asha").fill("Hi Asha, Ravi here. How can I help?")
            agent.get_by_role("button", name="Send").click()
            expect(agent.get_by_role("status")).to_have_text("Sent.")
            received = _sent_to(platform, demo["phone_number_id"], CUSTOMER)
            assert any(m.get("text") == "Hi Asha, Ravi here. How can I help?" for m in received), received
            mine = agent.locator(".msg.from-agent", has_text="Ravi here")
            expect(mine.locator(".tick.read")).to_be_visible()  # the simulator reads it: ticks follow live
            assert_accessible(agent, "chat, claimed, with a reply")
            agent.screenshot(path=str(folder / "05-chat-replied.png"), full_page=True)

            # A chat whose customer last wrote two days ago: outside the window only a template goes.
            _customer_wrote_days_ago(url, demo["phone_number_id"], SILENT, 2)
            # A text the platform refuses there shows as failed, with the platform's reason.
            refused = api.post("/api/send-message", json={"to": SILENT, "message": "Are you still there?"})
            assert refused.status_code != 200, refused.text
            agent.goto(f"{url}/app/chats/{SILENT}")
            failed = agent.locator(".msg", has_text="Are you still there?").locator(".tick.failed")
            expect(failed).to_contain_text(re.compile(r"failed: \d+"))
            expect(agent.get_by_role("heading", name="Send a template")).to_be_visible()
            assert agent.get_by_label("Reply to").count() == 0
            template = agent.locator(".template-form").first
            for field in template.locator("input[name=parameter]").all():
                field.fill("A-1001")
            assert_accessible(agent, "chat outside the window")
            agent.screenshot(path=str(folder / "06-template.png"), full_page=True)
            template.get_by_role("button").click()
            expect(agent.get_by_role("status")).to_have_text("Template sent.")
            received = _sent_to(platform, demo["phone_number_id"], SILENT)
            assert any(m.get("type") == "template" for m in received), received

            # The agent resolves the first chat: back with the bot, in the resolved view.
            agent.goto(f"{url}/app/chats/{CUSTOMER}")
            agent.locator("#resolve-box").get_by_text("Resolve", exact=True).click()
            agent.get_by_label("Reason (optional)").last.fill("answered")
            agent.get_by_role("button", name="Resolve, back to the bot").click()
            expect(agent.get_by_role("status")).to_have_text("The chat is resolved.")
            agent.goto(f"{url}/app/inbox?view=resolved")
            expect(agent.locator(".chat-row", has_text="Asha")).to_be_visible()
            assert_accessible(agent, "inbox, resolved")
            agent.screenshot(path=str(folder / "07-resolved.png"))

            # On a phone: the inbox and the chat fit the screen, and work by keyboard.
            phone_context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                                has_touch=True, device_scale_factor=2)
            phone = phone_context.new_page()
            sign_in(phone, url, AGENT_EMAIL, AGENT_PASSWORD)
            phone.goto(f"{url}/app/inbox?view=open")
            no_sideways_scroll(phone)
            assert_accessible(phone, "inbox on a phone")
            phone.screenshot(path=str(folder / "08-phone-inbox.png"), full_page=True)
            phone.goto(f"{url}/app/chats/{CUSTOMER}")
            no_sideways_scroll(phone)
            assert_accessible(phone, "chat on a phone")
            phone.screenshot(path=str(folder / "09-phone-chat.png"), full_page=True)
            phone.keyboard.press("Tab")
            expect(phone.locator(".skip")).to_be_focused()

            # Signing out ends the session on the server: the old cookie no longer opens a page.
            cookie = next(c for c in agent_context.cookies() if c["name"] == "inbox_session")
            agent.get_by_role("button", name="Sign out").click()
            expect(agent).to_have_url(f"{url}/app/sign-in")
            stale = httpx.get(f"{url}/app/inbox", cookies={"inbox_session": cookie["value"]})
            assert stale.status_code == 303 and "/app/sign-in" in stale.headers["location"]
            assert errors == []
    finally:
        platform.close()

    # The Reporting API tells the same story: the bot answered first, Ravi was the first person.
    replies = api.get(f"/api/reporting/v1/conversations/{CUSTOMER}/replies").json()
    assert replies["first_human_response"]["sender_type"] == "agent", replies
    assert replies["first_human_response"]["actor"]["name"] == "Ravi Kumar", replies
    history = api.get(f"/api/reporting/v1/conversations/{CUSTOMER}/assignment-history").json()
    events = [(entry["event"], (entry.get("by") or {}).get("name")) for entry in history["data"]]  # newest first
    assert events[0] == ("resolved", "Ravi Kumar") and ("claimed", "Ravi Kumar") in events, history
    api.close()


@pytest.mark.slow
async def test_a_team_answers_a_customer_in_the_web_app(database_url, nursery, chromium, artifacts):
    serve = await start_serve({"DATABASE_URL": database_url, "WHATSAPP_APP_SECRET": APP_SECRET}, nursery, "--demo")
    try:
        await in_browser_thread(_story, chromium, serve.ready, artifacts)
    except Exception:
        print("the service's log, its end:\n" + serve.stderr[-6000:])
        raise
    finally:
        assert await stop(serve) == 0, serve.stderr


def _working_a_chat(chromium: str, ready: dict, folder: Path) -> None:
    """Notes, labels and snooze on a chat, and a contact edit that meets a newer version: it is told, shown the
    newer card, and overwrites nothing."""
    url, demo = ready["url"], ready["demo"]
    api = httpx.Client(base_url=url, timeout=10, headers=bearer(demo["key"]))
    assert api.post("/api/labels", json={"name": "vip"}).status_code == 201
    sent = httpx.post(f"{ready['platform']}/simulator/customers/{CUSTOMER}/messages", timeout=10,
                      json={"phone_number_id": demo["phone_number_id"], "text": "Hello there", "name": "Asha"})
    assert sent.json()["delivered_to_service"], sent.text
    try:
        with chromium_browser(chromium) as browser:
            errors: list[str] = []
            page = watched_page(browser, errors, viewport={"width": 1280, "height": 900})
            sign_in(page, url, demo["email"], demo["password"], then=f"/app/chats/{CUSTOMER}")

            # By keyboard alone: Tab to Claim, Enter.
            tab_to(page, page.get_by_role("button", name="Claim"))
            page.keyboard.press("Enter")
            expect(page.get_by_role("status")).to_have_text("You claimed this chat.")

            page.locator("summary", has_text="Internal note").click()
            page.get_by_label("A note for the team").fill("Asked about <b>refunds</b> last week")
            page.get_by_role("button", name="Add note").click()
            expect(page.get_by_role("status")).to_have_text("Note added.")
            expect(page.locator(".msg.note", has_text="Asked about <b>refunds</b> last week")).to_be_visible()

            page.locator("summary", has_text="Label").click()
            page.get_by_role("button", name="Add label").click()
            expect(page.get_by_role("status")).to_have_text("Label added.")
            expect(page.locator(".chat-labels")).to_contain_text("vip")
            assert "vip" in api.get(f"/api/inbox/conversations/{CUSTOMER}").json()["labels"]
            page.get_by_role("button", name="Remove label vip").click()
            expect(page.get_by_role("status")).to_have_text("Label removed.")
            expect(page.locator(".chat-labels")).to_have_count(0)

            page.locator("summary", has_text="Snooze").click()
            page.get_by_label("Until").select_option("reply")
            page.get_by_role("button", name="Snooze", exact=True).click()
            expect(page.get_by_role("status")).to_have_text("Snoozed.")
            expect(page.locator(".chat-head .meta")).to_contain_text("snoozed until the customer writes")
            assert api.get(f"/api/inbox/conversations/{CUSTOMER}").json()["snoozed"] is True
            assert_accessible(page, "chat with a note, snoozed")
            page.get_by_role("button", name="End snooze").click()
            expect(page.get_by_role("status")).to_have_text("Back in the open views.")

            # The card is edited in the page while the API renames the contact: the page is told, shows the newer
            # name, and the API's change stands.
            page.locator("summary", has_text="Edit contact").click()
            page.get_by_label("Company").fill("Acme Traders")
            assert api.put(f"/api/contacts/{CUSTOMER}/name", json={"name": "Asha Rao"}).status_code == 200
            page.get_by_role("button", name="Save contact").click()
            expect(page.get_by_role("alert")).to_contain_text("Someone else changed this contact")
            expect(page.locator(".contact dl")).to_contain_text("Asha Rao")
            contact = api.get(f"/api/contacts/{CUSTOMER}").json()
            assert contact.get("name", contact.get("contact", {}).get("name")) == "Asha Rao", contact
            assert_accessible(page, "chat, a contact edit refused for its version")
            page.screenshot(path=str(folder / "10-contact-conflict.png"), full_page=True)
            # On the newer card the change goes through.
            page.get_by_label("Company").fill("Acme Traders")
            page.get_by_label("Attribute to set (optional)").fill("plan")
            page.get_by_label("Its value (empty removes it)").fill("gold")
            page.get_by_role("button", name="Save contact").click()
            expect(page.get_by_role("status")).to_have_text("Contact saved.")
            expect(page.locator(".contact dl")).to_contain_text("Acme Traders")
            expect(page.locator(".contact dl")).to_contain_text("gold")
            assert errors == []
    finally:
        api.close()


@pytest.mark.slow
async def test_notes_labels_snooze_and_a_contact_edit_that_meets_a_newer_version(database_url, nursery, chromium,
                                                                                 artifacts):
    serve = await start_serve({"DATABASE_URL": database_url}, nursery, "--demo")
    try:
        await in_browser_thread(_working_a_chat, chromium, serve.ready, artifacts)
    finally:
        assert await stop(serve) == 0, serve.stderr
