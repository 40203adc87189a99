"""The MCP JSON-RPC layer without I/O: what each body is answered, given a toolbox."""

from __future__ import annotations

import json

import msgspec
import pytest

from inbox_actors.use_cases import catalog
from inbox_http.mcp import protocol
from inbox_http.mcp.tool_result import ToolResult


class Tools:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    async def list_tools(self):
        return [{"name": "echo", "description": "Echo", "inputSchema": {"type": "object"}}]

    async def call_tool(self, name, arguments):
        self.calls.append((name, arguments))
        if name != "echo":
            return None
        if "fail" in arguments:
            return ToolResult(text="It failed.", is_error=True)
        return ToolResult(text="ok", data={"echo": arguments})


async def answer(body, tools: Tools | None = None) -> protocol.Reply:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return await protocol.answer(raw, tools or Tools())


async def test_a_tool_result_carries_its_content_structured_content_and_is_error():
    tools = Tools()
    ok = await answer({"jsonrpc": "2.0", "id": "a", "method": "tools/call",
                       "params": {"name": "echo", "arguments": {"x": 1}}}, tools)
    assert ok == protocol.Reply(200, {"jsonrpc": "2.0", "id": "a", "result": {
        "content": [{"type": "text", "text": "ok"}], "isError": False, "structuredContent": {"echo": {"x": 1}}}})
    failed = await answer({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                           "params": {"name": "echo", "arguments": {"fail": True}}}, tools)
    assert failed.body["result"] == {"content": [{"type": "text", "text": "It failed."}], "isError": True}
    missing_arguments = await answer({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo"}},
                                     tools)
    assert missing_arguments.status == 200 and tools.calls[-1] == ("echo", {})


@pytest.mark.parametrize("body, status, code", [
    (b"{", 400, protocol.PARSE_ERROR),
    (b"\xc3\x28", 400, protocol.PARSE_ERROR),
    ([], 400, protocol.INVALID_REQUEST),
    ([{"jsonrpc": "2.0", "id": 1, "method": "ping"}], 400, protocol.INVALID_REQUEST),
    ("ping", 400, protocol.INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": None, "method": "ping"}, 400, protocol.INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, 400, protocol.INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, 400, protocol.INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}}, 400, protocol.INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": 1, "method": "prompts/list"}, 200, protocol.METHOD_NOT_FOUND),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 1}}, 200, protocol.INVALID_PARAMS),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nope"}}, 200, protocol.INVALID_PARAMS),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": 3}}, 200,
     protocol.INVALID_PARAMS),
    ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 20250618}}, 200,
     protocol.INVALID_PARAMS),
])
async def test_each_error_path_has_its_code_and_status(body, status, code):
    reply = await answer(body)
    assert reply.status == status and reply.body["error"]["code"] == code, reply
    if status == 400:
        assert reply.body["id"] is None


async def test_notifications_and_responses_are_accepted_without_a_body_and_run_nothing():
    tools = Tools()
    for body in ({"jsonrpc": "2.0", "method": "notifications/initialized"},
                 {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "echo"}},
                 {"jsonrpc": "2.0", "id": 4, "error": {"code": -1, "message": "no"}}):
        assert await answer(body, tools) == protocol.Reply(202)
    assert tools.calls == []


async def test_a_whole_number_id_is_echoed_and_ping_answers_an_empty_result():
    assert (await answer({"jsonrpc": "2.0", "id": 7.0, "method": "ping"})).body == {
        "jsonrpc": "2.0", "id": 7.0, "result": {}}


def test_every_action_has_an_object_input_schema_its_struct_decodes_and_a_description():
    for action in catalog.ACTIONS:
        schema = catalog.input_schema(action)
        assert schema["type"] == "object" and schema["additionalProperties"] is False, action.name
        assert len(action.description) > 40, action.name
        examples = {"phone": "919876543210", "to": "919876543210", "text": "hello", "template": "welcome",
                    "tag": "vip", "name": "Asha", "to_user_id": 2, "broadcast_id": 1, "q": "basic plan"}
        required = {name: examples[name] for name in schema.get("required", ())}
        msgspec.convert(required, type=action.arguments)
    assert [a.name for a in catalog.ACTIONS if a.default_exposed] == [
        a.name for a in catalog.ACTIONS if a.kind is catalog.Kind.READ]
    assert all(not (a.default_exposed and a.default_needs_approval) for a in catalog.ACTIONS)
