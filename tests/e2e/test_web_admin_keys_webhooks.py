"""The web app's admin sections in a real browser: API keys and the outbound webhook, against `inbox-actors serve
--demo` in a process of its own, with a webhook receiver of the test's own on a local socket.

The demo admin creates a key in the page (a refused attempt first) and the key it shows once works on the API;
renames it, rotates it (the old key keeps working through its grace period) and revokes the new one, and the API
agrees each time. The admin saves the webhook settings (a refused address first) and gets the signing secret once,
sends a test event the receiver gets signed with it, rotates the secret, and reads both deliveries in the log
(filtered, and a page at a time). An agent sees neither section and is refused their pages and forms. Every page
state is checked with axe-core and saved as a screenshot; each section's main page fits a phone.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from inbox_http.web.page_guard import csrf_token
from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.conftest import bearer
from tests.e2e.test_cli import cli, output
from tests.e2e.test_serve_process import start_serve, stop
from tests.e2e.web_app import chromium_browser, no_sideways_scroll, sign_in, watched_page
from tests.webhook_receiver import webhook_receiver

AGENT_EMAIL = "meena@demo.example"
AGENT_PASSWORD = "meena-has-a-long-password"
# A key name is the admin's text: shown as these characters, never markup.
KEY_NAME = "<b>zapier</b>"


def _whoami(url: str, key: str) -> int:
    return httpx.get(f"{url}/api/reporting/v1/whoami", headers=bearer(key), timeout=10).status_code


def _checked(page: Page, name: str, folder: Path, shot: str, *, full_page: bool = False) -> None:
    assert_accessible(page, name)
    page.screenshot(path=str(folder / shot), full_page=full_page)


def _keys(admin: Page, api: httpx.Client, url: str, demo: dict, folder: Path) -> None:
    sign_in(admin, url, demo["email"], demo["password"], then="/app/keys")
    sections = admin.get_by_role("navigation", name="Sections")
    expect(sections.get_by_role("link", name="API keys")).to_have_attribute("aria-current", "page")
    expect(sections.get_by_role("link", name="Webhooks")).to_be_visible()
    _checked(admin, "keys", folder, "01-keys.png", full_page=True)

    # No scope chosen: the key ring's refusal, with what was typed kept.
    admin.get_by_label("Name", exact=True).fill(KEY_NAME)
    admin.get_by_role("button", name="Create and show the key").click()
    expect(admin.get_by_role("alert")).to_contain_text("at least one scope is required")
    expect(admin.get_by_label("Name", exact=True)).to_have_value(KEY_NAME)
    _checked(admin, "keys, creation refused", folder, "02-keys-refused.png")

    admin.get_by_label("inbox:read").check()
    admin.get_by_label("contacts:read").check()
    admin.get_by_label("Expires in days").fill("30")
    admin.get_by_role("button", name="Create and show the key").click()
    expect(admin.get_by_role("heading", level=1)).to_have_text(f"Key “{KEY_NAME}” created")
    first_key = admin.get_by_label("Key", exact=True).input_value()
    assert first_key.startswith("inbox_")
    assert _whoami(url, first_key) == 200
    _checked(admin, "key shown once", folder, "03-key-created.png")

    admin.get_by_role("link", name="Back to the keys").click()
    row = admin.locator("tr", has_text=KEY_NAME)
    expect(row).to_contain_text("contacts:read, inbox:read")
    expect(row.locator(".key-status")).to_have_text("active")
    assert admin.locator("table b").count() == 0  # the name is text, not an element
    first_id = int(row.get_attribute("data-key"))
    listed = {k["id"]: k for k in api.get("/api/keys").json()["data"]}
    assert listed[first_id]["name"] == KEY_NAME and listed[first_id]["expires_at"] is not None

    # Rename it, then rotate it with an hour's grace: both keys work, and the API has the old one rotated.
    row.get_by_role("link").click()
    admin.get_by_label("Name", exact=True).fill("zapier")
    admin.get_by_label("Never expires", exact=True).check()
    admin.get_by_role("button", name="Save").click()
    expect(admin.get_by_role("status")).to_have_text("Changes saved.")
    shown = api.get(f"/api/keys/{first_id}").json()
    assert shown["name"] == "zapier" and shown["expires_at"] is None, shown
    _checked(admin, "one key", folder, "04-key.png", full_page=True)

    # The confirm steps open by keyboard.
    admin.locator("summary", has_text="Rotate this key").focus()
    admin.keyboard.press("Enter")
    admin.get_by_label("Hours the old key keeps working").fill("1")
    _checked(admin, "one key, rotating", folder, "05-key-rotating.png", full_page=True)
    admin.get_by_role("button", name="Rotate and show the new key").click()
    expect(admin.get_by_role("heading", level=1)).to_have_text("Key “zapier” rotated")
    expect(admin.locator("main")).to_contain_text("The old key keeps working until")
    second_key = admin.get_by_label("Key", exact=True).input_value()
    assert second_key != first_key and _whoami(url, second_key) == 200 and _whoami(url, first_key) == 200
    _checked(admin, "rotated key shown once", folder, "06-key-rotated.png")
    old = api.get(f"/api/keys/{first_id}").json()
    assert old["status"] == "rotated" and old["grace_until"] is not None, old
    second_id = old["replaced_by"]

    # Revoke the new key: refused by the API from the next request.
    admin.goto(f"{url}/app/keys/{second_id}")
    admin.locator("summary", has_text="Revoke this key").focus()
    admin.keyboard.press("Enter")
    _checked(admin, "one key, revoking", folder, "07-key-revoking.png", full_page=True)
    admin.get_by_role("button", name="Revoke “zapier” now").click()
    expect(admin).to_have_url(f"{url}/app/keys?done=revoked")
    expect(admin.get_by_role("status")).to_contain_text("Key revoked")
    expect(admin.locator(f"tr[data-key='{second_id}'] .key-status")).to_have_text("revoked")
    assert _whoami(url, second_key) == 403
    assert api.get(f"/api/keys/{second_id}").json()["status"] == "revoked"
    _checked(admin, "keys after a revocation", folder, "08-keys-revoked.png", full_page=True)


def _webhooks(admin: Page, url: str, receiver_url: str, folder: Path, secrets: list[str]) -> None:
    """Adds to `secrets` the signing secret the first save showed, then the one the rotation showed."""
    admin.get_by_role("navigation", name="Sections").get_by_role("link", name="Webhooks").click()
    expect(admin.get_by_role("heading", level=1)).to_have_text("Webhooks")
    _checked(admin, "webhooks, not set up", folder, "09-webhooks-empty.png", full_page=True)

    # An address outside the allowed networks: the settings' refusal, the form as typed.
    admin.get_by_label("Endpoint URL").fill("http://192.0.2.1/hook")
    admin.get_by_label("message_received").check()
    admin.get_by_role("button", name="Save").click()
    expect(admin.get_by_role("alert")).to_be_visible()
    expect(admin.get_by_label("Endpoint URL")).to_have_value("http://192.0.2.1/hook")
    expect(admin.get_by_label("message_received")).to_be_checked()
    _checked(admin, "webhooks, save refused", folder, "10-webhooks-refused.png", full_page=True)

    admin.get_by_label("Endpoint URL").fill(receiver_url)
    admin.get_by_label("handoff").check()
    admin.get_by_role("button", name="Save").click()
    first_secret = admin.get_by_label("Signing secret").input_value()
    assert first_secret.startswith("whsec_")
    secrets.append(first_secret)
    _checked(admin, "webhook secret shown once", folder, "11-webhook-secret.png")
    admin.get_by_role("link", name="Back to the webhooks").click()
    expect(admin.get_by_label("Endpoint URL")).to_have_value(receiver_url)
    expect(admin.get_by_label("handoff")).to_be_checked()
    expect(admin.get_by_label("message_status")).not_to_be_checked()

    admin.get_by_role("button", name="Send a test event").click()
    expect(admin.get_by_role("status")).to_contain_text("The test event was delivered")
    row = admin.locator(".delivery-log tbody tr", has_text="webhook_test")
    expect(row).to_contain_text("webhook_test")
    expect(row.locator(".outcome")).to_have_text("delivered")
    expect(row).to_contain_text("1 (last: HTTP 200")
    _checked(admin, "webhooks, a test delivered", folder, "12-webhooks-tested.png", full_page=True)

    # A new secret, then a second test event (signed with it).
    admin.locator("summary", has_text="Rotate the signing secret").focus()
    admin.keyboard.press("Enter")
    admin.get_by_role("button", name="Rotate and show the new secret").click()
    second_secret = admin.get_by_label("Signing secret").input_value()
    assert second_secret.startswith("whsec_") and second_secret != first_secret
    secrets.append(second_secret)
    admin.get_by_role("link", name="Back to the webhooks").click()
    admin.get_by_role("button", name="Send a test event").click()
    expect(admin.get_by_role("status")).to_contain_text("The test event was delivered")

    # The log filtered by event, a page at a time.
    admin.goto(f"{url}/app/webhooks?event=webhook_test&limit=1")
    first_row = admin.locator(".delivery-log tbody tr")
    expect(first_row).to_have_count(1)
    newest = first_row.get_attribute("data-delivery")
    admin.get_by_role("link", name="Older").click()
    expect(first_row).to_have_count(1)
    assert first_row.get_attribute("data-delivery") != newest
    expect(first_row).to_contain_text("webhook_test")
    _checked(admin, "webhooks, an older page of the log", folder, "13-webhooks-older.png", full_page=True)
    admin.get_by_label("Event", exact=True).select_option("handoff")
    admin.get_by_role("button", name="Show").click()
    expect(admin.locator(".delivery-log tbody")).to_contain_text("No deliveries matching these filters")
    admin.get_by_label("Event", exact=True).select_option("webhook_test")
    admin.get_by_role("button", name="Show").click()
    expect(admin.locator(".delivery-log tbody tr")).to_have_count(2)


def _agent_is_refused(browser: Browser, url: str, folder: Path) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    agent = context.new_page()
    sign_in(agent, url, AGENT_EMAIL, AGENT_PASSWORD)
    sections = agent.get_by_role("navigation", name="Sections")
    expect(sections.get_by_role("link", name="Inbox")).to_be_visible()
    expect(sections.get_by_role("link", name="API keys")).to_have_count(0)
    expect(sections.get_by_role("link", name="Webhooks")).to_have_count(0)
    for path, sentence in (("/app/keys", "Only admins and members with the settings permission may do this."),
                           ("/app/keys/1", "Only admins and members with the settings permission may do this."),
                           ("/app/webhooks", "Webhook settings need the settings or settings:read permission.")):
        answer = agent.goto(f"{url}{path}")
        assert answer is not None and answer.status == 403, path
        expect(agent.get_by_role("alert")).to_have_text(sentence)
    _checked(agent, "an agent refused", folder, "14-agent-refused.png")
    # The forms too, with a valid session and CSRF token: refused before any action runs.
    session = next(c["value"] for c in context.cookies() if c["name"] == "inbox_session")
    for path, form in (("/app/keys", {"name": "mine", "scope": "all"}), ("/app/keys/1/revoke", {}),
                       ("/app/webhooks/rotate-secret", {}), ("/app/webhooks/test", {})):
        answer = httpx.post(f"{url}{path}", data={"csrf": csrf_token(session), **form},
                            cookies={"inbox_session": session}, timeout=10)
        assert answer.status_code == 403, (path, answer.text)
    context.close()


def _on_a_phone(browser: Browser, url: str, email: str, password: str, folder: Path) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                                  device_scale_factor=2)
    phone = context.new_page()
    sign_in(phone, url, email, password, then="/app/keys")
    for path, shot in (("/app/keys", "15-phone-keys.png"), ("/app/webhooks", "16-phone-webhooks.png")):
        phone.goto(f"{url}{path}")
        no_sideways_scroll(phone)
        _checked(phone, f"{path} on a phone", folder, shot, full_page=True)
    context.close()


def _story(chromium: str, ready: dict, folder: Path, receiver_url: str, secrets: list[str]) -> None:
    url, demo = ready["url"], ready["demo"]
    api = httpx.Client(base_url=url, timeout=10, headers=bearer(demo["key"]))
    try:
        with chromium_browser(chromium) as browser:
            errors: list[str] = []
            admin = watched_page(browser.new_context(viewport={"width": 1280, "height": 900}), errors)
            _keys(admin, api, url, demo, folder)
            _webhooks(admin, url, receiver_url, folder, secrets)
            _agent_is_refused(browser, url, folder)
            _on_a_phone(browser, url, demo["email"], demo["password"], folder)
            assert errors == []
    finally:
        api.close()


@pytest.mark.slow
async def test_admins_manage_keys_and_webhooks_in_the_web_app(database_url, nursery, chromium, artifacts):
    serve = await start_serve({"DATABASE_URL": database_url, "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8"}, nursery,
                              "--demo")
    try:
        async with httpx.AsyncClient(base_url=serve.ready["url"], timeout=10,
                                     headers=bearer(serve.ready["demo"]["key"])) as api:
            added = await api.post("/api/team/members", json={"name": "Meena", "email": AGENT_EMAIL,
                                                              "role": "agent"})
            assert added.status_code == 201, added.text
        output(await cli(database_url, "member", "set-password", "--member", str(added.json()["user_id"]),
                         stdin=f"{AGENT_PASSWORD}\n".encode()))
        secrets: list[str] = []  # the signing secrets the pages showed, in order
        async with webhook_receiver() as receiver:
            await in_browser_thread(_story, chromium, serve.ready, artifacts, receiver.url, secrets)
        tests = receiver.events("webhook_test")
        assert len(tests) == 2, receiver.received
        assert tests[0].signed_by(secrets[0]) and tests[1].signed_by(secrets[1])
    finally:
        assert await stop(serve) == 0, serve.stderr
