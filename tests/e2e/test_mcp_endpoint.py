"""`POST /api/mcp` over real sockets with raw JSON-RPC: every refusal of the token and the plan, every JSON-RPC
error path, exposure and approval through the settings calls, and tool failures answered as results."""

from __future__ import annotations

import pytest

from inbox_actors.mcp import tokens
from inbox_actors.platform import templates
from tests import builders
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer

MCP = "/api/mcp"
PHONE = "919811100001"


async def mcp_token(service, key: str, name: str = "assistant") -> dict:
    created = await service.client.post("/api/mcp/tokens", headers=bearer(key), json={"name": name})
    assert created.status_code == 201, created.text
    return created.json()


async def rpc(service, token: str | None, message, *, status: int = 200):
    headers = bearer(token) if token else {}
    answer = await service.client.post(MCP, headers=headers, json=message)
    assert answer.status_code == status, answer.text
    return answer


async def call(service, token: str, method: str, params: dict | None = None, request_id: int | str = 1) -> dict:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    body = (await rpc(service, token, message)).json()
    assert body["jsonrpc"] == "2.0" and body["id"] == request_id, body
    return body


async def tool(service, token: str, name: str, arguments: dict | None = None) -> dict:
    body = await call(service, token, "tools/call", {"name": name, "arguments": arguments or {}})
    assert "result" in body, body
    return body["result"]


@pytest.fixture
async def workspace(service):
    """(workspace id, admin member id, full-access key, MCP token) of a Scale workspace with one chat."""
    workspace_id, phone_number_id, admin, key = await scale_workspace(service.db)
    await customer_writes(service, phone_number_id, PHONE, "Where is my order?")
    return workspace_id, admin, key, (await mcp_token(service, key))["token"]


async def test_a_missing_unknown_or_revoked_token_or_an_api_key_is_invalid_token(service, workspace):
    _, _, key, token = workspace
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}

    missing = await rpc(service, None, ping, status=401)
    assert missing.json()["error"] == "invalid_token"
    # RFC 9728: the challenge names where the OAuth connection flow starts (tests/e2e/test_mcp_oauth.py).
    assert missing.headers["WWW-Authenticate"] == \
        f'Bearer resource_metadata="{service.url}/.well-known/oauth-protected-resource/api/mcp"'
    for wrong in (key, "mcp_" + "A" * 43, "not even a token"):
        refused = await rpc(service, wrong, ping, status=401)
        assert refused.json()["error"] == "invalid_token", wrong
        assert refused.headers["WWW-Authenticate"].startswith("Bearer"), wrong
    assert (await call(service, token, "ping"))["result"] == {}

    listed = (await service.client.get("/api/mcp/tokens", headers=bearer(key))).json()["data"]
    assert [(t["name"], t["status"]) for t in listed] == [("assistant", "active")]
    assert token not in str(listed) and listed[0]["last_used_at"] is not None
    revoked = await service.client.post(f"/api/mcp/tokens/{listed[0]['id']}/revoke", headers=bearer(key))
    assert revoked.status_code == 200 and revoked.json()["status"] == "revoked"
    assert (await rpc(service, token, ping, status=401)).json()["error"] == "invalid_token"
    unknown = await service.client.post("/api/mcp/tokens/999999/revoke", headers=bearer(key))
    assert unknown.status_code == 404 and unknown.json()["error"] == "not_found"
    again = await service.client.post(f"/api/mcp/tokens/{listed[0]['id']}/revoke", headers=bearer(key))
    assert again.status_code == 200

    # Who created and revoked which token is in the team audit log (a repeated revoke adds nothing).
    log = (await service.client.get("/api/team/audit-log", headers=bearer(key))).json()["data"]
    entries = [(e["action"], e["subject"]) for e in log if e["action"].startswith("mcp_token.")]
    subject = f"mcp_token:{listed[0]['id']}"
    assert entries == [("mcp_token.revoked", subject), ("mcp_token.created", subject)]


async def test_only_scale_has_mcp_and_a_suspended_or_removed_member_is_refused(service):
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    for plan, code in (("starter", "api_not_in_plan"), ("growth", "api_access_not_enabled")):
        workspace_id = await builders.workspace(service.db, plan)
        member = await builders.member(service.db, workspace_id)
        issued = await tokens.create_token(service.db, workspace_id=workspace_id, member_id=member, name="cli")
        refused = await rpc(service, issued.token, ping, status=403)
        assert refused.json()["error"] == code, plan
        key = (await builders.key(service.db, workspace_id, member)).key
        settings = await service.client.post("/api/mcp/tokens", headers=bearer(key), json={"name": "x"})
        assert settings.status_code == 403, settings.text

    workspace_id = await builders.workspace(service.db, "scale")
    member = await builders.member(service.db, workspace_id, "agent")
    issued = await tokens.create_token(service.db, workspace_id=workspace_id, member_id=member, name="cli")
    assert (await call(service, issued.token, "ping"))["result"] == {}
    for status, code in (("suspended", "account_suspended"), ("removed", "membership_revoked")):
        await service.db.execute("UPDATE members SET status = $2 WHERE id = $1", member, status)
        assert (await rpc(service, issued.token, ping, status=403)).json()["error"] == code


async def test_json_rpc_errors_notifications_and_the_handshake(service, workspace):
    _, _, _, token = workspace
    headers = {**bearer(token), "Content-Type": "application/json"}

    async def raw(content: bytes, status: int) -> dict | None:
        answer = await service.client.post(MCP, headers=headers, content=content)
        assert answer.status_code == status, answer.text
        return answer.json() if answer.content else None

    parse = await raw(b'{"jsonrpc": "2.0", "id": 1, "method": ', 400)
    assert parse["id"] is None and parse["error"]["code"] == -32700
    assert (await raw(b"\xff\xfe", 400))["error"]["code"] == -32700
    for bad in (b"[]", b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', b"42", b'{"id": 1, "method": "ping"}',
                b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', b'{"jsonrpc": "2.0", "id": true, "method": "ping"}',
                b'{"jsonrpc": "2.0", "id": 1, "method": 7}', b'{"jsonrpc": "2.0", "id": 1}',
                b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": "x"}'):
        refused = await raw(bad, 400)
        assert refused["id"] is None and refused["error"]["code"] == -32600, bad

    assert (await call(service, token, "resources/list"))["error"]["code"] == -32601
    assert (await call(service, token, "tools/call", {"arguments": {}}))["error"]["code"] == -32602
    assert (await call(service, token, "tools/call", {"name": "get_conversation", "arguments": [1]}))[
        "error"]["code"] == -32602
    assert (await call(service, token, "tools/list", {"cursor": "next"}))["error"]["code"] == -32602
    assert (await call(service, token, "initialize", {}))["error"]["code"] == -32602
    listed = await rpc(service, token, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": [1]})
    assert listed.json()["error"]["code"] == -32602

    # Notifications and responses: 202, no body, whatever their method.
    for message in ({"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "unread_summary"}},
                    {"jsonrpc": "2.0", "id": 9, "result": {}}):
        accepted = await rpc(service, token, message, status=202)
        assert accepted.content == b"", message

    hello = {"capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
    for asked, agreed in (("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"), ("2024-11-05", "2025-11-25"),
                          ("1999-01-01", "2025-11-25")):
        result = (await call(service, token, "initialize", {**hello, "protocolVersion": asked}, "init"))["result"]
        assert result["protocolVersion"] == agreed, asked
        assert result["capabilities"] == {"tools": {"listChanged": False}}
        assert result["serverInfo"]["name"] == "inbox-actors"

    # After initialize a client names the version it agreed in MCP-Protocol-Version; one not spoken here is 400.
    for version, status in (("2025-06-18", 200), ("2025-11-25", 200), ("2024-11-05", 400), ("latest", 400)):
        answer = await service.client.post(MCP, headers={**bearer(token), "MCP-Protocol-Version": version},
                                           json={"jsonrpc": "2.0", "id": 5, "method": "ping"})
        assert answer.status_code == status, (version, answer.text)
        if status == 400:
            assert answer.json()["error"]["code"] == -32600 and version in answer.json()["error"]["message"]

    for method in ("GET", "DELETE"):
        answer = await service.client.request(method, MCP, headers=bearer(token))
        assert answer.status_code == 405, method


async def test_only_exposed_actions_are_tools_and_approval_needing_ones_cannot_be_exposed(service, workspace):
    _, _, key, token = workspace
    settings = (await service.client.get("/api/mcp/actions", headers=bearer(key))).json()["data"]
    by_name = {action["name"]: action for action in settings}
    assert {name for name, a in by_name.items() if a["exposed"]} == {
        "list_conversations", "get_conversation", "read_messages", "unread_summary", "list_templates",
        "list_broadcasts", "get_broadcast", "quote_price", "search_bot_knowledge", "get_bot_usage"}
    assert {name for name, a in by_name.items() if a["needs_approval"]} == {
        "send_text", "send_template", "reply_in_chat", "send_broadcast"}

    tools = (await call(service, token, "tools/list"))["result"]["tools"]
    assert [t["name"] for t in tools] == ["list_conversations", "get_conversation", "read_messages",
                                          "unread_summary", "list_templates", "list_broadcasts", "get_broadcast",
                                          "quote_price", "search_bot_knowledge", "get_bot_usage"]
    assert all(t["inputSchema"]["type"] == "object" and t["description"] for t in tools)

    hidden = await call(service, token, "tools/call", {"name": "claim_conversation", "arguments": {"phone": PHONE}})
    assert hidden["error"]["code"] == -32602 and "claim_conversation" in hidden["error"]["message"]
    unknown = await call(service, token, "tools/call", {"name": "drop_tables", "arguments": {}})
    assert unknown["error"]["code"] == -32602

    refused = await service.client.patch("/api/mcp/actions/send_text", headers=bearer(key), json={"exposed": True})
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"] == "action_needs_approval" and "approval" in refused.json()["message"]
    assert "send_text" not in [t["name"] for t in (await call(service, token, "tools/list"))["result"]["tools"]]
    missing = await service.client.patch("/api/mcp/actions/launch_rockets", headers=bearer(key), json={})
    assert missing.status_code == 404

    lifted = await service.client.patch("/api/mcp/actions/send_text", headers=bearer(key),
                                        json={"exposed": True, "needs_approval": False})
    assert lifted.status_code == 200, lifted.text
    assert lifted.json()["exposed"] is True and lifted.json()["needs_approval"] is False
    back = await service.client.patch("/api/mcp/actions/send_text", headers=bearer(key), json={"needs_approval": True})
    assert back.status_code == 409 and back.json()["error"] == "action_needs_approval"

    sent = await tool(service, token, "send_text", {"to": PHONE, "text": "It ships today."})
    assert sent["isError"] is False, sent
    assert sent["structuredContent"]["messageId"].startswith("wamid.")
    thread = await service.client.get(f"/api/reporting/v1/conversations/{PHONE}/messages", headers=bearer(key))
    last = thread.json()["data"][-1]
    assert last["text"] == "It ships today." and last["sender_type"] == "system"
    assert last["sender_label"] == "MCP: assistant"

    hide = await service.client.patch("/api/mcp/actions/read_messages", headers=bearer(key), json={"exposed": False})
    assert hide.status_code == 200
    log = (await service.client.get("/api/team/audit-log", headers=bearer(key),
                                    params={"action": "mcp_action.changed"})).json()["data"]
    # Newest first; the refused changes (409) and the one that changed nothing are not there.
    assert [(e["subject"], e["details"]["exposed"], e["details"]["needs_approval"]) for e in log] == [
        ("mcp_action:read_messages", False, False), ("mcp_action:send_text", True, False)]
    gone = await call(service, token, "tools/call", {"name": "read_messages", "arguments": {"phone": PHONE}})
    assert gone["error"]["code"] == -32602


async def test_tool_failures_are_results_with_is_error(service, workspace):
    workspace_id, _, key, token = workspace
    for name, arguments, words in (
            ("get_conversation", {"phone": "919800000000"}, "No such chat"),
            ("get_conversation", {}, "Invalid arguments"),
            ("get_conversation", {"phone": PHONE, "extra": 1}, "Invalid arguments"),
            ("read_messages", {"phone": PHONE, "cursor": "forged"}, "cursor"),
            ("list_conversations", {"limit": 500}, "Invalid arguments")):
        result = await tool(service, token, name, arguments)
        assert result["isError"] is True, (name, arguments, result)
        assert words in result["content"][0]["text"], (name, result)

    # An action the chat's state does not allow: nobody has claimed it, so there is nothing to release.
    await service.client.patch("/api/mcp/actions/release_conversation", headers=bearer(key), json={"exposed": True})
    released = await tool(service, token, "release_conversation", {"phone": PHONE})
    assert released["isError"] is True and "HANDOFF_PENDING" in released["content"][0]["text"], released

    # The token acts with its member's permissions, checked per tool.
    reader = await builders.member(service.db, workspace_id, "agent", permissions=["templates"])
    limited = await tokens.create_token(service.db, workspace_id=workspace_id, member_id=reader, name="limited")
    denied = await tool(service, limited.token, "list_conversations")
    assert denied["isError"] is True and "inbox:read or contacts:read" in denied["content"][0]["text"]
    await templates.add_template(service.db, workspace_id=workspace_id, name="ping", language="en", body="Ping")
    listed = await tool(service, limited.token, "list_templates")
    assert listed["isError"] is False and [t["name"] for t in listed["structuredContent"]["data"]] == ["ping"]


async def test_read_tools_answer_what_the_reporting_api_does(service, workspace):
    _, _, key, token = workspace
    chats = await tool(service, token, "list_conversations", {"q": "Asha"})
    assert chats["isError"] is False, chats
    assert [c["phone"] for c in chats["structuredContent"]["data"]] == [PHONE]
    messages = await tool(service, token, "read_messages", {"phone": "+91 98111 00001"})
    assert [m["text"] for m in messages["structuredContent"]["data"]][-1] == "Where is my order?"
    summary = await tool(service, token, "unread_summary")
    reporting = await service.client.get("/api/reporting/v1/conversations/unread-summary", headers=bearer(key))
    assert summary["structuredContent"]["unread_chats"] == reporting.json()["unread_chats"] == 1
