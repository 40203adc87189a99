"""The team audit log over real sockets, and the import of an earlier system's log from the command line: team
actions on chats, the roster, the SLA policy and API keys recorded with who, how and when; read newest first with
audit_view, filtered and paged; an imported log becoming assignment history from before detailed_since."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from tests import builders
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.e2e.test_cli import cli, output
from tests.e2e.test_key_management import session_of
from tests.waiting import eventually

AUDIT = "/api/team/audit-log"


async def test_team_actions_are_recorded_with_who_how_and_when(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    admin_key_id = await service.db.fetchval("SELECT id FROM api_keys WHERE workspace_id = $1", workspace_id)
    phone = "919877777701"
    chat = f"/api/inbox/conversations/{phone}"
    await customer_writes(service, number, phone, "a person please")
    await eventually(lambda: _ok(service.client.post(f"{chat}/claim", headers=bearer(key))))
    agent = (await service.client.post("/api/team/members", headers=bearer(key),
                                       json={"name": "Ravi", "role": "agent"})).json()["user_id"]
    await service.client.post(f"{chat}/transfer", headers=bearer(key), json={"to_user_id": agent, "reason": "VIP"})
    await service.client.post(f"/api/team/members/{agent}/suspend", headers=bearer(key))
    await service.client.put("/api/team/sla", headers=bearer(key), json={"sla_seconds": 600})
    session = await session_of(service.db, admin)
    created = await service.client.post("/api/keys", headers=session, json={"name": "zap", "scopes": ["inbox"]})
    assert created.status_code == 201, created.text
    await service.client.post(f"/api/keys/{created.json()['id']}/revoke", headers=session)

    auditor = (await builders.key(service.db, workspace_id, admin, ("audit_view",))).key
    log = await service.client.get(AUDIT, headers=bearer(auditor))
    assert log.status_code == 200, log.text
    entries = log.json()["data"]
    # Newest first; the keys the operator's command line made (the workspace's first, the auditor's) are there too.
    assert [(e["action"], e["via"]) for e in entries] == [
        ("key.created", "operator"), ("key.revoked", f"member:{admin}"), ("key.created", f"member:{admin}"),
        ("sla.changed", f"api_key:{admin_key_id}"), ("member.suspended", f"api_key:{admin_key_id}"),
        ("chat.transferred", f"api_key:{admin_key_id}"), ("member.added", f"api_key:{admin_key_id}"),
        ("chat.claimed", f"api_key:{admin_key_id}"), ("key.created", "operator")]
    assert entries[0]["actor"] is None and entries[0]["details"]["owner"] == admin
    by_action = {e["action"]: e for e in reversed(entries)}  # the newest of each action
    claimed = by_action["chat.claimed"]
    assert (claimed["subject"], claimed["actor"]["user_id"], claimed["via"]) == \
        (phone, admin, f"api_key:{admin_key_id}")
    assert by_action["chat.transferred"]["details"] == {"from": admin, "to": agent, "reason": "VIP"}
    assert by_action["member.suspended"]["subject"] == f"member:{agent}"
    assert by_action["sla.changed"]["details"] == {"sla_seconds": 600, "business_hours": False}
    revoked = by_action["key.revoked"]
    assert (revoked["subject"], revoked["via"]) == (f"key:{created.json()['id']}", f"member:{admin}")

    only = (await service.client.get(AUDIT, headers=bearer(auditor), params={"action": "chat.claimed"})).json()
    assert [e["id"] for e in only["data"]] == [claimed["id"]]
    page = (await service.client.get(AUDIT, headers=bearer(auditor), params={"limit": 5})).json()
    rest = (await service.client.get(AUDIT, headers=bearer(auditor),
                                     params={"limit": 5, "cursor": page["next_cursor"]})).json()
    assert [e["id"] for e in page["data"] + rest["data"]] == [e["id"] for e in entries] and not rest["next_cursor"]
    bad = await service.client.get(AUDIT, headers=bearer(auditor), params={"action": "everything"})
    assert bad.status_code == 400 and bad.json()["error"], bad.text
    team_only = (await builders.key(service.db, workspace_id, admin, ("team_management",))).key
    refused = await service.client.get(AUDIT, headers=bearer(team_only))
    assert refused.status_code == 403 and refused.json()["error"] == "scope_denied"


async def _ok(request) -> bool:
    return (await request).status_code == 200


async def test_an_earlier_audit_log_becomes_assignment_history_before_detailed_since(db, database_url, tmp_path):
    workspace_id = await builders.workspace(db)
    first, second = await builders.member(db, workspace_id), await builders.member(db, workspace_id, "agent")
    phone = "919877777711"
    contact = await db.fetchval("INSERT INTO contacts (workspace_id, phone, name) VALUES ($1, $2, 'Asha')"
                                " RETURNING id", workspace_id, phone)
    chat = await db.fetchval("INSERT INTO conversations (workspace_id, phone, contact_id, last_activity_at)"
                             " VALUES ($1, $2, $3, now()) RETURNING id", workspace_id, phone, contact)
    lines = [
        {"at": "2025-03-01T10:00:00Z", "phone": phone, "event": "claimed", "to_user_id": first, "by_user_id": first},
        {"at": "2025-03-01T11:00:00Z", "phone": f"+{phone}", "event": "transferred", "from_user_id": first,
         "to_user_id": second, "by_user_id": first, "reason": "shift change"},
        {"at": "2025-03-02T09:00:00Z", "phone": "919800000000", "event": "released"},        # no such chat
        {"at": "2025-03-02T09:00:00Z", "phone": phone, "event": "claimed", "to_user_id": 999999},  # no such member
        {"at": datetime.now(timezone.utc).isoformat(), "phone": phone, "event": "released"},  # after detailed_since
        {"at": "2025-03-02T09:00:00Z", "phone": phone, "event": "resolved"},                 # not in an audit log
    ]
    path = tmp_path / "audit.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\nnot json\n")

    report = output(await cli(database_url, "import", "audit-log", str(path), "--workspace", str(workspace_id)))
    assert (report["lines"], report["imported"], report["already_imported"], report["skipped"]) == (7, 2, 0, 5)
    assert [s["line"] for s in report["first_skipped"]] == [3, 4, 5, 6, 7]
    assert "detailed_since" in report["first_skipped"][2]["reason"]
    rows = await db.fetch("SELECT event, from_member, to_member, by_member, reason, source FROM assignment_events"
                          " WHERE conversation_id = $1 ORDER BY at", chat)
    assert [tuple(row) for row in rows] == [("claimed", None, first, first, None, "audit"),
                                            ("transferred", first, second, first, "shift change", "audit")]
    again = output(await cli(database_url, "import", "audit-log", str(path), "--workspace", str(workspace_id)))
    assert (again["imported"], again["already_imported"]) == (0, 2), "importing the same file adds nothing"
    missing = await cli(database_url, "import", "audit-log", str(path), "--workspace", "999999")
    assert missing.returncode == 2 and b"no workspace" in missing.stderr
