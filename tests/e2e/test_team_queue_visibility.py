"""A team's queue opened to its members limited to assigned chats (issue 39: "assigned-only members see their own
chats and, if allowed, their team's queue"), over real sockets: off by default; on, such a member sees the chats
waiting in that queue in every read (the chat, its messages, the hand-off queue, the Reporting API's list, the
contacts), may take one, and sees neither another team's queue, nor the workspace's own, nor a teammate's chat."""

from __future__ import annotations

from tests import builders
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import assert_stable, bearer
from tests.waiting import eventually

BILLING_CHAT, SALES_CHAT, LOOSE_CHAT, HELD_CHAT = "919822200001", "919822200002", "919822200003", "919822200004"


async def _handed_over(service, key: str, number: str, phone: str, team_id: int | None) -> None:
    """A customer writes, the bot hands the chat over, and it is routed to `team_id`'s queue."""
    await customer_writes(service, number, phone, "I want to talk to a person")

    async def waiting():
        answer = await service.client.get(f"/api/inbox/conversations/{phone}", headers=bearer(key))
        return answer.status_code == 200 and answer.json()["state"] == "HANDOFF_PENDING"
    await eventually(waiting)
    if team_id is not None:
        routed = await service.client.post(f"/api/inbox/conversations/{phone}/team", headers=bearer(key),
                                           json={"team_id": team_id})
        assert routed.status_code == 200, routed.text


async def test_an_assigned_only_member_sees_and_takes_from_a_team_queue_opened_to_them(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    api = service.client
    limited = await builders.member(service.db, workspace_id, "agent", ["inbox", "contacts"], assigned_only=True)
    limited_key = (await builders.key(service.db, workspace_id, limited, ("inbox", "contacts"))).key
    billing = (await api.post("/api/team/teams", headers=bearer(key), json={"name": "Billing"})).json()
    assert billing["queue_visible_to_assigned_only"] is False
    sales = (await api.post("/api/team/teams", headers=bearer(key),
                            json={"name": "Sales", "queue_visible_to_assigned_only": True})).json()
    assert sales["queue_visible_to_assigned_only"] is True
    assert (await api.put(f"/api/team/teams/{billing['id']}/members/{limited}", headers=bearer(key))).status_code == 200
    for phone, team in ((BILLING_CHAT, billing["id"]), (SALES_CHAT, sales["id"]), (LOOSE_CHAT, None),
                        (HELD_CHAT, billing["id"])):
        await _handed_over(service, key, number, phone, team)
    assert (await api.post(f"/api/inbox/conversations/{HELD_CHAT}/claim", headers=bearer(key))).status_code == 200

    async def seen() -> set[str]:
        return {phone for phone in (BILLING_CHAT, SALES_CHAT, LOOSE_CHAT, HELD_CHAT)
                if (await api.get(f"/api/inbox/conversations/{phone}", headers=bearer(limited_key))).status_code
                == 200}

    # Off, as every team starts: only the chats they hold (none yet).
    assert await seen() == set()
    assert (await api.get("/api/team/handoff-queue", headers=bearer(limited_key))).json()["total"] == 0

    opened = await api.patch(f"/api/team/teams/{billing['id']}", headers=bearer(key),
                             json={"queue_visible_to_assigned_only": True})
    assert opened.status_code == 200 and opened.json()["queue_visible_to_assigned_only"] is True
    audit = (await api.get("/api/team/audit-log?action=team.changed", headers=bearer(key))).json()["data"]
    assert audit[0]["details"]["changed"] == ["queue_visible_to_assigned_only"]
    assert_stable(await api.patch(f"/api/team/teams/{billing['id']}", headers=bearer(key),
                                  json={"queue_visible_to_assigned_only": "yes"}), 400, "invalid_queue_visibility")

    # On: Billing's waiting chat, in every read; not Sales' (not their team), the workspace's own queue's, nor the
    # chat a teammate holds in Billing.
    assert await seen() == {BILLING_CHAT}
    queue = (await api.get("/api/team/handoff-queue", headers=bearer(limited_key))).json()
    assert [row["phone"] for row in queue["data"]] == [BILLING_CHAT] and queue["total"] == 1
    listed = (await api.get("/api/reporting/v1/conversations", headers=bearer(limited_key))).json()["data"]
    assert [row["phone"] for row in listed] == [BILLING_CHAT]
    messages = await api.get(f"/api/reporting/v1/conversations/{BILLING_CHAT}/messages", headers=bearer(limited_key))
    assert messages.status_code == 200, messages.text
    assert (await api.get(f"/api/contacts/{BILLING_CHAT}", headers=bearer(limited_key))).status_code == 200
    hidden_contact = await api.get(f"/api/contacts/{SALES_CHAT}", headers=bearer(limited_key))
    assert hidden_contact.status_code == 404 and hidden_contact.json() == {"error": "Contact not found"}  # spec's words
    assert_stable(await api.post(f"/api/inbox/conversations/{SALES_CHAT}/claim", headers=bearer(limited_key)),
                  404, "not_found")

    # They take it: it is theirs, and it leaves the queue.
    taken = await api.post(f"/api/inbox/conversations/{BILLING_CHAT}/claim", headers=bearer(limited_key))
    assert taken.status_code == 200, taken.text
    assert taken.json()["state"] == "HUMAN_ACTIVE" and taken.json()["assigned_to"]["user_id"] == limited
    assert (await api.get("/api/team/handoff-queue", headers=bearer(limited_key))).json()["total"] == 0
    assert await seen() == {BILLING_CHAT}

    # Closed again, or out of the team: a chat waiting in Billing's queue is out of their sight.
    await _handed_over(service, key, number, "919822200005", billing["id"])
    assert (await api.get("/api/inbox/conversations/919822200005", headers=bearer(limited_key))).status_code == 200
    assert (await api.delete(f"/api/team/teams/{billing['id']}/members/{limited}", headers=bearer(key))
            ).status_code == 200
    assert (await api.get("/api/inbox/conversations/919822200005", headers=bearer(limited_key))).status_code == 404
