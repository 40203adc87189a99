"""The team's performance over real sockets: claims, transfers, resolves, replies, first human responses and SLA
breaches counted per member, from a day of work driven through the inbox."""

from __future__ import annotations

from tests import builders
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.waiting import eventually

PERFORMANCE = "/api/team/performance"


async def test_each_members_work_is_counted_and_a_breach_goes_to_whoever_held_the_chat(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    first = await builders.member(service.db, workspace_id, "agent")
    second = await builders.member(service.db, workspace_id, "agent")
    first_key = (await builders.key(service.db, workspace_id, first, ("inbox",))).key
    second_key = (await builders.key(service.db, workspace_id, second, ("inbox",))).key
    await service.client.put("/api/team/sla", headers=bearer(key), json={"sla_seconds": 1})

    answered, ignored = "919866666601", "919866666602"
    chat = f"/api/inbox/conversations/{answered}"
    await customer_writes(service, number, answered, "I need a person")
    await eventually(lambda: _ok(service, "post", f"{chat}/claim", first_key))
    replied = await service.client.post(f"{chat}/reply", headers=bearer(first_key), json={"message": "On it!"})
    assert replied.status_code == 200, replied.text
    await service.client.post(f"{chat}/transfer", headers=bearer(first_key), json={"to_user_id": second})
    await service.client.post(f"{chat}/resolve", headers=bearer(second_key))
    await customer_writes(service, number, ignored, "hello?")   # handed off, nobody takes it: it breaches

    async def breached():
        response = await service.client.get(PERFORMANCE, headers=bearer(key))
        assert response.status_code == 200, response.text
        return response.json() if response.json()["unassigned_sla_breaches"] >= 1 else None

    report = await eventually(breached, timeout=15)
    by_member = {row["member"]["user_id"]: row for row in report["data"]}
    assert list(by_member) == [admin, first, second]
    one, two = by_member[first], by_member[second]
    assert (one["chats_claimed"], one["replies_sent"], one["chats_resolved"]) == (1, 1, 0)
    assert one["first_human_response"]["count"] == 1 and one["first_human_response"]["median_seconds"] >= 0
    assert one["first_human_response"]["p90_seconds"] >= one["first_human_response"]["median_seconds"]
    assert (two["chats_transferred_in"], two["chats_resolved"], two["replies_sent"]) == (1, 1, 0)
    assert two["first_human_response"] == {"count": 0, "median_seconds": None, "p90_seconds": None}
    assert report["unassigned_sla_breaches"] == 1 and all(row["sla_breaches"] == 0 for row in report["data"])
    assert report["window"]["from"] < report["window"]["to"]

    # A window before any of it counts nothing; a malformed one is a named 400; chat content keys without the
    # team's data are refused.
    earlier = (await service.client.get(PERFORMANCE, headers=bearer(key),
                                        params={"since": "2026-01-01", "to": "2026-01-02"})).json()
    assert all(row["chats_claimed"] == row["replies_sent"] == 0 for row in earlier["data"])
    bad = await service.client.get(PERFORMANCE, headers=bearer(key), params={"since": "yesterday"})
    assert bad.status_code == 400 and bad.json()["error"], bad.text
    contacts_only = (await builders.key(service.db, workspace_id, admin, ("contacts",))).key
    refused = await service.client.get(PERFORMANCE, headers=bearer(contacts_only))
    assert refused.status_code == 403 and refused.json()["error"] == "scope_denied"


async def _ok(service, method: str, path: str, key: str) -> bool:
    return (await service.client.request(method.upper(), path, headers=bearer(key))).status_code == 200
