"""`inbox-actors mcp token create|list|revoke`, run as a separate process: the token it prints opens POST /api/mcp
(stored as its SHA-256 only), the list never shows it, and a revoked one is refused at once."""

from __future__ import annotations

import hashlib

import pytest

from tests import builders
from tests.e2e.conftest import bearer
from tests.e2e.test_cli import cli, output

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@pytest.mark.slow
async def test_the_operator_makes_lists_and_revokes_a_token_the_endpoint_honours(service, database_url):
    workspace_id = await builders.workspace(service.db, "scale")
    member = await builders.member(service.db, workspace_id, "agent")
    ws, user = str(workspace_id), str(member)

    created = output(await cli(database_url, "mcp", "token", "create", "--workspace", ws, "--member", user,
                               "--name", "Claude Desktop"))
    assert created["token"].startswith("mcp_") and created["member_id"] == member
    stored = await service.db.fetchval("SELECT token_hash FROM mcp_tokens WHERE id = $1", created["id"])
    assert bytes(stored) == hashlib.sha256(created["token"].encode()).digest()
    assert (await service.client.post("/api/mcp", headers=bearer(created["token"]), json=PING)).status_code == 200

    listed = output(await cli(database_url, "mcp", "token", "list", "--workspace", ws))
    assert [(t["id"], t["name"], t["status"]) for t in listed["data"]] == [(created["id"], "Claude Desktop", "active")]
    assert created["token"] not in str(listed)

    revoked = output(await cli(database_url, "mcp", "token", "revoke", "--workspace", ws, "--id", str(created["id"])))
    assert revoked["status"] == "revoked"
    refused = await service.client.post("/api/mcp", headers=bearer(created["token"]), json=PING)
    assert refused.status_code == 401 and refused.json()["error"] == "invalid_token"


@pytest.mark.parametrize("args, message", [
    (["mcp", "token", "create", "--workspace", "999999", "--member", "1"], "no member 1 in workspace 999999"),
    (["mcp", "token", "create", "--workspace", "1", "--member", "1", "--name", " "], "name must be"),
    (["mcp", "token", "revoke", "--workspace", "999999", "--id", "1"], "no MCP token 1"),
    (["mcp", "token", "list", "--workspace", "999999"], "no workspace 999999"),
    (["mcp", "token", "create", "--workspace", "1"], "--member"),
])
async def test_bad_arguments_exit_2_with_a_message(database_url, args, message):
    result = await cli(database_url, *args)
    assert result.returncode == 2, result.stdout
    assert message in result.stderr.decode()
