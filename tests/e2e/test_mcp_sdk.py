"""The official MCP Python SDK client (`mcp.client.streamable_http`), unchanged, against `POST /api/mcp` over a
real socket: the handshake, the tool list, a read tool and a write tool, and the write's effect as the Reporting
API reports it."""

from __future__ import annotations

from contextlib import asynccontextmanager

import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer

PHONE = "919822200002"


@asynccontextmanager
async def connected(service, token: str):
    async with httpx2.AsyncClient(headers=bearer(token), timeout=30) as http, \
            streamable_http_client(f"{service.url}/api/mcp", http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        yield session


async def test_the_sdk_client_reads_a_chat_claims_it_and_the_reporting_api_sees_the_claim(service):
    workspace_id, phone_number_id, admin, key = await scale_workspace(service.db)
    await customer_writes(service, phone_number_id, PHONE, "Can a person help me?", name="Meera")
    token = (await service.client.post("/api/mcp/tokens", headers=bearer(key), json={"name": "Claude"})).json()
    exposed = await service.client.patch("/api/mcp/actions/claim_conversation", headers=bearer(key),
                                         json={"exposed": True})
    assert exposed.status_code == 200, exposed.text

    async with connected(service, token["token"]) as session:
        hello = await session.initialize()
        assert hello.server_info.name == "inbox-actors"
        assert hello.protocol_version == "2025-11-25"
        assert hello.capabilities.tools is not None

        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == {"list_conversations", "get_conversation", "read_messages", "unread_summary",
                              "list_templates", "list_broadcasts", "get_broadcast", "claim_conversation",
                              "quote_price", "search_bot_knowledge", "get_bot_usage"}
        assert tools["claim_conversation"].input_schema["required"] == ["phone"]

        chats = await session.call_tool("list_conversations", {"needs_reply": True})
        assert not chats.is_error, chats
        assert [chat["phone"] for chat in chats.structured_content["data"]] == [PHONE]
        assert chats.structured_content["data"][0]["claimed_by"] is None

        claimed = await session.call_tool("claim_conversation", {"phone": PHONE})
        assert not claimed.is_error, claimed
        assert claimed.structured_content["state"] == "HUMAN_ACTIVE"

        # A failure comes back as a result the model reads, not as an exception.
        again = await session.call_tool("get_conversation", {"phone": "919800000000"})
        assert again.is_error and "No such chat" in again.content[0].text

        # A tool that is not exposed is unknown to this token: a JSON-RPC error, raised by the SDK.
        with pytest.raises(MCPError) as hidden:
            await session.call_tool("send_text", {"to": PHONE, "text": "hi"})
        assert hidden.value.error.code == -32602

        await session.send_ping()

    reported = await service.client.get(f"/api/reporting/v1/conversations/{PHONE}", headers=bearer(key))
    assert reported.status_code == 200, reported.text
    assert reported.json()["state"] == "HUMAN_ACTIVE"
    assert reported.json()["claimed_by"]["user_id"] == admin
    history = await service.client.get(f"/api/reporting/v1/conversations/{PHONE}/assignment-history",
                                       headers=bearer(key))
    latest = history.json()["data"][0]
    assert latest["by"]["user_id"] == admin and latest["to"]["user_id"] == admin, latest


async def test_the_sdk_client_is_told_401_with_an_api_key(service):
    _, _, _, key = await scale_workspace(service.db)
    refused = []
    try:
        async with connected(service, key) as session:
            await session.initialize()
    except* MCPError as group:  # raised through the SDK's task groups
        refused.append(group)
    assert refused, "an API key opened an MCP session"
