"""Running a connector action: the body decoded into the catalog action's arguments (strictly, as its
`inputSchema` says; a field left out is unset), then `inbox_actors.mcp.tools.run_action` for the API key's caller,
the same code MCP's `tools/call` runs. MCP's exposure and approval settings are MCP's own and do not apply here:
the key's scopes and its creator's permissions do (the route's guard checks them, and the action again).

A failed action changed nothing and answers in the stable-code convention:
  400 invalid_arguments   the body is not the action's arguments (not JSON, a missing or unknown field, a wrong
                          type, a value out of its rules), or the action found a value it cannot take
  403 permission_denied   the key's effective permissions lack the action's
  404 not_found           no such chat (or not one the caller may touch) or contact
  409 action_refused      the action is not possible now: the chat's state, the 24-hour window, a template the
                          platform refused, the cloud API switched off… (`details`: the platform's error, if any)
  503 service_unavailable a busy or failing part of the service; a write may still have happened: read first
"""

from __future__ import annotations

from typing import Any

import msgspec

from inbox_actors.connectors.messages import ConnectorRefusal
from inbox_actors.mcp.catalog import Action
from inbox_actors.mcp.messages import ActionCaller, Failure, ToolResult
from inbox_actors.mcp.tools import ToolDeps, run_action

# How each kind of failure an action reports is answered (status, stable code).
_ANSWERS = {
    Failure.INVALID: (400, "invalid_arguments"),
    Failure.PERMISSION: (403, "permission_denied"),
    Failure.NOT_FOUND: (404, "not_found"),
    Failure.REFUSED: (409, "action_refused"),
    Failure.UNAVAILABLE: (503, "service_unavailable"),
}


async def perform(deps: ToolDeps, caller: ActionCaller, action: Action, body: bytes) -> Any | ConnectorRefusal:
    """The action's result (a JSON object), or why it changed nothing."""
    try:
        arguments = msgspec.json.decode(body or b"null", type=action.arguments)
    except (msgspec.ValidationError, msgspec.DecodeError) as err:
        return ConnectorRefusal(400, "invalid_arguments", f"Invalid input for {action.name}: {_sentence(err)}")
    result = await run_action(deps, caller, action, msgspec.to_builtins(arguments))
    if result.is_error:
        return refusal_of(result)
    return result.data


def refusal_of(result: ToolResult) -> ConnectorRefusal:
    status, code = _ANSWERS[result.failure or Failure.REFUSED]
    # The sentences are written for MCP, where the caller is a token; here it is a key.
    text = result.text.replace("MCP token", "key")
    return ConnectorRefusal(status, code, text, details=result.data if status == 409 else None)


def _sentence(err: Exception) -> str:
    text = str(err) or "the body must be a JSON object"
    if text.startswith("Expected `object`, got `null`"):
        text = "the body must be a JSON object of the action's fields"
    return text if text.endswith(".") else f"{text}."
