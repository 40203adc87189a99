"""The team roster over real sockets: members with their live load, adding and changing them within the caller's
own permissions, the last admin kept, suspension and removal reaching the member's keys at once, and a removed
member's chats handed back to the hand-off queue."""

from __future__ import annotations

from inbox_actors.domain import scopes
from tests import builders
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import assert_stable, bearer
from tests.waiting import eventually

MEMBERS = "/api/team/members"
WHOAMI = "/api/reporting/v1/whoami"


async def test_the_roster_shows_each_member_with_their_live_load(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    agent = await builders.member(service.db, workspace_id, "agent")
    agent_key = await builders.key(service.db, workspace_id, agent, ("inbox",))
    phone = "919855555501"
    await customer_writes(service, number, phone, "can someone help?")
    claim = f"/api/inbox/conversations/{phone}/claim"
    await eventually(lambda: _claimed(service, claim, agent_key.key))

    page = (await service.client.get(MEMBERS, headers=bearer(key))).json()
    assert [m["user_id"] for m in page["data"]] == [admin, agent] and page["next_cursor"] is None
    by_id = {m["user_id"]: m for m in page["data"]}
    assert by_id[admin]["role"] == "admin" and by_id[admin]["permissions"] == ["all"]
    assert by_id[agent]["permissions"] == list(scopes.AGENT_PERMISSIONS) and by_id[agent]["status"] == "active"
    assert by_id[agent]["load"]["open_chats"] == 1 and by_id[admin]["load"]["open_chats"] == 0
    one = await service.client.get(f"{MEMBERS}/{agent}", headers=bearer(key))
    assert one.json() == by_id[agent]
    first = (await service.client.get(MEMBERS, headers=bearer(key), params={"limit": 1})).json()
    rest = (await service.client.get(MEMBERS, headers=bearer(key),
                                     params={"limit": 1, "cursor": first["next_cursor"]})).json()
    assert [m["user_id"] for m in first["data"] + rest["data"]] == [admin, agent]
    assert_stable(await service.client.get(f"{MEMBERS}/999999", headers=bearer(key)), 404, "not_found")


async def _claimed(service, path: str, key: str) -> bool:
    return (await service.client.post(path, headers=bearer(key))).status_code == 200


async def test_members_are_added_and_changed_within_the_callers_own_permissions(service):
    workspace_id, _, admin, key = await scale_workspace(service.db)
    added = await service.client.post(MEMBERS, headers=bearer(key), json={"name": "Ravi", "role": "agent",
                                                                         "email": "ravi@example.com"})
    assert added.status_code == 201, added.text
    ravi = added.json()
    assert ravi["permissions"] == list(scopes.AGENT_PERMISSIONS) and ravi["status"] == "active"
    assert_stable(await service.client.post(MEMBERS, headers=bearer(key), json={
        "name": "Other", "role": "agent", "email": "RAVI@example.com"}), 409, "email_taken")
    for body in ({"name": "", "role": "agent"}, {"name": "X", "role": "owner"}, {"name": "X", "role": "agent",
                                                                                 "permissions": ["root"]}):
        assert_stable(await service.client.post(MEMBERS, headers=bearer(key), json=body), 400, "invalid_body")

    # A lead who may manage the team but holds no campaigns permission grants neither it nor admin.
    lead = await builders.member(service.db, workspace_id, "agent", ["team_management", "inbox"])
    lead_key = (await builders.key(service.db, workspace_id, lead, ("team_management",))).key
    assert_stable(await service.client.post(MEMBERS, headers=bearer(lead_key), json={
        "name": "Boss", "role": "admin"}), 403, "admin_required")
    assert_stable(await service.client.patch(f"{MEMBERS}/{ravi['user_id']}", headers=bearer(lead_key), json={
        "permissions": ["inbox", "campaigns"]}), 403, "permission_not_held")
    narrowed = await service.client.patch(f"{MEMBERS}/{ravi['user_id']}", headers=bearer(lead_key), json={
        "permissions": ["inbox:read"], "assigned_only": True, "name": " Ravi K "})
    assert narrowed.status_code == 200, narrowed.text
    assert (narrowed.json()["permissions"], narrowed.json()["assigned_only"], narrowed.json()["name"]) == \
        (["inbox:read"], True, "Ravi K")
    assert_stable(await service.client.patch(f"{MEMBERS}/{admin}", headers=bearer(lead_key), json={
        "role": "agent"}), 403, "admin_required")

    # The workspace keeps an active admin; with a second one, the first may step down.
    assert_stable(await service.client.patch(f"{MEMBERS}/{admin}", headers=bearer(key), json={"role": "agent"}),
                  409, "last_admin")
    promoted = await service.client.patch(f"{MEMBERS}/{ravi['user_id']}", headers=bearer(key), json={"role": "admin"})
    assert promoted.json()["permissions"] == ["all"]
    stepped_down = await service.client.patch(f"{MEMBERS}/{admin}", headers=bearer(key), json={"role": "agent"})
    assert stepped_down.status_code == 200 and stepped_down.json()["permissions"] == list(scopes.AGENT_PERMISSIONS)


async def test_a_permission_change_or_suspension_reaches_the_members_keys_at_once(service):
    workspace_id, _, _, key = await scale_workspace(service.db)
    agent = await builders.member(service.db, workspace_id, "agent")
    agent_key = (await builders.key(service.db, workspace_id, agent, ("inbox:read",))).key
    queue = "/api/team/handoff-queue"
    assert (await service.client.get(queue, headers=bearer(agent_key))).status_code == 200

    await service.client.patch(f"{MEMBERS}/{agent}", headers=bearer(key), json={"permissions": ["contacts"]})
    assert (await eventually(lambda: _status(service, queue, agent_key, 403))), "the key lost inbox at once"
    suspended = await service.client.post(f"{MEMBERS}/{agent}/suspend", headers=bearer(key))
    assert suspended.status_code == 200 and suspended.json()["status"] == "suspended"
    assert await eventually(lambda: _status(service, WHOAMI, agent_key, 403, "account_suspended"))
    await service.client.post(f"{MEMBERS}/{agent}/reactivate", headers=bearer(key))
    assert await eventually(lambda: _status(service, WHOAMI, agent_key, 200))


async def _status(service, path: str, key: str, status: int, code: str | None = None) -> bool:
    response = await service.client.get(path, headers=bearer(key))
    return response.status_code == status and (code is None or response.json().get("error") == code)


async def test_removal_is_final_and_hands_the_members_chats_back_to_the_queue(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    agent = await builders.member(service.db, workspace_id, "agent")
    agent_key = (await builders.key(service.db, workspace_id, agent, ("inbox",))).key
    phone = "919855555511"
    await customer_writes(service, number, phone, "hello?")
    await eventually(lambda: _claimed(service, f"/api/inbox/conversations/{phone}/claim", agent_key))

    settings_only = (await builders.key(service.db, workspace_id, admin, ("team_management",))).key
    assert_stable(await service.client.delete(f"{MEMBERS}/{agent}", headers=bearer(settings_only)), 403,
                  "scope_denied")
    assert_stable(await service.client.delete(f"{MEMBERS}/{admin}", headers=bearer(key)), 409, "last_admin")
    removed = await service.client.delete(f"{MEMBERS}/{agent}", headers=bearer(key))
    assert removed.status_code == 200, removed.text
    assert (removed.json()["status"], removed.json()["released_chats"]) == ("removed", 1)
    assert removed.json()["load"]["open_chats"] == 0

    queue = (await service.client.get("/api/team/handoff-queue", headers=bearer(key))).json()
    assert [row["phone"] for row in queue["data"]] == [phone], "the chat is the team's again"
    assert await eventually(lambda: _status(service, WHOAMI, agent_key, 403, "membership_revoked"))
    assert_stable(await service.client.post(f"{MEMBERS}/{agent}/reactivate", headers=bearer(key)), 409,
                  "member_removed")
    current = (await service.client.get(MEMBERS, headers=bearer(key))).json()
    assert [m["user_id"] for m in current["data"]] == [admin], "removed members are listed only when asked for"
    everyone = (await service.client.get(MEMBERS, headers=bearer(key), params={"status": "all"})).json()
    assert [m["user_id"] for m in everyone["data"]] == [admin, agent]
