"""The teams' pages and the availability switch (issue 39, "Teams" and "Availability"): over plain HTTP as a
browser without the script sends them (forms that post and redirect, refusals shown on the page, each page and
action for whom the declarations allow), and in a real browser (Debian's Chromium through Playwright) with the
script: a team made and given a member from the settings menu's link, the switch sent without leaving the page and
the page's availability brought up to date, each state checked with axe."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from playwright.sync_api import expect

from inbox_actors.access import accounts
from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.chat_helpers import scale_workspace
from tests.e2e.conftest import bearer
from tests.e2e.web_app import chromium_browser, sign_in, watched_page

PASSWORD = "a-long-enough-password"


async def _people(service) -> tuple[int, str, dict[str, int]]:
    """A Scale workspace with Ann (admin), Raj (agent: inbox) and Cy (contacts only), who sign in."""
    workspace_id, _, _, key = await scale_workspace(service.db)
    people = {}
    for name, role, permissions in (("ann", "admin", None), ("raj", "agent", ["inbox"]), ("cy", "agent", ["contacts"])):
        people[name] = await accounts.add_member(service.db, workspace_id=workspace_id, name=name.title(),
                                                 email=f"{name}@example.com", role=role, permissions=permissions)
        await accounts.set_member_password(service.db, member_id=people[name], password=PASSWORD)
    return workspace_id, key, people


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert found, html[:500]
    return found.group(1)


async def _signed_in(service, name: str) -> httpx.AsyncClient:
    client = httpx.AsyncClient(base_url=service.url, timeout=10)
    answer = await client.post("/app/sign-in", data={"email": f"{name}@example.com", "password": PASSWORD})
    assert answer.status_code == 303, answer.text
    return client


async def test_the_teams_pages_and_the_switch_work_as_plain_forms_for_whom_they_are_offered(service):
    workspace_id, key, people = await _people(service)
    ann = await _signed_in(service, "ann")
    try:
        listing = await ann.get("/app/teams")
        assert listing.status_code == 200
        csrf = _csrf(listing.text)
        assert 'href="/app/teams"' in listing.text and 'id="availability-form"' in listing.text
        created = await ann.post("/app/teams", data={"csrf": csrf, "name": "Billing",
                                                     "description": "Refunds\r\nInvoices"})
        assert created.status_code == 303, created.text
        team_path = created.headers["location"].split("?")[0]
        assert created.headers["location"] == f"{team_path}?done=created"
        api_path = f"/api/team{team_path.removeprefix('/app')}"
        made = (await service.client.get(api_path, headers=bearer(key))).json()
        assert made["description"] == "Refunds\nInvoices"  # the box's line break is one character
        taken = await ann.post("/app/teams", data={"csrf": csrf, "name": "billing"})
        assert taken.status_code == 409 and "already has a team named billing" in taken.text
        assert 'value="billing"' in taken.text  # the refused form keeps what was typed
        too_long = await ann.post("/app/teams", data={"csrf": csrf, "name": "x" * 61})
        assert too_long.status_code == 400 and "1 to 60 characters" in too_long.text

        page = (await ann.get(team_path)).text
        assert f'<option value="{people["raj"]}">Raj</option>' in page
        added = await ann.post(f"{team_path}/members", data={"csrf": csrf, "member_id": str(people["raj"])})
        assert added.status_code == 303 and added.headers["location"] == f"{team_path}?done=added"
        page = (await ann.get(f"{team_path}?done=added")).text
        assert "Member added to the team." in page and f'data-availability-of="{people["raj"]}"' in page
        nobody = await ann.post(f"{team_path}/members", data={"csrf": csrf, "member_id": "x"})
        assert nobody.status_code == 404 and "No such member" in nobody.text
        saved = await ann.post(team_path, data={"csrf": csrf, "name": "Billing desk", "description": "",
                                                 "queue_visible_to_assigned_only": "on"})
        assert saved.status_code == 303
        team = (await service.client.get(api_path, headers=bearer(key))).json()
        assert (team["name"], team["description"], [m["user_id"] for m in team["members"]]) == \
            ("Billing desk", "", [people["raj"]])
        assert team["queue_visible_to_assigned_only"] is True
        unticked = await ann.post(team_path, data={"csrf": csrf, "name": "Billing desk", "description": ""})
        assert unticked.status_code == 303
        assert (await service.client.get(api_path, headers=bearer(key))).json()["queue_visible_to_assigned_only"] \
            is False
        removed = await ann.post(f"{team_path}/members/{people['raj']}/remove", data={"csrf": csrf})
        assert removed.status_code == 303

        # The switch: posts, and comes back to the page it was sent from.
        chosen = await ann.post("/app/availability", data={"csrf": csrf, "status": "busy", "next": "/app/teams"})
        assert chosen.status_code == 303 and chosen.headers["location"] == "/app/teams"
        menu = (await ann.get("/app/teams")).text
        assert re.search(r'value="busy" checked', menu) and "You are busy." in menu
        wrong = await ann.post("/app/availability", data={"csrf": csrf, "status": "away", "next": "/app/teams"})
        assert wrong.status_code == 400 and "online, busy or offline" in wrong.text
        roster = (await ann.get("/app/team")).text
        assert f'data-availability-of="{people["ann"]}" data-detail="full" data-status="busy">Busy<' in roster
        everyone = (await ann.get("/app/availability/team", headers={"X-Requested-With": "fetch"})).json()
        assert everyone[str(people["ann"])] == {"status": "busy", "label": "Busy", "title": "Busy"}

        # The idle time, a team setting on the teams' page.
        assert 'name="idle_seconds"' in listing.text and 'value="300"' in listing.text
        short = await ann.post("/app/teams/idle-time", data={"csrf": csrf, "idle_seconds": "4"})
        assert short.status_code == 400 and "from 5 to 86,400" in short.text
        idle = await ann.post("/app/teams/idle-time", data={"csrf": csrf, "idle_seconds": "120"})
        assert idle.status_code == 303 and idle.headers["location"] == "/app/teams?done=idle"
        assert (await service.client.get("/api/team/availability/settings", headers=bearer(key))).json()[
            "idle_seconds"] == 120

        confirm = await ann.get(f"{team_path}/delete")
        assert confirm.status_code == 200 and "Delete the team Billing desk?" in confirm.text
        deleted = await ann.post(f"{team_path}/delete", data={"csrf": csrf})
        assert deleted.status_code == 303 and deleted.headers["location"] == "/app/teams?done=deleted"
        assert (await ann.get(team_path)).status_code == 404
    finally:
        await ann.aclose()

    # Raj (inbox) sees the teams and chooses his status, and changes no team; Cy (contacts) gets neither.
    await service.client.post("/api/team/teams", headers=bearer(key), json={"name": "Tier 2"})
    raj = await _signed_in(service, "raj")
    try:
        page = await raj.get("/app/teams")
        assert page.status_code == 200 and "Tier 2" in page.text and "Create a team" not in page.text
        assert 'name="idle_seconds"' not in page.text
        assert 'id="availability-form"' in page.text
        refused = await raj.post("/app/teams", data={"csrf": _csrf(page.text), "name": "Mine"})
        assert refused.status_code == 403
        assert (await raj.get("/app/team")).status_code == 403
    finally:
        await raj.aclose()
    cy = await _signed_in(service, "cy")
    try:
        refused = await cy.get("/app/teams")
        assert refused.status_code == 403
        assert "The teams need the inbox:read or team_management:read permission" in refused.text
        # The page that says so has the settings menu, without the teams' link or the switch.
        assert 'href="/app/teams"' not in refused.text and 'id="availability-form"' not in refused.text
        csrf = _csrf(refused.text)
        assert (await cy.post("/app/availability", data={"csrf": csrf, "status": "online"})).status_code == 403
    finally:
        await cy.aclose()


def _teams_and_switch(chromium: str, url: str, raj: int, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = watched_page(context, errors)
        sign_in(page, url, "ann@example.com", PASSWORD, then="/app/team")

        # The settings menu links to the teams.
        page.locator("#settings-menu summary").click()
        assert_accessible(page, "the settings menu open, with the availability switch")
        page.screenshot(path=str(folder / "01-settings-menu.png"))
        page.get_by_role("link", name="Teams").click()
        expect(page).to_have_url(f"{url}/app/teams")
        expect(page.get_by_role("cell", name="No teams yet.")).to_be_visible()
        assert_accessible(page, "the teams page, empty")

        page.get_by_label("Name").fill("Billing")
        page.get_by_label("Description (optional)").fill("Refunds and invoices")
        page.get_by_role("button", name="Create team").click()
        expect(page.get_by_role("status")).to_have_text("Team created.")
        expect(page.get_by_role("heading", level=1)).to_have_text("Billing")
        # Its queue, opened to the members who see only their own chats, stays open once saved.
        opened = page.get_by_label("Members who see only their own chats also see this team's queue")
        expect(opened).not_to_be_checked()
        opened.check()
        page.get_by_role("button", name="Save team").click()
        expect(page.get_by_role("status")).to_have_text("Team saved.")
        expect(opened).to_be_checked()
        page.get_by_label("Member", exact=True).select_option(label="Raj")
        page.get_by_role("button", name="Add to the team").click()
        expect(page.get_by_role("status")).to_have_text("Member added to the team.")
        expect(page.locator(f'[data-availability-of="{raj}"]')).to_have_text("Offline")
        assert_accessible(page, "a team's page with a member")
        page.screenshot(path=str(folder / "02-team.png"))

        # Ann puts herself in the team, then sets herself busy from the menu: the page stays, the sentence and
        # her row say so.
        page.get_by_label("Member", exact=True).select_option(label="Ann")
        page.get_by_role("button", name="Add to the team").click()
        ann_row = page.locator("tr", has_text="Ann").locator("[data-availability-of]")
        expect(ann_row).to_have_text("Offline")
        page.locator("#settings-menu summary").click()
        page.get_by_label("Busy: no new chats").check()
        at = page.url
        page.get_by_role("button", name="Set availability").click()
        expect(page.locator("#availability-said")).to_have_text("You are busy.")
        expect(ann_row).to_have_text("Busy")
        assert page.url == at
        assert_accessible(page, "the availability switch after a choice")
        page.screenshot(path=str(folder / "03-busy.png"))

        page.goto(f"{url}/app/teams")
        expect(page.get_by_role("link", name="Billing", exact=True)).to_be_visible()
        assert_accessible(page, "the teams page with a team")
        page.goto(f"{url}/app/team")
        expect(page.locator("tr", has_text="ann@example.com").locator("[data-availability-of]")).to_have_text("Busy")
        assert_accessible(page, "the roster with availability")
        assert errors == []


async def test_the_teams_pages_and_the_availability_switch_in_a_browser(service, chromium, artifacts):
    _, _, people = await _people(service)
    await in_browser_thread(_teams_and_switch, chromium, service.url, people["raj"], artifacts)
