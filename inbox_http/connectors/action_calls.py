"""Running a connector action: the body decoded into the catalog action's arguments (strictly, as its
`inputSchema` says; a field left out is unset), then `inbox_actors.use_cases.run.run_action` for the API key's caller,
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

from inbox_actors.connectors.model import ConnectorRefusal
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.catalog import Action
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Reason, Refused
from inbox_actors.use_cases.run import run_action

# How each reason an action changed nothing is answered (status, stable code).
_ANSWERS = {
    Reason.INVALID: (400, "invalid_arguments"),
    Reason.PERMISSION: (403, "permission_denied"),
    Reason.NOT_FOUND: (404, "not_found"),
    Reason.REFUSED: (409, "action_refused"),
    Reason.UNAVAILABLE: (503, "service_unavailable"),
}


async def perform(deps: UseCaseDeps, caller: Caller, action: Action, body: bytes) -> Any | ConnectorRefusal:
    """The action's result (a JSON object), or why it changed nothing."""
    try:
        arguments = msgspec.json.decode(body or b"null", type=action.arguments)
    except (msgspec.ValidationError, msgspec.DecodeError) as err:
        return ConnectorRefusal(400, "invalid_arguments", f"Invalid input for {action.name}: {_sentence(err)}")
    outcome = await run_action(deps, caller, action, msgspec.to_builtins(arguments))
    if isinstance(outcome, Refused):
        return refusal_of(outcome)
    return outcome.data


def refusal_of(refused: Refused) -> ConnectorRefusal:
    status, code = _ANSWERS[refused.reason]
    text = refused.message
    if refused.state:
        text = f"{text.rstrip('.')} (the chat is {refused.state})."
    return ConnectorRefusal(status, code, text, details=refused.data if status == 409 else None)


def _sentence(err: Exception) -> str:
    text = str(err) or "the body must be a JSON object"
    if text.startswith("Expected `object`, got `null`"):
        text = "the body must be a JSON object of the action's fields"
    return text if text.endswith(".") else f"{text}."
