"""Reading contacts over real sockets: the spec's paginated list (tags as one string, search over name, phone,
tags and message text, numbered pages with a total) and one contact; sentence errors like the writes."""

from __future__ import annotations

from tests import builders
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.waiting import eventually


async def contacts(service, key: str, **params):
    return await service.client.get("/api/contacts/paginated", headers=bearer(key), params=params)


async def listed(service, key: str, **params) -> dict:
    answer = await contacts(service, key, **params)
    assert answer.status_code == 200, answer.text
    return answer.json()


async def test_the_list_shows_the_spec_fields_newest_activity_first(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    created = await service.client.post("/api/contacts", headers=bearer(key), json={
        "phone": "919813100009", "name": "Quiet Contact", "tags": ["lead"], "attributes": {"plan": "gold"}})
    assert created.status_code == 201, created.text
    await customer_writes(service, number, "919813100001", "I need a refund for order 5521", name="Asha Rao")
    await customer_writes(service, number, "919813100002", "hello", name="Ravi Kumar")
    await service.client.put("/api/contacts/919813100001/tags", headers=bearer(key), json={"tags": ["vip", "paid"]})
    await service.client.post("/api/inbox/conversations/919813100001/claim", headers=bearer(key))

    page = await listed(service, key)
    assert page["success"] is True
    assert [c["phone"] for c in page["contacts"]] == ["919813100002", "919813100001", "919813100009"]
    assert page["meta"] == {"total": 3, "page": 1, "limit": 50, "hasMore": False}
    asha = page["contacts"][1]
    assert set(asha) == {"phone", "name", "email", "company", "status", "tags", "notes", "chat_status",
                         "custom_attributes", "last_msg_time", "claimed_by", "claimed_by_name"}
    assert asha["tags"] == "vip,paid" and asha["status"] == "New" and asha["name"] == "Asha Rao"
    assert asha["chat_status"] == "HUMAN_ACTIVE" and asha["claimed_by"] == admin and asha["claimed_by_name"]
    assert asha["last_msg_time"].endswith("Z")
    quiet = page["contacts"][2]
    assert quiet["custom_attributes"] == {"plan": "gold"} and quiet["chat_status"] is None
    assert quiet["last_msg_time"] is None and quiet["tags"] == "lead"

    second = await listed(service, key, page="2", limit="2")
    assert [c["phone"] for c in second["contacts"]] == ["919813100009"]
    assert second["meta"] == {"total": 3, "page": 2, "limit": 2, "hasMore": False}
    first = await listed(service, key, page="1", limit="2")
    assert first["meta"]["hasMore"] is True


async def test_search_matches_name_phone_tags_and_message_text(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    await customer_writes(service, number, "919813200001", "Where is my parcel?", name="Asha Rao")
    await customer_writes(service, number, "919813200002", "hello", name="Ravi Kumar")
    await service.client.put("/api/contacts/919813200002/tags", headers=bearer(key), json={"tags": ["wholesale"]})

    def found(page: dict) -> list[str]:
        return [c["phone"] for c in page["contacts"]]

    assert found(await listed(service, key, search="asha")) == ["919813200001"]
    assert found(await listed(service, key, search="PARCEL")) == ["919813200001"]
    assert found(await listed(service, key, search="+91 98132 00002")) == ["919813200002"]
    assert found(await listed(service, key, search="wholesale")) == ["919813200002"]
    assert found(await listed(service, key, search="nobody said this")) == []
    assert (await listed(service, key, search="nobody said this"))["meta"]["total"] == 0
    assert len(found(await listed(service, key, search="   "))) == 2


async def test_bad_parameters_and_missing_contacts_are_sentence_errors(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    for params in ({"page": "0"}, {"page": "x"}, {"limit": "0"}, {"limit": "201"}, {"search": "a" * 201}):
        answer = await contacts(service, key, **params)
        assert answer.status_code == 400, (params, answer.text)
        assert set(answer.json()) == {"error"} and answer.json()["error"], answer.text
    missing = await service.client.get("/api/contacts/919813399999", headers=bearer(key))
    assert missing.status_code == 404 and missing.json() == {"error": "Contact not found"}


async def test_one_contact_and_who_may_read_contacts(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    await customer_writes(service, number, "919813400001", "hello", name="Asha")

    async def handed_off():
        answer = await service.client.get("/api/contacts/+91 98134 00001", headers=bearer(key))
        assert answer.status_code == 200, answer.text
        return answer if answer.json()["chat_status"] == "HANDOFF_PENDING" else None

    one = await eventually(handed_off)  # the bot hands the chat off after the customer's message is answered
    body = one.json()
    assert body["phone"] == "919813400001" and body["tags"] == [] and body["version"] == 1
    assert one.headers["ETag"] == '"1"'

    reader = (await builders.key(service.db, workspace_id, admin, ("contacts:read",))).key
    assert (await contacts(service, reader)).status_code == 200
    inbox_only = (await builders.key(service.db, workspace_id, admin, ("inbox",))).key
    denied = await contacts(service, inbox_only)
    assert denied.status_code == 403
    growth = await builders.plaintext_key(service.db, plan="growth")
    refused = await contacts(service, growth.key)
    assert refused.status_code == 403

    agent = await builders.member(service.db, workspace_id, "agent", permissions=["contacts"], assigned_only=True)
    agent_key = (await builders.key(service.db, workspace_id, agent, ("contacts",))).key
    assert (await listed(service, agent_key))["contacts"] == []
    hidden = await service.client.get("/api/contacts/919813400001", headers=bearer(agent_key))
    assert hidden.status_code == 404
