"""Deleting and exporting contacts over real sockets: a deletion erases the chat and the contact for good (and the
chat's actor forgets it, so the customer's next message starts afresh), bulk deletion answers each phone, and the
export streams every contact as CSV or JSON lines."""

from __future__ import annotations

import csv
import io
import json

from tests import builders
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.waiting import eventually

PHONE = "919899999901"


async def test_deleting_a_contact_erases_its_chat_and_the_customer_starts_afresh(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    await customer_writes(service, number, PHONE, "please delete my data after this")
    await eventually(lambda: _status(service, f"/api/inbox/conversations/{PHONE}/claim", key, "post", 200))
    replied = await service.client.post(f"/api/inbox/conversations/{PHONE}/reply", headers=bearer(key),
                                        json={"message": "Done, goodbye!"})
    assert replied.status_code == 200, replied.text
    await eventually(lambda: _receipts(service, workspace_id))

    deleted = await service.client.delete(f"/api/contacts/+{PHONE}", headers=bearer(key))
    assert deleted.status_code == 200, deleted.text
    assert deleted.json() == {"phone": PHONE, "deleted": True, "messages_deleted": 2, "error": None, "status": 200}
    for table in ("contacts", "conversations", "messages"):
        assert await service.db.fetchval(f"SELECT count(*) FROM {table} WHERE workspace_id = $1", workspace_id) == 0
    assert await service.db.fetchval("SELECT count(*) FROM receipts") == 0
    assert (await service.client.get(f"/api/contacts/{PHONE}", headers=bearer(key))).status_code == 404
    audit = (await service.client.get("/api/team/audit-log", headers=bearer(key))).json()["data"]
    assert audit[0]["action"] == "contact.deleted" and audit[0]["subject"] == "9198******01"
    assert PHONE not in json.dumps(audit), "the audit log keeps no trace of the number"
    again = await service.client.delete(f"/api/contacts/{PHONE}", headers=bearer(key))
    assert again.status_code == 404 and again.json() == {"error": "Contact not found"}

    # The chat's actor forgot the chat: the customer's next message makes a new one, unread and waiting.
    await customer_writes(service, number, PHONE, "hello again")
    fresh = await eventually(lambda: _chat_or_none(service, key))
    assert fresh["counts"]["from_customer"] == 1 and fresh["state"] in ("AI_ONLY", "HANDOFF_PENDING")

    contacts_key = (await builders.key(service.db, workspace_id, admin, ("contacts",))).key
    refused = await service.client.delete(f"/api/contacts/{PHONE}", headers=bearer(contacts_key))
    assert refused.status_code == 403


async def _status(service, path: str, key: str, method: str, status: int) -> bool:
    return (await service.client.request(method.upper(), path, headers=bearer(key))).status_code == status


async def _receipts(service, workspace_id: int) -> bool:
    return bool(await service.db.fetchval("SELECT count(*) FROM receipts r JOIN messages m ON m.id = r.message_id"
                                          " WHERE m.workspace_id = $1", workspace_id))


async def _chat_or_none(service, key: str):
    response = await service.client.get(f"/api/inbox/conversations/{PHONE}", headers=bearer(key))
    return response.json() if response.status_code == 200 else None


async def test_bulk_deletion_answers_each_phone(service):
    workspace_id, _, _, key = await scale_workspace(service.db)
    for phone in ("919899999911", "919899999912"):
        created = await service.client.post("/api/contacts", headers=bearer(key), json={"phone": phone, "name": "A"})
        assert created.status_code in (200, 201), created.text
    answer = await service.client.post("/api/contacts/bulk-delete", headers=bearer(key), json={
        "phones": ["919899999911", "+91 98999 99912", "919899999911", "919899999913", "12"]})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["deleted"] == 2
    assert [(r["phone"], r["deleted"], r["status"]) for r in body["results"]] == [
        ("919899999911", True, 200), ("919899999912", True, 200), ("919899999913", False, 404), ("12", False, 400)]
    assert await chat_count(service, workspace_id) == 0
    too_many = await service.client.post("/api/contacts/bulk-delete", headers=bearer(key),
                                         json={"phones": [f"9198{n:08d}" for n in range(501)]})
    assert too_many.status_code == 400 and "error" in too_many.json()


async def chat_count(service, workspace_id: int) -> int:
    return await service.db.fetchval("SELECT count(*) FROM contacts WHERE workspace_id = $1", workspace_id)


async def test_the_export_streams_every_contact_as_csv_or_json_lines(service):
    workspace_id, _, admin, key = await scale_workspace(service.db)
    names = ["Asha", "=HYPERLINK(\"http://evil\")", "Ravi, Jr."]
    for n, name in enumerate(names):
        await service.client.post("/api/contacts", headers=bearer(key), json={
            "phone": f"91989999992{n}", "name": name, "tags": ["vip", "b2b"] if n == 0 else []})

    exported = await service.client.get("/api/contacts/export", headers=bearer(key))
    assert exported.status_code == 200, exported.text
    assert exported.headers["content-type"].startswith("text/csv")
    assert exported.headers["content-disposition"] == f'attachment; filename="contacts-{workspace_id}.csv"'
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert [row["name"] for row in rows] == ["Asha", "'=HYPERLINK(\"http://evil\")", "Ravi, Jr."]
    assert rows[0]["tags"] in ("vip;b2b", "b2b;vip") and rows[0]["opted_out"] == "false"

    lines = await service.client.get("/api/contacts/export", headers=bearer(key), params={"format": "jsonl"})
    parsed = [json.loads(line) for line in lines.text.splitlines()]
    assert [c["name"] for c in parsed] == names and parsed[0]["phone"] == "919899999920"
    bad = await service.client.get("/api/contacts/export", headers=bearer(key), params={"format": "xml"})
    assert bad.status_code == 400 and bad.json() == {"error": "format must be csv or jsonl."}
    contacts_key = (await builders.key(service.db, workspace_id, admin, ("contacts",))).key
    assert (await service.client.get("/api/contacts/export", headers=bearer(contacts_key))).status_code == 403


async def test_an_assigned_only_key_deletes_only_the_contacts_of_chats_assigned_to_its_creator(service):
    # As its contact writes and reads: another member's customer is "Contact not found", and stays.
    workspace_id, number, admin, admin_key = await scale_workspace(service.db)
    agent = await builders.member(service.db, workspace_id, "agent", permissions=["inbox", "contacts_delete"])
    limited = (await builders.key(service.db, workspace_id, agent, ("contacts_delete", "inbox_assigned_only"))).key
    await customer_writes(service, number, PHONE, "hello")
    await eventually(lambda: _status(service, f"/api/inbox/conversations/{PHONE}", admin_key, "get", 200))
    refused = await service.client.delete(f"/api/contacts/{PHONE}", headers=bearer(limited))
    assert refused.status_code == 404 and refused.json() == {"error": "Contact not found"}
    in_bulk = await service.client.post("/api/contacts/bulk-delete", headers=bearer(limited),
                                        json={"phones": [PHONE]})
    assert in_bulk.json()["deleted"] == 0 and in_bulk.json()["results"][0]["status"] == 404
    assert await service.db.fetchval("SELECT count(*) FROM messages WHERE workspace_id = $1", workspace_id) == 1

    await service.client.post(f"/api/inbox/conversations/{PHONE}/claim", headers=bearer(admin_key))
    moved = await service.client.post(f"/api/inbox/conversations/{PHONE}/transfer", headers=bearer(admin_key),
                                      json={"to_user_id": agent})
    assert moved.status_code == 200, moved.text
    deleted = await service.client.delete(f"/api/contacts/{PHONE}", headers=bearer(limited))
    assert deleted.status_code == 200 and deleted.json()["deleted"] is True, deleted.text
