"""MCP's settings as use cases: the workspace's MCP tokens (list, create, revoke) and which catalog actions it
exposes as tools or holds for approval (list, change). Each needs the `settings` permission (a read also takes
`settings:read`).

MCP is the full API's, so these answer a plan without it as the MCP endpoint does (`tokens.plan_refusal`): a
member's session reaches them on any plan. The rules are the MCP area's: a token's name and owner
(`mcp/tokens.py`), an action needing approval never exposed (`tool_exposure.py`). A token is made for the caller's
own member; the operator's CLI makes them for any member.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Annotated

import msgspec

from inbox_actors.mcp import oauth_codes, tokens
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases import tool_exposure as exposure
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.chat_reads import NoArguments
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import BIGINT_MAX
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused
from inbox_actors.use_cases.use_case import Kind, UseCase

NO_SUCH_TOKEN = Refused(Reason.NOT_FOUND, "No such MCP token in this workspace.", 404, "not_found")


class TokenList(msgspec.Struct, frozen=True):
    data: list[tokens.TokenView]


class NewToken(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    # Judged by `tokens.token_name` (400 invalid_name), which trims it first and which the CLI's tokens go
    # through too; described here for the contract.
    name: Annotated[str, msgspec.Meta(
        description="What the token is for, as the list shows it.",
        extra_json_schema={"minLength": 1, "maxLength": tokens.MAX_NAME, "pattern": tokens.NAME_PATTERN})]


class OneToken(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    # Any whole number: one no token has (0, beyond bigint) is answered as any missing token is, 404 not_found.
    token_id: Annotated[int, msgspec.Meta(description="The token's id.")]


class ActionChange(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Fields left out keep their value."""

    name: Annotated[str, msgspec.Meta(description="The catalog action's name.", examples=["claim_conversation"])]
    exposed: bool | msgspec.UnsetType = msgspec.UNSET
    needs_approval: bool | msgspec.UnsetType = msgspec.UNSET


Handler = Callable[[UseCaseDeps, Caller, msgspec.Struct], Awaitable[Outcome]]


def _on_mcp_plans(handler: Handler) -> Handler:
    """The handler, for a workspace whose plan has MCP; the endpoint's plan refusal for any other."""
    @functools.wraps(handler)
    async def checked(deps: UseCaseDeps, caller: Caller, a) -> Outcome:
        refusal = tokens.plan_refusal(caller.plan)
        if refusal is not None:
            return Refused(Reason.REFUSED, refusal.message or refusal.error, refusal.status, refusal.error)
        return await handler(deps, caller, a)

    return checked


@_on_mcp_plans
async def _list_tokens(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    """Newest first, never a plaintext or a hash."""
    return Done(TokenList(await tokens.list_tokens(deps.db, caller.workspace_id)))


@_on_mcp_plans
async def _create_token(deps: UseCaseDeps, caller: Caller, a: NewToken) -> Outcome:
    """A token acting as the caller's member; its plaintext is in this answer only."""
    try:
        return Done(await tokens.create_token(deps.db, workspace_id=caller.workspace_id, member_id=caller.member_id,
                                              name=a.name, by_member=caller.member_id, via=caller.author,
                                              now=deps.clock.now()))
    except tokens.TokenError as err:
        return Refused(Reason.INVALID, f"{str(err).capitalize()}.", 400, "invalid_name")


@_on_mcp_plans
async def _revoke_token(deps: UseCaseDeps, caller: Caller, a: OneToken) -> Outcome:
    """At once; revoking it again changes nothing."""
    if not 1 <= a.token_id <= BIGINT_MAX:
        return NO_SUCH_TOKEN
    revoked = await tokens.revoke_token(deps.db, caller.workspace_id, a.token_id, deps.clock.now(),
                                        by_member=caller.member_id, via=caller.author)
    return NO_SUCH_TOKEN if revoked is None else Done(revoked)


@_on_mcp_plans
async def _list_actions(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(await exposure.read_settings(deps.db, caller.workspace_id))


@_on_mcp_plans
async def _change_action(deps: UseCaseDeps, caller: Caller, a: ActionChange) -> Outcome:
    """Expose or hide an action, or require approval for it; one needing approval cannot be exposed."""
    change = exposure.ChangeAction(exposed=a.exposed, needs_approval=a.needs_approval)
    try:
        return Done(await exposure.change_action(deps.db, caller.workspace_id, a.name, change,
                                                 by_member=caller.member_id, via=caller.author,
                                                 now=deps.clock.now()))
    except exposure.UnknownAction as err:
        return Refused(Reason.NOT_FOUND, str(err), 404, "not_found")
    except exposure.NeedsApproval as err:
        return Refused(Reason.REFUSED, str(err), 409, "action_needs_approval")


# -- an assistant's connection (the OAuth flow's consent) -------------------------------------------------------


class ApproveConnection(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A connection request the consent page checked (`oauth_codes.check_request`), and the actions the member
    gives it, among those the workspace exposes."""

    request: oauth_codes.ConnectionRequest
    actions: list[str]


async def _approve_connection(deps: UseCaseDeps, caller: Caller, a: ApproveConnection) -> Outcome:
    """The code the client exchanges for a token acting as the caller, with the chosen actions."""
    if (refusal := tokens.plan_refusal(caller.plan)) is not None:
        return Refused(Reason.REFUSED, refusal.message or "This plan has no MCP.", refusal.status, refusal.error)
    # What a connection may be given: the actions the workspace exposes over MCP.
    offered = {setting.name for setting in (await exposure.read_settings(deps.db, caller.workspace_id)).data
               if setting.exposed}
    try:
        return Done(await oauth_codes.issue_code(
            deps.db, a.request, workspace_id=caller.workspace_id, member_id=caller.member_id,
            approved_via=caller.author, offered=offered, actions=a.actions, now=deps.clock.now()))
    except oauth_codes.ApprovalRefused as refused:
        return Refused(Reason.INVALID, str(refused), 400, "invalid_actions")


# -- the declarations ----------------------------------------------------------------------------------------

LIST_TOKENS = UseCase("list_mcp_tokens", NoArguments, permissions.SETTINGS, Kind.READ, _list_tokens)
CREATE_TOKEN = UseCase("create_mcp_token", NewToken, permissions.SETTINGS, Kind.WRITE, _create_token)
REVOKE_TOKEN = UseCase("revoke_mcp_token", OneToken, permissions.SETTINGS, Kind.WRITE, _revoke_token)
LIST_ACTIONS = UseCase("list_mcp_actions", NoArguments, permissions.SETTINGS, Kind.READ, _list_actions)
CHANGE_ACTION = UseCase("change_mcp_action", ActionChange, permissions.SETTINGS, Kind.WRITE, _change_action)
APPROVE_CONNECTION = UseCase("approve_mcp_connection", ApproveConnection, permissions.SETTINGS, Kind.WRITE,
                             _approve_connection)
"""Approving gives an assistant a token and chooses its tools: the permission that changes MCP's exposure."""
