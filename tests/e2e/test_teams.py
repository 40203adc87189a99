"""Teams over real sockets (issue 39, "Teams"): created, renamed, described and deleted with their members, every
change in the team audit log; each field's rule with its own code; a name unique whatever its case and at most 100
teams, however many requests race; changing them needs team_management, seeing them the team overview."""

from __future__ import annotations

import trio

from inbox_actors.team.teams import MAX_TEAMS
from tests import builders
from tests.e2e.chat_helpers import scale_workspace
from tests.e2e.conftest import assert_stable, bearer
from tests.e2e.test_key_management import session_of

TEAMS = "/api/team/teams"
AUDIT = "/api/team/audit-log"


async def test_a_team_is_created_changed_given_members_and_deleted_each_change_audited(service):
    workspace_id, _, admin, key = await scale_workspace(service.db)
    asha = await builders.member(service.db, workspace_id, "agent")
    ravi = await builders.member(service.db, workspace_id, "agent")
    api = service.client

    created = await api.post(TEAMS, headers=bearer(key), json={"name": "  Billing   desk ", "description": "Refunds"})
    assert created.status_code == 201, created.text
    billing = created.json()
    assert (billing["name"], billing["description"], billing["members"]) == ("Billing desk", "Refunds", [])
    assert billing["created_by"] == admin and billing["updated_by"] == admin
    sales = (await api.post(TEAMS, headers=bearer(key), json={"name": "Sales"})).json()
    assert sales["description"] == ""
    assert_stable(await api.post(TEAMS, headers=bearer(key), json={"name": "BILLING DESK"}), 409, "team_name_taken")

    one = f"{TEAMS}/{billing['id']}"
    put_in = await api.put(f"{one}/members/{asha}", headers=bearer(key))
    assert put_in.status_code == 200, put_in.text
    assert [(m["user_id"], m["status"], m["availability"]) for m in put_in.json()["members"]] == \
        [(asha, "active", "offline")]
    again = await api.put(f"{one}/members/{asha}", headers=bearer(key))  # already in: stays, nothing recorded
    assert [m["user_id"] for m in again.json()["members"]] == [asha]
    await api.put(f"{one}/members/{ravi}", headers=bearer(key))
    await api.put(f"{TEAMS}/{sales['id']}/members/{ravi}", headers=bearer(key))

    renamed = await api.patch(one, headers=bearer(key), json={"name": "Billing", "description": "Invoices\nRefunds"})
    assert renamed.status_code == 200, renamed.text
    assert (renamed.json()["name"], renamed.json()["description"]) == ("Billing", "Invoices\nRefunds")
    assert_stable(await api.patch(one, headers=bearer(key), json={"name": "sales"}), 409, "team_name_taken")
    same = await api.patch(one, headers=bearer(key), json={"description": "Invoices\nRefunds"})  # nothing changed
    assert same.status_code == 200

    listed = (await api.get(TEAMS, headers=bearer(key))).json()["data"]
    assert [(t["name"], [m["user_id"] for m in t["members"]]) for t in listed] == \
        [("Billing", [asha, ravi]), ("Sales", [ravi])]
    assert (await api.get(one, headers=bearer(key))).json() == listed[0]
    ravis = (await api.get(f"/api/team/members/{ravi}/teams", headers=bearer(key))).json()["data"]
    assert [t["name"] for t in ravis] == ["Billing", "Sales"]
    assert (await api.get(f"/api/team/members/{admin}/teams", headers=bearer(key))).json() == {"data": []}
    assert_stable(await api.get("/api/team/members/999999/teams", headers=bearer(key)), 404, "not_found")

    assert_stable(await api.delete(f"{one}/members/{admin}", headers=bearer(key)), 404, "not_in_team")
    taken_out = await api.delete(f"{one}/members/{asha}", headers=bearer(key))
    assert [m["user_id"] for m in taken_out.json()["members"]] == [ravi]

    # A member removed from the workspace leaves every team's list, and cannot be put in one.
    await api.delete(f"/api/team/members/{ravi}", headers=bearer(key))
    assert (await api.get(f"{TEAMS}/{sales['id']}", headers=bearer(key))).json()["members"] == []
    assert_stable(await api.put(f"{one}/members/{ravi}", headers=bearer(key)), 409, "member_removed")

    deleted = await api.delete(one, headers=bearer(key))
    assert deleted.status_code == 200 and deleted.json()["name"] == "Billing"
    assert_stable(await api.get(one, headers=bearer(key)), 404, "not_found")
    assert_stable(await api.delete(one, headers=bearer(key)), 404, "not_found")
    assert [t["name"] for t in (await api.get(TEAMS, headers=bearer(key))).json()["data"]] == ["Sales"]
    # Its name is free again.
    assert (await api.post(TEAMS, headers=bearer(key), json={"name": "billing"})).status_code == 201

    auditor = (await builders.key(service.db, workspace_id, admin, ("audit_view",))).key
    entries = [e for e in (await api.get(AUDIT, headers=bearer(auditor), params={"limit": 50})).json()["data"]
               if e["action"].startswith("team.")]
    subject = f"team:{billing['id']}"
    assert [(e["action"], e["subject"]) for e in reversed(entries) if e["subject"] == subject] == [
        ("team.created", subject), ("team.member_added", subject), ("team.member_added", subject),
        ("team.changed", subject), ("team.member_removed", subject), ("team.deleted", subject)]
    by_action = {e["action"]: e for e in entries if e["subject"] == subject}
    assert by_action["team.changed"]["details"] == {"name": "Billing", "from": "Billing desk",
                                                    "changed": ["name", "description"]}
    assert by_action["team.member_removed"]["details"]["member_id"] == asha
    assert by_action["team.deleted"]["details"] == {"name": "Billing", "members": []}  # Ravi left the workspace
    assert by_action["team.created"]["actor"]["user_id"] == admin and by_action["team.created"]["via"].startswith(
        "api_key:")
    filtered = (await api.get(AUDIT, headers=bearer(auditor), params={"action": "team.deleted"})).json()["data"]
    assert [e["subject"] for e in filtered] == [subject]


async def test_each_field_rule_answers_its_own_code_and_changes_nothing(service):
    workspace_id, _, admin, key = await scale_workspace(service.db)
    api = service.client
    team = (await api.post(TEAMS, headers=bearer(key), json={"name": "Tier 2"})).json()
    one = f"{TEAMS}/{team['id']}"
    for body, code in (({"name": ""}, "invalid_team_name"), ({"name": "x" * 61}, "invalid_team_name"),
                       ({"name": "   "}, "invalid_team_name"), ({"name": "two\nlines"}, "invalid_team_name"),
                       ({"name": 7}, "invalid_team_name"),
                       ({"name": "Ok", "description": "d" * 501}, "invalid_description"),
                       ({"name": "Ok", "description": "bell\x07"}, "invalid_description"),
                       ({"name": "Ok", "colour": "red"}, "invalid_body"), ({}, "invalid_body")):
        assert_stable(await api.post(TEAMS, headers=bearer(key), json=body), 400, code)
        if body:
            assert_stable(await api.patch(one, headers=bearer(key), json={k: v for k, v in body.items()}), 400, code)
    assert (await api.post(TEAMS, headers=bearer(key), json={"name": "x" * 60, "description": "d" * 500})
            ).status_code == 201
    assert_stable(await api.put(f"{one}/members/999999", headers=bearer(key)), 404, "not_found")
    assert_stable(await api.put(f"{TEAMS}/999999/members/{admin}", headers=bearer(key)), 404, "not_found")
    assert_stable(await api.patch(f"{TEAMS}/0", headers=bearer(key), json={"name": "x"}), 404, "not_found")
    # Another workspace's team and member are no team and no member here.
    other_id, _, other_admin, other_key = await scale_workspace(service.db)
    theirs = (await api.post(TEAMS, headers=bearer(other_key), json={"name": "Tier 2"})).json()
    assert_stable(await api.get(f"{TEAMS}/{theirs['id']}", headers=bearer(key)), 404, "not_found")
    assert_stable(await api.put(f"{one}/members/{other_admin}", headers=bearer(key)), 404, "not_found")
    assert (await api.get(one, headers=bearer(key))).json()["name"] == "Tier 2"
    assert await service.db.fetchval("SELECT count(*) FROM team_members") == 0


async def test_changing_teams_needs_team_management_and_seeing_them_the_team_overview(service):
    workspace_id, _, admin, key = await scale_workspace(service.db)
    api = service.client
    team = (await api.post(TEAMS, headers=bearer(key), json={"name": "Support"})).json()
    one = f"{TEAMS}/{team['id']}"
    agent = await builders.member(service.db, workspace_id, "agent", ["inbox"])
    agent_key = (await builders.key(service.db, workspace_id, agent, ("inbox",))).key
    reader = (await builders.key(service.db, workspace_id, admin, ("team_management:read",))).key
    contacts = (await builders.key(service.db, workspace_id, admin, ("contacts",))).key

    assert (await api.get(TEAMS, headers=bearer(agent_key))).status_code == 200
    assert (await api.get(one, headers=bearer(reader))).status_code == 200
    assert_stable(await api.get(TEAMS, headers=bearer(contacts)), 403, "scope_denied")
    for method, path, body in (("POST", TEAMS, {"name": "Mine"}), ("PATCH", one, {"name": "Mine"}),
                               ("DELETE", one, None), ("PUT", f"{one}/members/{agent}", None),
                               ("DELETE", f"{one}/members/{agent}", None)):
        for refused_key, code in ((agent_key, "scope_denied"), (reader, "read_only_key")):
            assert_stable(await api.request(method, path, headers=bearer(refused_key), json=body), 403, code)
    # A member's dashboard session: their own permissions, in the same convention.
    session = await session_of(service.db, agent)
    assert (await api.get(TEAMS, headers=session)).status_code == 200
    refused = await api.post(TEAMS, headers=session, json={"name": "Mine"})
    assert refused.status_code == 403 and refused.json()["error"] in ("scope_denied", "permission_denied")
    lead = await builders.member(service.db, workspace_id, "agent", ["team_management"])
    lead_session = await session_of(service.db, lead)
    assert (await api.post(TEAMS, headers=lead_session, json={"name": "Leads"})).status_code == 201
    names = [t["name"] for t in (await api.get(TEAMS, headers=bearer(key))).json()["data"]]
    assert names == ["Leads", "Support"]


async def test_at_most_100_teams_however_many_requests_race(service):
    workspace_id, _, admin, key = await scale_workspace(service.db)
    await service.db.execute(
        "INSERT INTO teams (workspace_id, name) SELECT $1, 'team ' || n FROM generate_series(1, $2) n",
        workspace_id, MAX_TEAMS - 2)
    answers: list = []

    async def create(n: int) -> None:
        answers.append(await service.client.post(TEAMS, headers=bearer(key), json={"name": f"racing {n}"}))

    async with trio.open_nursery() as nursery:
        for n in range(6):
            nursery.start_soon(create, n)
    assert sorted(a.status_code for a in answers) == [201, 201, 409, 409, 409, 409]
    assert all(a.json()["error"] == "too_many_teams" for a in answers if a.status_code == 409)
    assert await service.db.fetchval("SELECT count(*) FROM teams WHERE workspace_id = $1", workspace_id) == MAX_TEAMS
    # Two requests racing for one name: one team.
    other_id, _, _, other_key = await scale_workspace(service.db)
    both: list = []

    async def same_name(name: str) -> None:
        both.append(await service.client.post(TEAMS, headers=bearer(other_key), json={"name": name}))

    async with trio.open_nursery() as nursery:
        for name in ("Night shift", "NIGHT SHIFT", "night shift"):
            nursery.start_soon(same_name, name)
    assert sorted(a.status_code for a in both) == [201, 409, 409]
    assert {a.json()["error"] for a in both if a.status_code == 409} == {"team_name_taken"}
