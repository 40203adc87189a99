"""MCP: `POST /api/mcp` (JSON-RPC 2.0, no session) and its settings, `/api/mcp/tokens` and `/api/mcp/actions`.

`POST /api/mcp` takes an MCP token only (`inbox_actors.mcp.tokens`), never an API key: a missing, unknown,
expired or revoked token, or an API key, is 401 invalid_token with `WWW-Authenticate: Bearer resource_metadata=…`
(where an MCP client starts the OAuth connection flow, `inbox_http.oauth`). Then the plan (Scale only:
403 api_not_in_plan on Starter, api_access_not_enabled on Growth) and the token's member (account_suspended,
membership_revoked), as the auth ladder has them. The per-IP ceiling applies as on every route. What the body is
answered is `inbox_http.mcp.protocol`'s; the tools are the workspace's exposed catalog actions, run with the
member's permissions. `GET` and `DELETE` on the path are 405: there is no SSE stream and no session to end.

The settings calls are the full API's, for keys and members' dashboard sessions alike; each binds one of MCP's
settings use cases (`use_cases/mcp_settings.py`: scope `settings`, reads also `settings:read`; a session on a plan
without MCP gets the endpoint's plan refusal). Tokens are made for the caller's own member (the operator's CLI
makes them for any member): `inbox-actors mcp token create`.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.domain.auth_ladder import ErrorStyle, RoutePolicy
from inbox_actors.domain.plans import ApiTier
from inbox_actors.mcp import tokens
from inbox_actors.use_cases import mcp_settings
from inbox_actors.use_cases import tool_exposure as exposure
from inbox_actors.use_cases.caller import Caller
from inbox_http.contract import answers, body_of, in_path, takes
from inbox_http.dependencies import dependencies
from inbox_http.encoding import json_response
from inbox_http.errors import refusal_response, stable_error
from inbox_http.guard import (
    bearer_token,
    client_ip,
    guarded,
    ip_limited,
    rate_bucket_address,
    responds,
)
from inbox_http.mcp import protocol
from inbox_http.mcp.toolbox import WorkspaceToolbox
from inbox_http.oauth import addresses
from inbox_http.outcome_answers import run_route

blueprint = Blueprint("mcp", __name__, url_prefix="/api/mcp")

_MAX_TOKEN_LENGTH = 512


# -- the endpoint --------------------------------------------------------------------------------------------

_ID = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
# The envelope this route checks (anything else is 400); what a method makes of its params is answered in the
# JSON-RPC response, 200.
MESSAGE_SCHEMA = {
    "type": "object",
    "description": "One JSON-RPC 2.0 message: a request (with id), a notification (without), or a response. "
                   "Methods: initialize, ping, tools/list, tools/call; notifications are accepted. Batches "
                   "(arrays) are refused.",
    "required": ["jsonrpc"],
    "properties": {"jsonrpc": {"const": "2.0"}, "id": _ID, "method": {"type": "string"},
                   "params": {"type": ["object", "array"]}},
    "anyOf": [{"required": ["method"]}, {"required": ["id", "result"], "not": {"required": ["error"]}},
              {"required": ["id", "error"], "not": {"required": ["result"]}}],
    "example": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
}
_RESPONSE = {
    "type": "object", "required": ["jsonrpc", "id"],
    "properties": {
        "jsonrpc": {"const": "2.0"}, "id": {"anyOf": [_ID, {"type": "null"}]}, "result": {"type": "object"},
        "error": {"type": "object", "required": ["code", "message"],
                  "properties": {"code": {"type": "integer"}, "message": {"type": "string"}}},
    },
}


def _json(description: str, schema: dict) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


_STABLE_ERROR = {"$ref": "#/components/schemas/StableError"}
_SENTENCE_ERROR = {"$ref": "#/components/schemas/SentenceError"}
ENDPOINT_RESPONSES = {
    "200": _json("The JSON-RPC response to a request: its result, or its error (-32601 method not found, -32602 "
                 "invalid params, an unknown or unexposed tool included); a tool's own failure is a result with "
                 "isError true", _RESPONSE),
    "202": {"description": "A notification or a response: accepted, no body"},
    "400": _json("Not JSON (-32700), not a JSON-RPC 2.0 message, a batch, or an MCP-Protocol-Version header this "
                 "server does not speak (-32600): one error response, id null", _RESPONSE),
    "401": {**_json("invalid_token: no MCP token, an unknown or revoked one, or an API key",
                    {"allOf": [_STABLE_ERROR, {"properties": {"error": {"const": "invalid_token"}}}]}),
            "headers": {"WWW-Authenticate": {"schema": {"type": "string"}, "required": True}}},
    "403": _json("The plan has no MCP (api_not_in_plan, api_access_not_enabled), or the token's member is "
                 "suspended or removed", _STABLE_ERROR),
    "429": _json("Over the per-IP ceiling", _SENTENCE_ERROR),
}


@blueprint.post("")
@takes(MESSAGE_SCHEMA)
async def endpoint():
    """Model Context Protocol: one JSON-RPC 2.0 message per POST, answered as JSON; MCP token, not an API key."""
    state = dependencies()
    admission = await state.addresses.admit(rate_bucket_address(client_ip()), state.settings.ip_limit_per_minute)
    if not admission.allowed:
        return ip_limited(admission)
    token = bearer_token(request.headers.get("Authorization"))
    holder = None
    if token is not None and len(token) <= _MAX_TOKEN_LENGTH:
        holder = await tokens.find_holder(state.db, token, state.clock.now())
    if holder is None:
        challenge = {"WWW-Authenticate": addresses.bearer_challenge(addresses.origin(request.scheme, request.host),
                                                                     invalid_token=token is not None)}
        if token is None:
            return stable_error(401, "invalid_token", "An MCP token is required: send Authorization: Bearer <token>.",
                                headers=challenge)
        return stable_error(401, "invalid_token", "The MCP token is unknown, expired or revoked (an API key is not "
                                                  "an MCP token).", headers=challenge)
    refusal = tokens.holder_refusal(holder)
    if refusal is not None:
        return refusal_response(refusal)
    toolbox = WorkspaceToolbox(state.use_case_deps, Caller.of_mcp_token(holder), only=holder.actions)
    reply = await protocol.answer(await request.get_data(), toolbox,
                                  protocol_version=request.headers.get("MCP-Protocol-Version"))
    if reply.body is None:
        return "", reply.status
    return json_response(reply.body, reply.status)


# Read by the route list and the OpenAPI document; the endpoint checks its own token (above), not the guard.
endpoint.route_policy = RoutePolicy(tier=ApiTier.FULL, errors=ErrorStyle.STABLE)  # type: ignore[attr-defined]
endpoint.openapi_responses = ENDPOINT_RESPONSES  # type: ignore[attr-defined]


# -- settings: tokens ---------------------------------------------------------------------------------------


@blueprint.get("/tokens")
@responds(mcp_settings.TokenList)
@guarded(tier=ApiTier.FULL, use_case=mcp_settings.LIST_TOKENS, dashboard=True)
async def list_tokens():
    """The workspace's MCP tokens, newest first (never a plaintext or a hash)."""
    return await run_route(mcp_settings.LIST_TOKENS)


@blueprint.post("/tokens")
@responds(tokens.IssuedToken, 201)
@guarded(tier=ApiTier.FULL, use_case=mcp_settings.CREATE_TOKEN, dashboard=True)
@takes(body_of(mcp_settings.CREATE_TOKEN, path=()))
async def create_token():
    """Create an MCP token acting as your member; its plaintext is in this answer only."""
    return await run_route(mcp_settings.CREATE_TOKEN, 201, body=True)


@blueprint.post("/tokens/<id:token_id>/revoke")
@responds(tokens.TokenView)
@guarded(tier=ApiTier.FULL, use_case=mcp_settings.REVOKE_TOKEN, dashboard=True)
@answers(404)
async def revoke_token(token_id: int):
    """Revoke an MCP token at once (revoking it again changes nothing)."""
    return await run_route(mcp_settings.REVOKE_TOKEN, token_id=token_id)


# -- settings: actions --------------------------------------------------------------------------------------


@blueprint.get("/actions")
@responds(exposure.ActionSettings)
@guarded(tier=ApiTier.FULL, use_case=mcp_settings.LIST_ACTIONS, dashboard=True)
async def list_actions():
    """The action catalog: each action's tool description, permissions, and whether it is exposed over MCP or
    needs approval in the app."""
    return await run_route(mcp_settings.LIST_ACTIONS)


@blueprint.patch("/actions/<name>")
@responds(exposure.ActionSetting)
@guarded(tier=ApiTier.FULL, use_case=mcp_settings.CHANGE_ACTION, dashboard=True)
@takes(body_of(mcp_settings.CHANGE_ACTION, path=("name",)))
@answers(404, 409)
@in_path(name={"type": "string", "pattern": "^[a-z_]{1,64}$", "example": "claim_conversation"})
async def change_action(name: str):
    """Expose or hide an action, or require approval for it: {exposed?, needs_approval?}. An action needing
    approval cannot be exposed (409 action_needs_approval)."""
    return await run_route(mcp_settings.CHANGE_ACTION, body=True, name=name)
