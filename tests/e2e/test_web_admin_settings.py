"""The admin pages of the agent inbox in a real browser: the bot, labels, the SLA policy and broadcasts awaiting
approval, against `inbox-actors serve --demo` in a process of its own.

The demo admin changes each in its page and the API reads the same afterwards (the pages are adapters over the
actions the API calls); a broadcast made by a member without `campaign_approve` waits for approval, and the admin
approves one and rejects another in the page. A member without the sections' permissions does not see them and is
refused (403) at their addresses. Every page state is checked with axe-core and saved as a screenshot
(`artifacts`); each section's main page fits a phone's screen.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path

import httpx
import pytest
import trio
from playwright.sync_api import Browser, Page, expect

from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.conftest import bearer
from tests.e2e.test_cli import cli, output
from tests.e2e.test_serve_process import start_serve, stop
from tests.e2e.web_app import chromium_browser, no_sideways_scroll, sign_in, watched_page

HOSTILE_ANSWER = "<img src=x onerror=alert(1)> Orders ship within 2 days."
MAKER = {"name": "Meera Shah", "email": "meera@demo.example", "password": "meera-has-a-long-password",
         "permissions": ["campaigns"]}
OUTSIDER = {"name": "Kabir Rao", "email": "kabir@demo.example", "password": "kabir-has-a-long-password",
            "permissions": ["templates"]}
SECTIONS = {"Bot": "/app/bot", "Labels": "/app/labels", "SLA": "/app/sla", "Broadcasts": "/app/broadcasts"}


async def _add_member(api: httpx.AsyncClient, member: dict) -> int:
    added = await api.post("/api/team/members", json={"name": member["name"], "email": member["email"],
                                                      "role": "agent", "permissions": member["permissions"]})
    assert added.status_code == 201, added.text
    return added.json()["user_id"]


async def _broadcasts_awaiting_approval(ready: dict, database_url: str) -> dict[str, int]:
    """Two broadcasts made with the key of a member who holds `campaigns` but not `campaign_approve`: both wait.
    The two members get passwords from the command line, to sign in later."""
    demo = ready["demo"]
    async with httpx.AsyncClient(base_url=ready["url"], headers=bearer(demo["key"]), timeout=10) as api:
        maker_id, outsider_id = await _add_member(api, MAKER), await _add_member(api, OUTSIDER)
    made: dict[str, dict] = {}

    async def run(name: str, *args: str, stdin: bytes = b"") -> None:
        made[name] = output(await cli(database_url, *args, stdin=stdin))

    async with trio.open_nursery() as commands:  # one process each, side by side
        for member_id, member in ((maker_id, MAKER), (outsider_id, OUTSIDER)):
            commands.start_soon(partial(run, member["name"], "member", "set-password", "--member", str(member_id),
                                        stdin=member["password"].encode() + b"\n"))
        commands.start_soon(run, "key", "key", "create", "--workspace", str(demo["workspace_id"]), "--member",
                            str(maker_id), "--name", "campaigns", "--scopes", "campaigns")
    ids: dict[str, int] = {}
    async with httpx.AsyncClient(base_url=ready["url"], headers=bearer(made["key"]["key"]), timeout=10) as maker:
        for name, phone in (("Diwali offer", "919811100201"), ("Flash sale", "919811100202")):
            answer = await maker.post("/api/bulk-send", json={
                "name": name, "recipients": [phone],
                "template": {"name": "order_update", "language": "en", "parameters": ["friend", "SALE"]}})
            assert answer.status_code == 202, answer.text
            assert answer.json()["status"] == "pending_approval", answer.json()
            ids[name] = answer.json()["id"]
    return ids


def _until(condition, what: str, timeout: float = 10.0):
    """Asks `condition` again until it answers something true (what it answered), or fails after `timeout`."""
    deadline = time.monotonic() + timeout
    while not (answer := condition()):
        assert time.monotonic() < deadline, f"still not {what} after {timeout} s"
        time.sleep(0.05)
    return answer


def _shot(page: Page, folder: Path, name: str, state: str) -> None:
    assert_accessible(page, state)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def _the_bot(admin: Page, api: httpx.Client, url: str, folder: Path) -> None:
    admin.goto(f"{url}/app/bot")
    _shot(admin, folder, "01-bot", "the bot")
    admin.get_by_label("Persona").fill("Aria")
    admin.get_by_label("Hand-off words").fill("A person will be with you shortly.")
    admin.get_by_role("button", name="Save behaviour").click()
    expect(admin.get_by_role("status")).to_have_text("The bot's behaviour is saved.")

    # The FAQ answers are on the bot's knowledge page.
    admin.goto(f"{url}/app/bot/knowledge")
    admin.get_by_label("Keywords").fill("delivery, shipping")
    admin.get_by_label("Answer", exact=True).fill(HOSTILE_ANSWER)
    admin.get_by_role("button", name="Add answer").click()
    expect(admin.get_by_role("status")).to_have_text("Answer added.")
    added = admin.locator("tr", has_text="delivery, shipping")
    expect(added.locator("td.text")).to_have_text(HOSTILE_ANSWER)  # text, not an element
    assert admin.locator("table img").count() == 0

    admin.get_by_role("button", name="Remove the answer to refund").click()
    expect(admin.get_by_role("status")).to_have_text("Answer removed.")
    admin.goto(f"{url}/app/bot")
    admin.get_by_role("button", name="Switch the bot off").click()
    expect(admin.get_by_role("status")).to_contain_text("The bot is off")
    expect(admin.get_by_role("button", name="Switch the bot on")).to_be_visible()

    # A keyword the bot could never answer (it names a hand-off phrase) is the bot's rule: its sentence, 400.
    admin.goto(f"{url}/app/bot/knowledge")
    admin.get_by_label("Keywords").fill("travel agent")
    admin.get_by_label("Answer", exact=True).fill("We book trips.")
    with admin.expect_response(lambda answer: answer.url == f"{url}/app/bot/knowledge/answers") as refused:
        admin.get_by_role("button", name="Add answer").click()
    assert refused.value.status == 400
    expect(admin.get_by_role("alert")).to_contain_text("contains a hand-off phrase")
    _shot(admin, folder, "02-bot-refused", "the bot, a refused answer")

    settings = api.get("/api/bot/settings").json()
    assert (settings["enabled"], settings["persona"], settings["handoff_message"]) == (
        False, "Aria", "A person will be with you shortly."), settings
    answers = {tuple(a["keywords"]): a["answer"] for a in api.get("/api/bot/answers").json()["data"]}
    assert answers[("delivery", "shipping")] == HOSTILE_ANSWER, answers
    assert ("refund",) not in answers and ("travel agent",) not in answers, answers


def _labels(admin: Page, api: httpx.Client, url: str, folder: Path) -> None:
    admin.goto(f"{url}/app/labels")
    for name, colour in (("VIP", "#2563eb"), ("Follow up", None)):
        admin.get_by_label("Name").fill(name)
        if colour:
            admin.get_by_label("Colour").fill(colour)
        admin.get_by_role("button", name="Create label").click()
        expect(admin.get_by_role("status")).to_have_text("Label created.")
    admin.get_by_label("Name").fill("vip")
    admin.get_by_role("button", name="Create label").click()
    expect(admin.get_by_role("alert")).to_contain_text("already has a label named 'vip'")
    _shot(admin, folder, "03-labels-refused", "labels, a refused name")

    admin.get_by_role("link", name="Rename or recolour VIP").click()
    _shot(admin, folder, "04-label-edit", "a label's page")
    admin.get_by_label("Name").fill("Priority")
    admin.get_by_label("Colour").fill("#dc2626")
    admin.get_by_role("button", name="Save label").click()
    expect(admin.get_by_role("status")).to_contain_text("Label saved")

    # Deleting asks first, and the question is answered by keyboard.
    admin.goto(f"{url}/app/labels")
    admin.get_by_role("link", name="Delete Follow up").click()
    expect(admin.get_by_role("heading", level=1)).to_have_text("Delete the label “Follow up”?")
    _shot(admin, folder, "05-label-delete", "deleting a label, asked first")
    admin.get_by_role("button", name="Delete label").focus()
    admin.keyboard.press("Enter")
    expect(admin.get_by_role("status")).to_contain_text("Label deleted")
    _shot(admin, folder, "06-labels", "labels")

    labels = [(label["name"], label["colour"]) for label in api.get("/api/labels").json()["data"]]
    assert labels == [("Priority", "#dc2626")], labels


def _sla(admin: Page, api: httpx.Client, url: str, folder: Path) -> None:
    admin.goto(f"{url}/app/sla")
    _shot(admin, folder, "07-sla", "the SLA policy")
    admin.get_by_label("A customer waits at most").fill("15")
    admin.get_by_label("Unit").select_option("minutes")
    admin.get_by_label("In business hours only").check()
    admin.get_by_label("Time zone").fill("Asia/Kolkata")
    for box, value in (("Monday opening 1 opens", "09:00"), ("Monday opening 1 closes", "13:00"),
                       ("Tuesday opening 1 opens", "09:00"), ("Tuesday opening 1 closes", "18:00")):
        admin.get_by_label(box).fill(value)
    admin.get_by_label("Holidays").fill("2026-12-25")
    admin.get_by_role("button", name="Save SLA policy").click()
    expect(admin.get_by_role("status")).to_contain_text("SLA policy saved")

    # A second Monday opening that overlaps the first: the rule's sentence, and the typed hours stay in the form.
    admin.get_by_label("Monday opening 2 opens").fill("12:00")
    admin.get_by_label("Monday opening 2 closes").fill("18:00")
    with admin.expect_response(lambda answer: answer.url == f"{url}/app/sla") as refused:
        admin.get_by_role("button", name="Save SLA policy").click()
    assert refused.value.status == 400
    expect(admin.get_by_role("alert")).to_have_text(
        "business_hours.weekly.mon[1] overlaps business_hours.weekly.mon[0]; openings of one day must not overlap.")
    expect(admin.get_by_label("Monday opening 2 opens")).to_have_value("12:00")
    _shot(admin, folder, "08-sla-refused", "the SLA policy, refused hours")
    admin.get_by_label("Monday opening 2 opens").fill("14:00")
    admin.get_by_role("button", name="Save SLA policy").click()
    expect(admin.get_by_role("status")).to_contain_text("SLA policy saved")

    policy = api.get("/api/team/sla").json()
    assert policy["sla_seconds"] == 900 and policy["deadlines"] == "business_hours", policy
    assert policy["business_hours"] == {
        "time_zone": "Asia/Kolkata", "holidays": ["2026-12-25"],
        "weekly": {"mon": [{"open": "09:00", "close": "13:00"}, {"open": "14:00", "close": "18:00"}],
                   "tue": [{"open": "09:00", "close": "18:00"}]}}, policy


def _broadcasts(admin: Page, api: httpx.Client, url: str, folder: Path, ids: dict[str, int], admin_id: int) -> None:
    admin.goto(f"{url}/app/broadcasts")
    for name in ids:
        row = admin.locator("tr", has_text=name)
        expect(row).to_contain_text("order_update (en)")
        expect(row).to_contain_text("1 recipient")
        expect(row).to_contain_text(MAKER["name"])
    _shot(admin, folder, "09-broadcasts-awaiting", "broadcasts awaiting approval")

    # Approved from the list: it leaves the ones awaiting approval and sends.
    admin.get_by_role("button", name="Approve Diwali offer").click()
    expect(admin.get_by_role("status")).to_contain_text("Broadcast approved")
    expect(admin.locator("tr", has_text="Diwali offer")).to_have_count(0)

    # Rejected from its page, with a reason.
    admin.get_by_role("link", name="Flash sale").click()
    _shot(admin, folder, "10-broadcast-awaiting", "a broadcast awaiting approval")
    admin.get_by_text("Reject Flash sale…").click()
    admin.get_by_label("Reason for rejecting Flash sale").fill("Not this week")
    admin.get_by_role("button", name="Reject broadcast Flash sale").click()
    expect(admin.get_by_role("status")).to_contain_text("Broadcast rejected")
    expect(admin.locator(".fact-list")).to_contain_text("Rejected by Demo Admin")
    expect(admin.locator(".fact-list")).to_contain_text("“Not this week”")
    _shot(admin, folder, "11-broadcast-rejected", "a rejected broadcast")

    # Every status: the approved one's page shows its progress as the simulator takes the send.
    admin.get_by_role("link", name="← Broadcasts").click()
    admin.get_by_label("Status").select_option("all")
    admin.get_by_role("button", name="Show").click()
    expect(admin.locator("tr", has_text="Flash sale")).to_contain_text("Rejected")
    def approved_and_sent() -> dict | None:
        found = api.get(f"/api/broadcasts/{ids['Diwali offer']}").json()
        return found if found["counts"]["sent"] == 1 else None

    approved = _until(approved_and_sent, "sent to its recipient")
    assert approved["status"] in ("sending", "completed") and approved["approval"]["decided_by"] == admin_id, approved
    admin.get_by_role("link", name="Diwali offer").click()
    expect(admin.locator(".fact-list")).to_contain_text("Approved by Demo Admin")
    expect(admin.get_by_role("row", name="Sent").get_by_role("cell")).to_have_text("1")
    _shot(admin, folder, "12-broadcast-progress", "an approved broadcast's progress")

    rejected = api.get(f"/api/broadcasts/{ids['Flash sale']}").json()
    assert rejected["status"] == "rejected" and rejected["approval"]["rejection_reason"] == "Not this week", rejected
    assert rejected["counts"]["cancelled"] == 1, rejected


def _members_without_the_permissions(browser: Browser, url: str, folder: Path, ids: dict[str, int]) -> None:
    """The campaigns member sees Broadcasts (read-only, nothing to decide) and no other section; the member with
    none of the permissions sees none; both are refused at the addresses they may not open."""
    for member, may_open in ((MAKER, {"Broadcasts"}), (OUTSIDER, set())):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        sign_in(page, url, member["email"], member["password"], then="/app/broadcasts" if may_open else "/app/inbox")
        sections = page.get_by_role("navigation", name="Sections")
        for title, path in SECTIONS.items():
            expect(sections.get_by_role("link", name=title)).to_have_count(1 if title in may_open else 0)
            if title not in may_open:
                assert page.goto(f"{url}{path}").status == 403, (member["name"], path)
        assert page.goto(f"{url}/app/labels/1/delete").status == 403
        if "Broadcasts" in may_open:
            page.goto(f"{url}/app/broadcasts/{ids['Flash sale']}")
            expect(page.get_by_role("heading", level=1)).to_have_text("Flash sale")
            assert page.get_by_role("button", name="Approve").count() == 0
            csrf = page.locator("input[name=csrf]").first.input_value()
            tried = context.request.post(f"{url}/app/broadcasts/{ids['Flash sale']}/approve", form={"csrf": csrf})
            assert tried.status == 403, tried.text()
        else:
            expect(page.get_by_role("alert")).to_contain_text("permission")
            _shot(page, folder, "13-refused", "a section refused")
        context.close()


def _on_a_phone(browser: Browser, url: str, demo: dict, folder: Path) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                                  device_scale_factor=2)
    phone = context.new_page()
    sign_in(phone, url, demo["email"], demo["password"], then="/app/bot")
    for index, (title, path) in enumerate(SECTIONS.items(), start=14):
        phone.goto(f"{url}{path}")
        no_sideways_scroll(phone)
        _shot(phone, folder, f"{index}-phone-{title.lower()}", f"{title} on a phone")
    phone.goto(f"{url}/app/broadcasts?status=all")  # a list with rows: the table scrolls in its frame, not the page
    no_sideways_scroll(phone)
    _shot(phone, folder, "18-phone-broadcasts-all", "every broadcast on a phone")
    context.close()


def _story(chromium: str, ready: dict, folder: Path, ids: dict[str, int]) -> None:
    url, demo = ready["url"], ready["demo"]
    api = httpx.Client(base_url=url, timeout=10, headers=bearer(demo["key"]))
    try:
        with chromium_browser(chromium) as browser:
            errors: list[str] = []
            admin = watched_page(browser.new_context(viewport={"width": 1280, "height": 900}), errors)
            sign_in(admin, url, demo["email"], demo["password"], then="/app/bot")
            sections = admin.get_by_role("navigation", name="Sections")
            for title in SECTIONS:
                expect(sections.get_by_role("link", name=title)).to_be_visible()
            _the_bot(admin, api, url, folder)
            _labels(admin, api, url, folder)
            _sla(admin, api, url, folder)
            _broadcasts(admin, api, url, folder, ids, demo["user_id"])
            _members_without_the_permissions(browser, url, folder, ids)
            _on_a_phone(browser, url, demo, folder)
            assert errors == []
    finally:
        api.close()


@pytest.mark.slow
async def test_admins_keep_the_bot_labels_sla_and_broadcasts_in_the_web_app(database_url, nursery, chromium,
                                                                            artifacts):
    serve = await start_serve({"DATABASE_URL": database_url}, nursery, "--demo")
    try:
        ids = await _broadcasts_awaiting_approval(serve.ready, database_url)
        await in_browser_thread(_story, chromium, serve.ready, artifacts, ids)
    finally:
        assert await stop(serve) == 0, serve.stderr
