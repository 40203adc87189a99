"""MCP over JSON-RPC 2.0, one POST at a time and no session: what a message body is answered.

The Streamable HTTP transport without its optional parts: every answer is one `application/json` body (no SSE
stream, no `Mcp-Session-Id`), which the official SDK clients accept unchanged.

- A request is answered 200 with its response, an error response included (-32601 method not found, -32602
  invalid params: JSON-RPC errors are the protocol's answers, not HTTP failures).
- A notification (no `id`), or a response (we never ask the client anything), is answered 202 without a body
  and has no effect: there is no session for `notifications/initialized` to open.
- A body that is not JSON (-32700), not a JSON-RPC 2.0 message (-32600), or a batch array is answered 400 with a
  single error response, id null. Batches are refused rather than run: MCP dropped JSON-RPC batching in
  2025-06-18, and every revision this server speaks is that one or later.
- `initialize` answers the client's protocol version when it is one of ours, else our latest.
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec

from inbox_http.mcp.tool_result import ToolResult

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

# Oldest to newest; a client asking for another one is offered the newest.
PROTOCOL_VERSIONS = ("2025-06-18", "2025-11-25")
LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[-1]
SERVER_INFO = {"name": "inbox-actors", "title": "Inbox Actors", "version": "0.1.0"}
INSTRUCTIONS = ("Tools of a shared WhatsApp team inbox. Phones are digits with country code. Read a chat "
                "(get_conversation, read_messages) before acting on it; a tool that fails says why in its result.")


class Toolbox(Protocol):
    """The tools of one caller: what it may list and call."""

    async def list_tools(self) -> list[dict[str, Any]]: ...

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult | None:
        """The tool's result; None when the caller has no tool of that name (unknown or not exposed)."""


class Reply(msgspec.Struct, frozen=True):
    status: int
    body: dict[str, Any] | None = None


class _InvalidParams(ValueError):
    pass


async def answer(raw: bytes, toolbox: Toolbox, *, protocol_version: str | None = None) -> Reply:
    """The reply to one POSTed message. `protocol_version` is the MCP-Protocol-Version header, which a client
    sends after initialize: one this server does not speak is 400 (as the transport requires); none means the
    client predates the header, and is served."""
    if protocol_version is not None and protocol_version not in PROTOCOL_VERSIONS:
        return Reply(400, _error(None, INVALID_REQUEST, f"Unsupported MCP-Protocol-Version {protocol_version!r}: "
                                                        f"this server speaks {', '.join(PROTOCOL_VERSIONS)}."))
    try:
        message = msgspec.json.decode(raw.decode("utf-8"))
    except (UnicodeDecodeError, msgspec.DecodeError):
        return Reply(400, _error(None, PARSE_ERROR, "Parse error: the body is not JSON (UTF-8)."))
    if isinstance(message, list):
        return Reply(400, _error(None, INVALID_REQUEST, "Invalid Request: batches are not supported; send one "
                                                        "JSON-RPC message per POST."))
    problem = _shape_problem(message)
    if problem is not None:
        return Reply(400, _error(None, INVALID_REQUEST, f"Invalid Request: {problem}."))
    if "id" not in message or "method" not in message:
        return Reply(202)  # a notification, or a response to a request we never made: nothing to answer
    request_id, method, params = message["id"], message["method"], message.get("params")
    try:
        if params is not None and not isinstance(params, dict):
            raise _InvalidParams("params must be an object")
        result = await _dispatch(method, params or {}, toolbox)
    except _InvalidParams as err:
        return Reply(200, _error(request_id, INVALID_PARAMS, f"Invalid params: {err}."))
    if result is None:
        return Reply(200, _error(request_id, METHOD_NOT_FOUND, f"Method not found: {method}."))
    return Reply(200, {"jsonrpc": "2.0", "id": request_id, "result": result})


def _shape_problem(message: Any) -> str | None:
    """Why `message` is not a JSON-RPC 2.0 request, notification or response (None when it is one)."""
    if not isinstance(message, dict):
        return "the body must be a JSON-RPC 2.0 message (an object)"
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "id" in message and not _valid_id(message["id"]):
        return "id must be a string or an integer"
    if "method" not in message:
        if "id" in message and ("result" in message) != ("error" in message):
            return None  # a response
        return "method is required"
    if not isinstance(message["method"], str):
        return "method must be a string"
    if "params" in message and not isinstance(message["params"], (dict, list)):
        return "params must be an object or an array"
    return None


def _valid_id(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, (str, int))


async def _dispatch(method: str, params: dict[str, Any], toolbox: Toolbox) -> dict[str, Any] | None:
    if method == "initialize":
        return _initialize(params)
    if method == "ping":
        return {}
    if method == "tools/list":
        if params.get("cursor") is not None:
            raise _InvalidParams("unknown cursor (every tool is on the first page)")
        return {"tools": await toolbox.list_tools()}
    if method == "tools/call":
        name, arguments = params.get("name"), params.get("arguments", {})
        if not isinstance(name, str):
            raise _InvalidParams("name (the tool's name, a string) is required")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise _InvalidParams("arguments must be an object")
        result = await toolbox.call_tool(name, arguments)
        if result is None:
            raise _InvalidParams(f"unknown tool {name!r} (tools/list names the tools this token may call)")
        return _tool_result(result)
    return None


def _initialize(params: dict[str, Any]) -> dict[str, Any]:
    asked = params.get("protocolVersion")
    if not isinstance(asked, str):
        raise _InvalidParams("protocolVersion (a string) is required")
    return {
        "protocolVersion": asked if asked in PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": SERVER_INFO,
        "instructions": INSTRUCTIONS,
    }


def _tool_result(result: ToolResult) -> dict[str, Any]:
    answer: dict[str, Any] = {"content": [{"type": "text", "text": result.text}], "isError": result.is_error}
    if isinstance(result.data, dict):
        answer["structuredContent"] = result.data
    return answer


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
