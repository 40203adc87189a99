"""Availability over real sockets (issue 39, "Availability"): a member chooses online, busy or offline; the roster
and the team overview show what each is now and why; an open page (its live stream) keeps a member seen and they
go offline the idle time after it closed; outside the business hours a member is offline unless they chose after
hours; the idle time is a team setting, audited."""

from __future__ import annotations

from datetime import date, timedelta

import httpx
import trio

from inbox_actors.access import accounts
from tests import builders
from tests.e2e.chat_helpers import scale_workspace
from tests.e2e.conftest import assert_stable, bearer
from tests.e2e.test_key_management import session_of

MINE = "/api/team/me/availability"
EVERYONE = "/api/team/availability"
SETTINGS = "/api/team/availability/settings"
PASSWORD = "a-long-enough-password"


async def test_a_member_chooses_their_status_and_the_roster_shows_what_each_is(service):
    workspace_id, _, admin, key = await scale_workspace(service.db)
    agent = await builders.member(service.db, workspace_id, "agent")
    agent_key = (await builders.key(service.db, workspace_id, agent, ("inbox",))).key
    api = service.client

    never = (await api.get(MINE, headers=bearer(agent_key))).json()
    assert (never["user_id"], never["status"], never["chosen"], never["reason"]) == \
        (agent, "offline", "online", "no_open_page")
    assert never["seen_at"] is None and never["chosen_at"] is None
    busy = await api.put(MINE, headers=bearer(agent_key), json={"status": "busy"})
    assert busy.status_code == 200, busy.text
    assert (busy.json()["status"], busy.json()["chosen"], busy.json()["reason"]) == ("busy", "busy", "chosen")
    assert busy.json()["seen_at"] is not None and busy.json()["chosen_until"] is None
    for body, code in (({"status": "away"}, "invalid_status"), ({"status": 1}, "invalid_status"),
                       ({}, "invalid_body"), ({"status": "online", "member_id": admin}, "invalid_body")):
        assert_stable(await api.put(MINE, headers=bearer(agent_key), json=body), 400, code)
    assert (await api.get(MINE, headers=bearer(agent_key))).json()["status"] == "busy"

    roster = {m["user_id"]: m["availability"] for m in
              (await api.get("/api/team/members", headers=bearer(key))).json()["data"]}
    assert (roster[agent]["status"], roster[admin]["status"], roster[admin]["reason"]) == \
        ("busy", "offline", "no_open_page")
    assert (await api.get(f"/api/team/members/{agent}", headers=bearer(key))).json()["availability"]["status"] == \
        "busy"
    team = (await api.get(EVERYONE, headers=bearer(agent_key))).json()
    assert [(m["user_id"], m["status"]) for m in team["data"]] == [(admin, "offline"), (agent, "busy")]
    assert (team["idle_seconds"], team["business_hours_open"]) == (300, True)
    offline = await api.put(MINE, headers=bearer(agent_key), json={"status": "offline"})
    assert (offline.json()["status"], offline.json()["reason"]) == ("offline", "chosen")

    # A suspended member is offline whatever they chose.
    await api.put(MINE, headers=bearer(agent_key), json={"status": "online"})
    await api.post(f"/api/team/members/{agent}/suspend", headers=bearer(key))
    suspended = {m["user_id"]: m for m in (await api.get(EVERYONE, headers=bearer(key))).json()["data"]}[agent]
    assert (suspended["status"], suspended["chosen"], suspended["reason"]) == ("offline", "online", "not_active")


async def test_a_members_own_status_needs_inbox_and_everyones_the_team_overview(service):
    workspace_id, _, admin, key = await scale_workspace(service.db)
    api = service.client
    contacts = await builders.member(service.db, workspace_id, "agent", ["contacts"])
    contacts_key = (await builders.key(service.db, workspace_id, contacts, ("contacts",))).key
    reader = (await builders.key(service.db, workspace_id, admin, ("inbox:read",))).key
    assert_stable(await api.put(MINE, headers=bearer(contacts_key), json={"status": "busy"}), 403, "scope_denied")
    assert_stable(await api.get(MINE, headers=bearer(contacts_key)), 403, "scope_denied")
    assert_stable(await api.get(EVERYONE, headers=bearer(contacts_key)), 403, "scope_denied")
    assert (await api.get(MINE, headers=bearer(reader))).json()["user_id"] == admin
    assert_stable(await api.put(MINE, headers=bearer(reader), json={"status": "busy"}), 403, "read_only_key")
    # A key acts as its creator: the admin's key sets the admin's status; a session, its member's.
    assert (await api.put(MINE, headers=bearer(key), json={"status": "busy"})).json()["user_id"] == admin
    agent = await builders.member(service.db, workspace_id, "agent")
    session = await session_of(service.db, agent)
    assert (await api.put(MINE, headers=session, json={"status": "online"})).json()["user_id"] == agent
    statuses = {m["user_id"]: m["status"] for m in (await api.get(EVERYONE, headers=bearer(key))).json()["data"]}
    assert (statuses[admin], statuses[agent], statuses[contacts]) == ("busy", "online", "offline")


async def test_the_idle_time_is_a_team_setting_checked_and_audited(service):
    workspace_id, _, admin, key = await scale_workspace(service.db)
    api = service.client
    agent = await builders.member(service.db, workspace_id, "agent", ["inbox", "team_management:read"])
    agent_key = (await builders.key(service.db, workspace_id, agent, ("inbox", "team_management:read"))).key
    assert (await api.get(SETTINGS, headers=bearer(agent_key))).json() == \
        {"idle_seconds": 300, "updated_at": None, "updated_by": None}
    for body, code in (({"idle_seconds": 4}, "invalid_idle_seconds"),
                       ({"idle_seconds": 86_401}, "invalid_idle_seconds"),
                       ({"idle_seconds": "60"}, "invalid_idle_seconds"), ({"idle": 60}, "invalid_body")):
        assert_stable(await api.put(SETTINGS, headers=bearer(key), json=body), 400, code)
    assert_stable(await api.put(SETTINGS, headers=bearer(agent_key), json={"idle_seconds": 60}), 403,
                  "scope_denied")
    saved = await api.put(SETTINGS, headers=bearer(key), json={"idle_seconds": 60})
    assert saved.status_code == 200, saved.text
    assert saved.json()["idle_seconds"] == 60 and saved.json()["updated_by"]["user_id"] == admin
    assert (await api.get(EVERYONE, headers=bearer(key))).json()["idle_seconds"] == 60
    auditor = (await builders.key(service.db, workspace_id, admin, ("audit_view",))).key
    entries = (await api.get("/api/team/audit-log", headers=bearer(auditor),
                             params={"action": "availability.changed"})).json()["data"]
    assert [(e["subject"], e["details"], e["actor"]["user_id"]) for e in entries] == \
        [("availability", {"idle_seconds": 60, "from": 300}, admin)]


async def test_an_open_page_keeps_a_member_online_and_they_go_offline_the_idle_time_after_it_closed(service):
    idle = 5
    workspace_id, _, admin, key = await scale_workspace(service.db)
    agent = await accounts.add_member(service.db, workspace_id=workspace_id, name="Ann", email="ann@example.com",
                                      role="agent")
    await accounts.set_member_password(service.db, member_id=agent, password=PASSWORD)
    agent_key = (await builders.key(service.db, workspace_id, agent, ("inbox",))).key
    assert (await service.client.put(SETTINGS, headers=bearer(key), json={"idle_seconds": idle})).status_code == 200

    async def mine() -> dict:
        return (await service.client.get(MINE, headers=bearer(agent_key))).json()

    assert (await mine())["reason"] == "no_open_page"
    async with httpx.AsyncClient(base_url=service.url, timeout=10) as browser:
        signed_in = await browser.post("/app/sign-in", data={"email": "ann@example.com", "password": PASSWORD})
        assert signed_in.status_code == 303
        async with trio.open_nursery() as nursery:
            async def page_open(task_status=trio.TASK_STATUS_IGNORED) -> None:
                async with browser.stream("GET", "/app/events", headers={"Accept": "text/event-stream"},
                                          timeout=None) as stream:
                    assert stream.status_code == 200
                    task_status.started()
                    async for _ in stream.aiter_lines():
                        pass

            await nursery.start(page_open)
            with trio.fail_after(5):
                while (await mine())["status"] != "online":
                    await trio.sleep(0.05)
            # Past the idle time with the page open: still online (the page says so every idle/3 s).
            await trio.sleep(idle + 1)
            still = await mine()
            assert (still["status"], still["reason"]) == ("online", "chosen"), still
            nursery.cancel_scope.cancel()
    closed = trio.current_time()
    with trio.fail_after(idle + 3):
        while (gone := await mine())["status"] != "offline":
            await trio.sleep(0.1)
    assert gone["reason"] == "no_open_page"
    # Offline after at most the idle time (counted from the page's last beat, up to idle/3 s before it closed).
    assert idle * 2 / 3 - 0.5 <= trio.current_time() - closed <= idle + 1


async def test_outside_the_business_hours_a_member_is_offline_unless_they_chose_after_hours(service):
    workspace_id, _, admin, key = await scale_workspace(service.db)
    api = service.client
    agent = await builders.member(service.db, workspace_id, "agent")
    agent_key = (await builders.key(service.db, workspace_id, agent, ("inbox",))).key
    assert (await api.put(MINE, headers=bearer(agent_key), json={"status": "online"})).json()["status"] == "online"

    # Open every day, all day, except holidays around today (by PostgreSQL's date, in UTC): closed now.
    today = await service.db.fetchval("SELECT (now() AT TIME ZONE 'UTC')::date")
    holidays = [(today + timedelta(days=n)).isoformat() for n in (-1, 0, 1)]
    all_day = [{"open": "00:00", "close": "24:00"}]
    policy = await api.put("/api/team/sla", headers=bearer(key), json={"sla_seconds": 900, "business_hours": {
        "time_zone": "UTC", "holidays": holidays,
        "weekly": {day: all_day for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")}}})
    assert policy.status_code == 200, policy.text
    closed = (await api.get(MINE, headers=bearer(agent_key))).json()
    assert (closed["status"], closed["chosen"], closed["reason"]) == ("offline", "online", "outside_business_hours")
    assert (await api.get(EVERYONE, headers=bearer(key))).json()["business_hours_open"] is False

    # Chosen after hours, it holds until the next opening (the day after the holidays).
    chosen = (await api.put(MINE, headers=bearer(agent_key), json={"status": "online"})).json()
    assert (chosen["status"], chosen["reason"]) == ("online", "chosen")
    assert chosen["chosen_until"].startswith((today + timedelta(days=2)).isoformat() + "T00:00:00")
    assert isinstance(today, date)
