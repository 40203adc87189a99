"""The AI agent's pages of the agent inbox in a real browser (`/app/bot`, `…/knowledge`, `…/prices`) and what
grounded a bot reply on the chat page, against the service with the built-in model simulator.

An admin sets the agent's system prompt and tone, adds an article and finds it with the search box, makes a
pricing sheet from a CSV file and downloads it again, and tries the agent with a price question: the exact price,
the sheet's row it came from and what it cost are shown, nothing is sent, and the usage chart and table count the
trial's model calls. A member who may read the bot but not change its behaviour sees no behaviour form and is
refused (403) if they send it anyway. A customer's price question answered by the agent shows, on the chat page,
the price row it was grounded in. Every page is checked with axe-core and saved as a screenshot (`artifacts`).
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from inbox_actors.access import accounts
from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer, with_settings
from tests.e2e.test_ai_agent import agent_workspace, answered
from tests.e2e.web_app import chromium_browser, no_sideways_scroll, sign_in, watched_page

PASSWORD = "a-long-enough-password"
ADMIN = "ada@example.com"
READER = "rex@example.com"
SYSTEM_PROMPT = "We are Velo Bikes in Pune.\nNever promise a delivery date."
ARTICLE = ("You can return any bike within 30 days. Bring the receipt to the shop.\n\n"
           "## Opening hours\n\nThe shop opens Monday to Saturday from 9 to 18.\n")
PLANS_CSV = "name,price,currency,unit\r\nBasic plan,19.00,EUR,month\r\nRepair service,45.5,EUR,\r\n"
CUSTOMER = "919800000401"


@pytest.fixture
def service_settings(service_settings):
    # The built-in model simulator (the service's default): the agent answers, and trying it works.
    return with_settings(service_settings, model_url=None)


async def _member_with_password(db, workspace_id: int, email: str, **options) -> int:
    member_id = await accounts.add_member(db, workspace_id=workspace_id, name=email.split("@")[0].title(),
                                          email=email, **options)
    await accounts.set_member_password(db, member_id=member_id, password=PASSWORD)
    return member_id


def _shot(page: Page, folder: Path, name: str, state: str) -> None:
    assert_accessible(page, state)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def _behaviour(admin: Page, api: httpx.Client, url: str, folder: Path) -> None:
    admin.goto(f"{url}/app/bot")
    _shot(admin, folder, "01-agent", "the agent's page")
    admin.get_by_label("System prompt").fill(SYSTEM_PROMPT)
    admin.get_by_label("Tone").select_option("formal")
    admin.get_by_label("Monthly budget in USD").fill("25")
    admin.get_by_role("button", name="Save behaviour").click()
    expect(admin.get_by_role("status")).to_have_text("The bot's behaviour is saved.")
    expect(admin.get_by_label("System prompt")).to_have_value(SYSTEM_PROMPT)
    expect(admin.get_by_label("Tone")).to_have_value("formal")
    expect(admin.get_by_label("Monthly budget in USD")).to_have_value("25.0")

    # A temperature past the rule's (the browser's own check bypassed): the rule's sentence, the typed values kept.
    admin.get_by_label("System prompt").fill("Typed, not saved")
    admin.get_by_label("Temperature").evaluate("box => { box.removeAttribute('max'); box.value = '7'; }")
    with admin.expect_response(lambda answer: answer.url == f"{url}/app/bot/behaviour") as refused:
        admin.get_by_role("button", name="Save behaviour").click()
    assert refused.value.status == 400
    expect(admin.get_by_role("alert")).to_have_text("temperature must be a number from 0 to 2.")
    expect(admin.get_by_label("System prompt")).to_have_value("Typed, not saved")
    settings = api.get("/api/bot/settings").json()
    assert (settings["system_prompt"], settings["tone"], settings["monthly_budget_usd"]) == (
        SYSTEM_PROMPT, "formal", 25.0), settings


def _knowledge(admin: Page, url: str, folder: Path) -> None:
    admin.get_by_role("navigation", name="The bot's pages").get_by_role("link", name="Knowledge").click()
    expect(admin).to_have_url(f"{url}/app/bot/knowledge")
    _shot(admin, folder, "02-knowledge", "the knowledge page")
    admin.get_by_label("Title").fill("Returns")
    admin.get_by_label("Body").fill(ARTICLE)
    admin.get_by_role("button", name="Add article").click()
    expect(admin.get_by_role("status")).to_have_text("Article added and split into passages.")
    expect(admin.get_by_role("heading", level=1)).to_have_text("Returns")
    passages = admin.locator("ol.passages > li")
    expect(passages).to_have_count(2)
    expect(passages.nth(1)).to_contain_text("Opening hours")
    _shot(admin, folder, "03-article", "an article's page")
    admin.get_by_label("Body").fill(ARTICLE.replace("the shop.", "the shop, with the box."))
    admin.get_by_role("button", name="Save article").click()
    expect(admin.get_by_role("status")).to_have_text("Article saved and split again.")
    expect(passages.first).to_contain_text("with the box.")

    admin.get_by_role("link", name="← The bot's knowledge").click()
    expect(admin.locator("tr", has_text="Returns")).to_contain_text("2")
    admin.get_by_label("A customer's question").fill("Can I return my bike?")
    admin.get_by_role("button", name="Search").click()
    found = admin.get_by_role("list", name=re.compile("What grounds an answer")).get_by_role("listitem")
    expect(found.first).to_contain_text("Returns")
    expect(found.first).to_contain_text("You can return any bike within 30 days.")
    _shot(admin, folder, "04-knowledge-search", "the knowledge page, a search")


def _prices(admin: Page, url: str, folder: Path, tmp: Path) -> None:
    admin.get_by_role("navigation", name="The bot's pages").get_by_role("link", name="Prices").click()
    expect(admin).to_have_url(f"{url}/app/bot/prices")   # axe runs on the prices page, not on one leaving
    _shot(admin, folder, "05-prices", "the prices page")
    admin.get_by_label("Sheet name").fill("Plans")
    admin.get_by_role("button", name="Add sheet").click()
    expect(admin.get_by_role("status")).to_have_text("Pricing sheet added.")
    sheet_url = admin.url.split("?")[0]

    # A bad row refuses the whole file, with the row's sentence; the pasted text stays.
    admin.get_by_label("Or paste the CSV").fill("name,price,currency\r\nBasic plan,cheap,EUR\r\n")
    with admin.expect_response(lambda answer: answer.url.endswith("/import")) as refused:
        admin.get_by_role("button", name="Import and replace the items").click()
    assert refused.value.status == 400
    expect(admin.get_by_role("alert")).to_contain_text("Row 2: price must be a decimal number")
    expect(admin.get_by_label("Or paste the CSV")).to_have_value("name,price,currency\nBasic plan,cheap,EUR\n")

    admin.get_by_label("Or paste the CSV").fill("")
    (tmp / "plans.csv").write_text(PLANS_CSV)
    admin.get_by_label("CSV file (UTF-8)").set_input_files(str(tmp / "plans.csv"))
    admin.get_by_role("button", name="Import and replace the items").click()
    expect(admin.get_by_role("status")).to_have_text("The sheet's items were replaced by the file's.")
    rows = admin.get_by_role("region", name=re.compile("Items")).locator("tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("Basic plan19.00EURmonth")
    expect(rows.nth(1)).to_contain_text("Repair service45.50EUReach")
    _shot(admin, folder, "06-sheet", "a pricing sheet's page")

    # An item added alone is judged by the same rules as a file's row; then it is removed again.
    admin.get_by_label("Item name").fill("Tune-up")
    admin.get_by_label("Price (such as 19.00)").fill("30")
    admin.get_by_label("Currency").fill("eur")
    admin.get_by_role("button", name="Add item").click()
    expect(admin.get_by_role("alert")).to_have_text(
        "currency must be a currency code of 3 capital letters, such as EUR.")
    expect(admin.get_by_label("Item name")).to_have_value("Tune-up")
    admin.get_by_label("Currency").fill("EUR")
    admin.get_by_role("button", name="Add item").click()
    expect(admin.get_by_role("status")).to_have_text("Item added.")
    expect(rows).to_have_count(3)
    admin.get_by_role("button", name="Remove Tune-up").click()
    expect(admin.get_by_role("status")).to_have_text("Item removed.")
    expect(rows).to_have_count(2)

    with admin.expect_download() as downloading:
        admin.get_by_role("link", name="Download CSV").click()
    download = downloading.value
    sheet_id = sheet_url.rsplit("/", 1)[1]
    assert download.suggested_filename == f"pricing-sheet-{sheet_id}.csv"
    assert Path(download.path()).read_text().splitlines() == [
        "name,price,currency,unit,valid_from,valid_until,notes", "Basic plan,19.00,EUR,month,,,",
        "Repair service,45.50,EUR,,,,"]


def _try_it(admin: Page, url: str, folder: Path) -> None:
    admin.get_by_role("navigation", name="The bot's pages").get_by_role("link", name="Agent").click()
    expect(admin.get_by_role("table", name=re.compile("Model calls by day"))).to_contain_text("No model calls")
    admin.get_by_label("Write as a customer would").fill("How much is the Basic plan?")
    admin.get_by_role("button", name="Try it").click()
    expect(admin.get_by_role("status")).to_have_text("Nothing was sent: no customer saw this.")
    expect(admin.locator(".trial-reply")).to_contain_text("Basic plan: 19.00 EUR per month")
    quoted = admin.get_by_role("table", name="The pricing sheets' rows the agent quoted")
    expect(quoted.locator("tbody tr")).to_have_text(["Basic plan19.00EURmonth"])
    facts = admin.locator(".trial dl")
    expect(facts).to_contain_text("simulated-grounded")
    expect(facts.locator("dt:has-text('Model calls') + dd")).to_have_text("2")
    expect(facts.locator("dt:has-text('Cost') + dd")).to_have_text(re.compile(r"^\$0\.0*[1-9]\d*$"))
    expect(admin.get_by_label("Write as a customer would")).to_have_value("How much is the Basic plan?")
    _shot(admin, folder, "07-agent-tried", "the agent's page, a trial")

    # The trial's model calls are on the books: the chart draws today's cost, the table counts the calls.
    admin.goto(f"{url}/app/bot")
    chart = admin.get_by_role("img", name=re.compile("Cost per day"))
    expect(chart).to_have_attribute("aria-label", re.compile(r"in all, most on .+ \(\$0\.0*[1-9]\d*\)\.$"))
    assert chart.locator("rect.bar:not(.nothing)").count() == 1
    usage = admin.get_by_role("table", name=re.compile("Model calls by day"))
    expect(usage.locator("tbody tr")).to_have_count(1)
    expect(usage.locator("tbody td").nth(1)).to_have_text("simulated-grounded")
    expect(usage.locator("tbody td").nth(2)).to_have_text("2")
    expect(admin.locator("dt:has-text('Spent this month') + dd")).to_contain_text("of a $25.00 budget")
    _shot(admin, folder, "08-agent-usage", "the agent's page, usage")


def _reader(browser: Browser, url: str, folder: Path) -> None:
    """A member with the bot's read permission only: the settings as facts, no forms; a form sent anyway is 403."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    sign_in(page, url, READER, PASSWORD, then="/app/bot")
    assert page.get_by_role("button", name="Save behaviour").count() == 0
    assert page.get_by_label("System prompt").count() == 0
    assert page.get_by_role("button", name="Try it").count() == 0
    expect(page.locator("dl.fact-list")).to_contain_text("Formal")
    _shot(page, folder, "14-agent-reader", "the agent's page, read only")
    csrf = page.locator("input[name=csrf]").first.input_value()
    tried = context.request.post(f"{url}/app/bot/behaviour", form={"csrf": csrf, "tone": "casual"})
    assert tried.status == 403, tried.text()
    for path in ("/app/bot/knowledge", "/app/bot/prices"):
        page.goto(f"{url}{path}")
        assert page.get_by_role("button", name=re.compile("^Add")).count() == 0, path
    context.close()


def _sheet_path(admin: Page, url: str) -> str:
    """The sheet's address, as the prices page links it."""
    admin.goto(f"{url}/app/bot/prices")
    return admin.get_by_role("link", name="Plans").get_attribute("href")


def _on_a_phone(browser: Browser, url: str, folder: Path, errors: list[str], sheet: str) -> None:
    """Each page fits a phone's width: its tables scroll in their own frames."""
    phone = watched_page(browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True), errors)
    sign_in(phone, url, ADMIN, PASSWORD, then="/app/bot")
    for index, (name, path) in enumerate((("agent", "/app/bot"), ("knowledge", "/app/bot/knowledge"),
                                          ("prices", "/app/bot/prices"), ("sheet", sheet)), start=10):
        phone.goto(f"{url}{path}")
        no_sideways_scroll(phone)
        _shot(phone, folder, f"{index}-phone-{name}", f"the bot's {name} page on a phone")
    phone.context.close()


def _story(chromium: str, url: str, key: str, folder: Path, tmp: Path) -> None:
    api = httpx.Client(base_url=url, timeout=10, headers=bearer(key))
    try:
        with chromium_browser(chromium) as browser:
            errors: list[str] = []
            admin = watched_page(browser.new_context(viewport={"width": 1280, "height": 900}), errors)
            sign_in(admin, url, ADMIN, PASSWORD, then="/app/bot")
            _behaviour(admin, api, url, folder)
            _knowledge(admin, url, folder)
            _prices(admin, url, folder, tmp)
            _try_it(admin, url, folder)
            _on_a_phone(browser, url, folder, errors, sheet=_sheet_path(admin, url))
            _reader(browser, url, folder)
            assert errors == []
    finally:
        api.close()


@pytest.mark.slow
async def test_admins_shape_ground_and_try_the_ai_agent_in_the_web_app(service, chromium, artifacts, tmp_path):
    workspace_id, _, _, key = await scale_workspace(service.db)
    await _member_with_password(service.db, workspace_id, ADMIN, role="admin")
    await _member_with_password(service.db, workspace_id, READER, role="agent", permissions=["ai_agent"])
    await in_browser_thread(_story, chromium, service.url, key, artifacts, tmp_path)


def _grounded_chat(chromium: str, url: str, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        admin = watched_page(browser.new_context(viewport={"width": 1280, "height": 900}), errors)
        sign_in(admin, url, ADMIN, PASSWORD, then=f"/app/chats/{CUSTOMER}")
        reply = admin.locator(".msg.from-bot")
        expect(reply.locator(".text")).to_contain_text("Basic plan: 19.00 EUR per month")
        grounding = reply.locator("details.grounding")
        grounding.get_by_text("Grounded in").click()
        expect(grounding.get_by_role("listitem").filter(has_text="Basic plan")).to_have_text(
            "Basic plan: 19.00 EUR (month) · Plans")
        assert admin.locator(".msg.from-customer details.grounding").count() == 0
        _shot(admin, folder, "15-chat-grounded", "a chat with a grounded bot reply")
        assert errors == []


@pytest.mark.slow
async def test_the_chat_page_shows_what_grounded_a_bot_reply(service, chromium, artifacts):
    workspace_id, number, key = await agent_workspace(service)
    await _member_with_password(service.db, workspace_id, ADMIN, role="admin")
    await customer_writes(service, number, CUSTOMER, "How much is the Basic plan?")
    assert (await answered(service, key, CUSTOMER))["state"] == "AI_ONLY"
    await in_browser_thread(_grounded_chat, chromium, service.url, artifacts)
