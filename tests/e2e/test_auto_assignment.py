"""Team queues and automatic assignment over HTTP (issue 39): the settings' calls and their refusals, a chat routed to
a team's queue, and hand-overs of customers through the platform simulator landing with whoever is online, each an
assignment by the system in the chat's history and the webhook's outbox; and the teams page and the chat's Team box
in a real browser, checked with axe."""

from __future__ import annotations

from pathlib import Path

import trio
from playwright.sync_api import expect

from inbox_actors.access import accounts
from tests import builders
from tests.axe import assert_accessible
from tests.browser import in_browser_thread
from tests.e2e.chat_helpers import chat, customer_writes, outbox_events, scale_workspace
from tests.e2e.conftest import assert_stable, bearer
from tests.e2e.web_app import chromium_browser, sign_in, watched_page
from tests.waiting import eventually

PASSWORD = "a-long-enough-password"


async def _agent(service, workspace_id: int, name: str) -> tuple[int, str]:
    """An agent (inbox) with a key of their own, online."""
    member = await builders.member(service.db, workspace_id, "agent", ["inbox"])
    key = (await builders.key(service.db, workspace_id, member, ("inbox",))).key
    answer = await service.client.put("/api/team/me/availability", headers=bearer(key), json={"status": "online"})
    assert answer.status_code == 200, answer.text
    return member, key


async def test_settings_are_a_team_setting_with_refusals_in_their_own_words(service):
    workspace_id, _, _, key = await scale_workspace(service.db)
    read = await service.client.get("/api/team/assignment", headers=bearer(key))
    assert read.status_code == 200 and (read.json()["mode"], read.json()["capacity"]) == ("off", 10)
    saved = await service.client.put("/api/team/assignment", headers=bearer(key),
                                     json={"mode": "round_robin", "capacity": 3})
    assert saved.status_code == 200 and saved.json()["mode"] == "round_robin" and saved.json()["updated_by"]
    for body, code in (({"mode": "random"}, "invalid_mode"), ({"mode": "off", "capacity": 1001}, "invalid_capacity"),
                       ({"mode": "off", "speed": 1}, "invalid_body")):
        assert_stable(await service.client.put("/api/team/assignment", headers=bearer(key), json=body), 400, code)
    _, agent_key = await _agent(service, workspace_id, "raj")
    assert_stable(await service.client.put("/api/team/assignment", headers=bearer(agent_key),
                                           json={"mode": "off"}), 403, "scope_denied")
    after = await service.client.get("/api/team/assignment", headers=bearer(key))
    assert (after.json()["mode"], after.json()["capacity"]) == ("round_robin", 3)
    audit = await service.client.get("/api/team/audit-log?action=assignment.changed", headers=bearer(key))
    assert [entry["details"]["mode"] for entry in audit.json()["data"]] == ["round_robin"]


async def test_hand_overs_land_with_the_online_members_of_the_chats_team(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    raj, _ = await _agent(service, workspace_id, "raj")
    mia, _ = await _agent(service, workspace_id, "mia")
    team = (await service.client.post("/api/team/teams", headers=bearer(key), json={"name": "Billing"})).json()
    assert (await service.client.put(f"/api/team/teams/{team['id']}/members/{mia}", headers=bearer(key))
            ).status_code == 200
    # One customer's chat is routed to Billing while the bot still answers it; its hand-over lands there.
    await customer_writes(service, number, "919811100001", "hello")
    routed = await service.client.post("/api/inbox/conversations/919811100001/team", headers=bearer(key),
                                       json={"team_id": team["id"]})
    assert routed.status_code == 200 and routed.json()["team"] == {"id": team["id"], "name": "Billing"}
    assert_stable(await service.client.post("/api/inbox/conversations/919811100001/team", headers=bearer(key),
                                            json={"team_id": 999999}), 400, "invalid_team")
    assert (await service.client.put("/api/team/assignment", headers=bearer(key),
                                     json={"mode": "least_busy", "capacity": 2})).status_code == 200
    phones = ["919811100001", *(f"91981110000{n}" for n in range(2, 7))]
    async with trio.open_nursery() as nursery:
        for phone in phones:
            nursery.start_soon(customer_writes, service, number, phone, "I want to talk to a person")

    async def settled():
        held = {phone: (await chat(service, key, phone))["assigned_to"] for phone in phones}
        given = [h["user_id"] for h in held.values() if h]
        return held if len(given) == 4 else None
    held = await eventually(settled, timeout=10)
    assert held["919811100001"]["user_id"] == mia                            # Billing's chat: only Billing's member
    assert sorted(h["user_id"] for h in held.values() if h) == sorted([raj, raj, mia, mia])   # capacity 2 each
    history = await service.client.get("/api/reporting/v1/conversations/919811100001/assignment-history",
                                       headers=bearer(key))
    [given] = [e for e in history.json()["data"] if e["event"] == "claimed"]
    assert given["by"] is None and given["reason"] == "auto_assigned" and given["to"]["user_id"] == mia
    assert (await outbox_events(service.db, workspace_id)).count("conversation_assigned") >= 4
    # Two wait; Raj resolving one of his gives him the next at once.
    waiting = [phone for phone, h in held.items() if h is None]
    assert len(waiting) == 2
    raj_chat = next(phone for phone, h in held.items() if h and h["user_id"] == raj)
    assert (await service.client.post(f"/api/inbox/conversations/{raj_chat}/resolve", headers=bearer(key))
            ).status_code == 200

    async def refilled():
        now = [(await chat(service, key, phone))["assigned_to"] for phone in waiting]
        return [h["user_id"] for h in now if h] == [raj] or None
    await eventually(refilled, timeout=3)


async def test_the_teams_page_turns_assignment_on_and_the_chat_routes_to_a_team_in_a_browser(service, chromium,
                                                                                            artifacts):
    workspace_id, number, _, key = await scale_workspace(service.db)
    ann = await accounts.add_member(service.db, workspace_id=workspace_id, name="Ann", email="ann@example.com",
                                    role="admin", permissions=None)
    await accounts.set_member_password(service.db, member_id=ann, password=PASSWORD)
    await service.client.post("/api/team/teams", headers=bearer(key), json={"name": "Billing"})
    await customer_writes(service, number, "919811100009", "I want a person")
    await eventually(lambda: _state(service, key, "919811100009", "HANDOFF_PENDING"))
    await in_browser_thread(_assignment_in_browser, chromium, service.url, artifacts)
    detail = await chat(service, key, "919811100009")
    assert detail["team"]["name"] == "Billing"
    saved = (await service.client.get("/api/team/assignment", headers=bearer(key))).json()
    assert (saved["mode"], saved["capacity"]) == ("least_busy", 4)


async def _state(service, key: str, phone: str, state: str) -> bool:
    return (await chat(service, key, phone))["state"] == state


def _assignment_in_browser(chromium: str, url: str, folder: Path) -> None:
    with chromium_browser(chromium) as browser:
        errors: list[str] = []
        page = watched_page(browser.new_context(viewport={"width": 1280, "height": 900}), errors)
        sign_in(page, url, "ann@example.com", PASSWORD, then="/app/teams")
        page.get_by_label("Least busy: to whoever holds the fewest open chats").check()
        page.get_by_label("Open chats a member holds at most (1 to 1,000)").fill("4")
        page.get_by_role("button", name="Save automatic assignment").click()
        expect(page.locator(".notice")).to_contain_text("Automatic assignment saved.")
        assert_accessible(page, "the teams page with automatic assignment")
        page.screenshot(path=str(folder / "01-automatic-assignment.png"))
        page.goto(f"{url}/app/chats/919811100009")
        # Keyboard only: the Team box opened, its queue chosen and sent without the mouse.
        page.locator("#team-box summary").focus()
        page.keyboard.press("Enter")
        page.get_by_label("Queue", exact=True).focus()
        page.get_by_label("Queue", exact=True).select_option(label="Billing")
        page.get_by_role("button", name="Send to queue").focus()
        page.keyboard.press("Enter")
        expect(page.locator("#chat-head")).to_contain_text("team Billing")
        assert_accessible(page, "a chat routed to a team")
        page.screenshot(path=str(folder / "02-chat-routed.png"))
        assert errors == []
