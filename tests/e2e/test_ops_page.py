"""The operator page (`GET /ops`) in a real browser: Debian's Chromium driven by Playwright, against
`inbox-actors serve --demo` in a process of its own while simulated customers chat with it.

Which browser, and when a browser test may skip: `tests/browser.py`. Each state of the page the tests reach is
also checked with axe-core (`tests/axe.py`): no serious or critical accessibility violation.
"""

from __future__ import annotations

import re
import socket
from pathlib import Path

import httpx
import pytest
import trio
from playwright.sync_api import Page, expect, sync_playwright

from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.conftest import bearer, with_settings
from tests.e2e.test_serve_process import start_serve, stop

CUSTOMERS = 30
PHONES = [f"9198700{n:05d}" for n in range(CUSTOMERS)]
TOKEN = "ops-page-test-token"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def _webhook_to_nowhere(ready: dict) -> None:
    """The demo workspace's webhook endpoint on a port nobody listens on: deliveries fail (unreachable)."""
    async with httpx.AsyncClient(base_url=ready["url"], timeout=10) as service:
        answer = await service.put("/api/webhook/outbound/config", headers=bearer(ready["demo"]["key"]),
                                   json={"endpoint_url": f"http://127.0.0.1:{_closed_port()}/hook",
                                         "events": ["message_received"]})
        assert answer.status_code == 200, answer.text


async def _chats(ready: dict, rounds: int | None = None) -> None:
    """Simulated customers write to the demo number in turn (the bot answers each: sends); every few messages the
    demo key sends a text of its own, inside the window, and one outside it (a send the platform refuses)."""
    demo = ready["demo"]
    async with httpx.AsyncClient(base_url=ready["platform"], timeout=10) as platform, \
            httpx.AsyncClient(base_url=ready["url"], timeout=10) as service:
        done = 0
        while rounds is None or done < rounds:
            for n, phone in enumerate(PHONES):
                await platform.post(f"/simulator/customers/{phone}/messages",
                                    json={"phone_number_id": demo["phone_number_id"], "text": "Your price?"})
                if n % 5 == 0:
                    await service.post("/api/send-message", headers=bearer(demo["key"]),
                                       json={"to": phone, "message": "An agent will follow up."})
                    await service.post("/api/send-message", headers=bearer(demo["key"]),
                                       json={"to": f"91990000{n:03d}", "message": "Nobody wrote first."})
            done += 1


async def _live(url: str, kind: str, headers: dict | None = None) -> int:
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        summary = (await client.get("/health/actors", headers=headers or {})).json()
    return summary["kinds"].get(kind, {}).get("live", 0)


def _wait_for_refresh(page: Page, after: int = 0) -> int:
    # A function, not an expression: the page's Content-Security-Policy forbids eval, which an expression needs.
    page.wait_for_function("after => Number(document.body.dataset.refreshes || 0) > after", arg=after,
                           timeout=20_000)
    return int(page.evaluate("document.body.dataset.refreshes"))


def _shown_live_counts(page: Page) -> dict[str, int]:
    rows = page.eval_on_selector_all(
        "#kinds tbody tr",
        "rows => rows.map(row => [row.dataset.kind, row.querySelector('[data-field=live]').textContent])")
    return {kind: int(text.replace(",", "")) for kind, text in rows}


def _no_page_overflow(page: Page) -> None:
    widths = page.evaluate("({page: document.documentElement.scrollWidth, view: window.innerWidth})")
    assert widths["page"] <= widths["view"], f"the page scrolls sideways: {widths}"


def _browse_under_load(chromium: str, url: str, folder: Path) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda err: errors.append(str(err)))
            page.goto(f"{url}/ops?refresh=1")
            refreshes = _wait_for_refresh(page)

            # The per-kind live counts match GET /health/actors read around the same refresh (kinds whose count
            # held still over it; the demo's chats are all active by now, so conversations hold still).
            with httpx.Client(base_url=url, timeout=10) as client:
                before = client.get("/health/actors").json()["kinds"]
                refreshes = _wait_for_refresh(page, refreshes)
                shown = _shown_live_counts(page)
                after = client.get("/health/actors").json()["kinds"]
                overview = client.get("/metrics/overview")
            steady = {kind for kind in after if before.get(kind, {}).get("live") == after[kind]["live"]}
            assert "conversation" in steady and after["conversation"]["live"] >= CUSTOMERS, (before, after)
            assert set(shown) == set(after)
            for kind in steady:
                assert shown[kind] == after[kind]["live"], (kind, shown, after)
            total = sum(counts["live"] for counts in after.values())
            if all(kind in steady for kind in after):
                expect(page.locator("#kinds-title")).to_contain_text(f"{total:,} live")

            # Rates need two samples of the overview; sends and deliveries come from it.
            if overview.status_code == 200:
                expect(page.locator("#request-rate")).to_have_text(re.compile(r"^[\d,.]+ /s$"), timeout=10_000)
                expect(page.locator("#error-rate")).to_have_text(re.compile(r"^[\d.]+%$"))
                shown_overview = overview.json()
                assert shown_overview["sends"] and shown_overview["webhooks"]["deliveries"], shown_overview
                for outcome in shown_overview["sends"]:
                    expect(page.locator(f"#sends tr[data-outcome='{outcome}']")).to_have_count(1)
                for outcome in shown_overview["webhooks"]["deliveries"]:
                    expect(page.locator(f"#deliveries tr[data-outcome='{outcome}']")).to_have_count(1)
            else:
                expect(page.locator("#error-split")).to_contain_text("overview unavailable")
            page.screenshot(path=str(folder / "ops-desktop.png"), full_page=True)

            # Click the busiest actor: its statistics, as GET /health/actors/{kind}/{key} gives them.
            # Paused first, so the table stops reordering under the click; the row is found by what it names.
            page.click("#pause")
            expect(page.locator("#pause")).to_have_text("Resume")
            assert_accessible(page, "/ops with its tables filled")
            first = page.locator("#busiest tbody tr").first
            kind, key = first.get_attribute("data-kind"), first.get_attribute("data-key")
            page.locator(f"#busiest tbody tr[data-kind='{kind}'][data-key='{key}']").click()
            detail = page.locator("#detail")
            expect(detail).to_be_visible()
            expect(detail.locator("#detail-title")).to_have_text(f"{kind} · {key}")
            expect(detail.locator("dd[data-field=key]")).to_have_text(key)
            expect(detail.locator("dd[data-field=messages_handled]")).to_have_text(re.compile(r"^[\d,]+$"))
            with httpx.Client(base_url=url, timeout=10) as client:
                stats = client.get(f"/health/actors/{kind}/{key}").json()
            shown_handled = int(detail.locator("dd[data-field=messages_handled]").inner_text().replace(",", ""))
            assert 0 < shown_handled <= stats["messages_handled"]
            expect(detail.locator("dd[data-field=status]")).to_have_text(stats["status"])
            expect(detail.locator("dd[data-field=mailbox_capacity]")).to_have_text(f"{stats['mailbox_capacity']:,}")
            page.screenshot(path=str(folder / "ops-desktop-actor.png"))
            assert_accessible(page, "/ops with an actor's statistics open")
            # ops.css has a palette of its own for a dark color scheme: its contrasts are checked too.
            page.emulate_media(color_scheme="dark")
            assert_accessible(page, "/ops in the dark color scheme, an actor's statistics open")
            page.keyboard.press("Escape")
            expect(detail).to_be_hidden()
            assert_accessible(page, "/ops in the dark color scheme")
            assert errors == []
            page.close()

            # A phone: the tables render, wide ones scroll inside their panels, the page never sideways.
            phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                                     device_scale_factor=2)
            phone.goto(f"{url}/ops?refresh=1")
            _wait_for_refresh(phone, 1)
            for table in ("#kinds", "#busiest"):
                expect(phone.locator(f"{table} tbody tr").first).to_be_visible()
                box = phone.locator(table).locator("xpath=..").bounding_box()
                assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, (table, box)
            _no_page_overflow(phone)
            phone.screenshot(path=str(folder / "ops-phone.png"), full_page=True)
            phone.locator("#busiest").scroll_into_view_if_needed()
            phone.screenshot(path=str(folder / "ops-phone-busiest.png"))
            phone.locator("#busiest tbody tr").first.click()
            expect(phone.locator("#detail dd[data-field=kind]")).to_be_visible()
            _no_page_overflow(phone)
            phone.screenshot(path=str(folder / "ops-phone-actor.png"))
            # Paused, so axe-core reads tables that are not being redrawn under it.
            phone.locator("#detail-close").click()
            phone.click("#pause")
            expect(phone.locator("#pause")).to_have_text("Resume")
            assert_accessible(phone, "/ops on a phone")
        finally:
            browser.close()


@pytest.mark.slow
async def test_the_page_shows_actor_health_as_the_json_does_under_load(database_url, nursery, chromium, artifacts):
    serve = await start_serve({"DATABASE_URL": database_url, "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8"}, nursery,
                              "--demo")
    try:
        url = serve.ready["url"]
        await _webhook_to_nowhere(serve.ready)
        await _chats(serve.ready, rounds=1)  # every customer has written: their chats are live
        assert await _live(url, "conversation") >= CUSTOMERS
        async with trio.open_nursery() as load:
            load.start_soon(_chats, serve.ready)
            await in_browser_thread(_browse_under_load, chromium, url, artifacts)
            load.cancel_scope.cancel()
    finally:
        assert await stop(serve) == 0, serve.stderr
    # Nothing crashed while the page was read (a chat stopped mid-send by the shutdown is another matter).
    assert "Traceback" not in serve.stderr.split("shutting down")[0], serve.stderr
    assert sorted(path.name for path in artifacts.iterdir()) == [
        "ops-desktop-actor.png", "ops-desktop.png", "ops-phone-actor.png", "ops-phone-busiest.png", "ops-phone.png"]


def _sign_in(chromium: str, url: str, folder: Path) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        try:
            page = browser.new_page(viewport={"width": 1024, "height": 768})
            answer = page.goto(f"{url}/ops?refresh=1")
            assert answer is not None and answer.status == 401
            form = page.locator("#sign-in")
            expect(form).to_be_visible()
            expect(page.locator("#board")).to_be_hidden()
            assert_accessible(page, "/ops asking for the token")

            page.fill("#token", "not-the-token")
            page.click("#sign-in button[type=submit]")
            expect(page.locator("#sign-in-error")).to_have_text("That token was refused.")
            assert_accessible(page, "/ops with the token refused")

            page.fill("#token", TOKEN)
            page.click("#sign-in button[type=submit]")
            expect(page.locator("#board")).to_be_visible()
            expect(page.locator("#kinds tbody tr").first).to_be_visible()
            assert page.evaluate("sessionStorage.getItem('inbox-actors-ops-token')") == TOKEN
            page.screenshot(path=str(folder / "ops-signed-in.png"))

            # The tab keeps it: a reload asks nothing.
            page.reload()
            _wait_for_refresh(page)
            expect(form).to_be_hidden()
            page.close()

            # Opened with the token in the address: taken, and gone from the address bar at once.
            fresh = browser.new_context().new_page()
            fresh.goto(f"{url}/ops#token={TOKEN}")
            _wait_for_refresh(fresh)
            expect(fresh.locator("#sign-in")).to_be_hidden()
            expect(fresh.locator("#kinds tbody tr").first).to_be_visible()
            assert "#" not in fresh.url
        finally:
            browser.close()


@pytest.mark.slow
async def test_with_an_operator_token_the_page_asks_for_it_once_per_tab(database_url, nursery, chromium,
                                                                        artifacts):
    serve = await start_serve({"DATABASE_URL": database_url, "INBOX_HEALTH_TOKEN": TOKEN}, nursery, "--demo")
    try:
        await in_browser_thread(_sign_in, chromium, serve.ready["url"], artifacts)
    finally:
        assert await stop(serve) == 0, serve.stderr


async def test_the_page_and_its_files_are_served_from_the_package(service):
    page = await service.client.get("/ops")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<script src="/ops/ops.js"' in page.text and "script-src 'self'" in page.headers["content-security-policy"]
    script = await service.client.get("/ops/ops.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    assert "/health/actors" in script.text
    style = await service.client.get("/ops/ops.css")
    assert style.status_code == 200 and style.headers["content-type"].startswith("text/css")


@pytest.fixture
def health_token() -> str | None:
    """INBOX_HEALTH_TOKEN of the in-process service: none unless a test names one (parametrize)."""
    return None


@pytest.fixture
def service_settings(service_settings, health_token):
    return with_settings(service_settings, health_token=health_token) if health_token else service_settings


@pytest.mark.parametrize("health_token", [TOKEN])
async def test_with_a_token_set_the_page_needs_it_and_without_one_it_is_the_sign_in_state(service, health_token):
    signed_in = await service.client.get("/ops", headers=bearer(TOKEN))
    assert signed_in.status_code == 200 and 'id="sign-in"' in signed_in.text
    refused = await service.client.get("/ops", headers=bearer("wrong"))
    assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
    assert refused.headers["content-type"].startswith("text/html") and 'id="sign-in"' in refused.text
    # The data stays behind the token: the page is only its shell.
    assert (await service.client.get("/health/actors")).status_code == 401
