"""Importing web-client chats from the command line, then reading and using them over real sockets: the chats
arrive as history of channel web_client, and the channel's rule (text only) applies to them."""

from __future__ import annotations

import json

from tests import builders
from tests.e2e.chat_helpers import scale_workspace
from tests.e2e.conftest import bearer
from tests.e2e.test_cli import cli, output

PHONE, OTHER = "919811111101", "919811111102"


async def test_web_chats_become_history_and_their_channel_rules_apply(service, database_url, tmp_path):
    workspace_id, _, admin, key = await scale_workspace(service.db)
    agent = await builders.member(service.db, workspace_id, "agent")
    chats = [
        {"phone": PHONE, "name": "Asha", "messages": [
            {"at": "2026-05-01T10:00:00Z", "from": "customer", "text": "Do you ship to Pune?"},
            {"at": "2026-05-01T10:00:05Z", "from": "bot", "text": "Yes, in 2 days."},
            {"at": "2026-05-01T10:03:00Z", "from": "agent", "text": "Anything else?", "user_id": agent}]},
        {"phone": f"+{OTHER}", "messages": [{"at": "2026-05-02T09:00:00Z", "from": "customer", "text": "Hi"}]},
        {"phone": "919811111103", "messages": []},                                                 # no messages
        {"phone": "919811111104", "messages": [{"at": "2026-05-02T09:00:00Z", "from": "agent", "text": "x",
                                                "user_id": 999999}]},                              # no such member
    ]
    path = tmp_path / "web.jsonl"
    path.write_text("\n".join(json.dumps(chat) for chat in chats) + "\n{\"phone\": 1}\n")
    report = output(await cli(database_url, "import", "web-chats", str(path), "--workspace", str(workspace_id)))
    assert (report["lines"], report["imported_chats"], report["imported_messages"], report["skipped"]) == (5, 2, 4, 3)
    assert [s["line"] for s in report["first_skipped"]] == [3, 4, 5]
    again = output(await cli(database_url, "import", "web-chats", str(path), "--workspace", str(workspace_id)))
    assert again["imported_chats"] == 0 and "already has a chat" in again["first_skipped"][0]["reason"]

    detail = await service.client.get(f"/api/reporting/v1/conversations/{PHONE}", headers=bearer(key))
    assert detail.status_code == 200, detail.text
    chat = detail.json()
    assert (chat["channel"], chat["state"], chat["needs_reply"], chat["unread_count"]) == ("web_client", "AI_ONLY",
                                                                                        False, 0)
    assert chat["counts"] == {"messages": 3, "from_customer": 1, "from_bot": 1}
    assert chat["resolved_at"].startswith("2026-05-01T10:03:00") and chat["contact"]["name"] == "Asha"
    thread = (await service.client.get(f"/api/reporting/v1/conversations/{PHONE}/messages",
                                       headers=bearer(key))).json()
    assert [m["text"] for m in thread["data"]] == ["Do you ship to Pune?", "Yes, in 2 days.", "Anything else?"]

    template = await service.client.post("/api/send-message", headers=bearer(key), json={
        "to": PHONE, "type": "template", "template": {"name": "ping", "language": "en"}})
    assert template.status_code == 400
    assert template.json() == {"error": "Only text messages can be sent to a chat imported from a web-client session."}
    missing = await cli(database_url, "import", "web-chats", str(path), "--workspace", "999999")
    assert missing.returncode == 2 and b"no workspace" in missing.stderr
