"""MCP's settings use cases at their own level: the runner's permission and argument checks, the plan refusal a
session on a plan without MCP gets, then making, listing and revoking a token and exposing an action, on a real
PostgreSQL with no HTTP. The routes' tests (e2e/test_mcp_endpoint.py) check how they answer."""

from __future__ import annotations

from inbox_actors.mcp import tokens
from inbox_actors.use_cases import mcp_settings
from inbox_actors.use_cases.outcomes import Done, Reason, Refused
from tests import builders

EVERY = ((mcp_settings.LIST_TOKENS, {}), (mcp_settings.CREATE_TOKEN, {"name": "assistant"}),
         (mcp_settings.REVOKE_TOKEN, {"token_id": 1}), (mcp_settings.LIST_ACTIONS, {}),
         (mcp_settings.CHANGE_ACTION, {"name": "claim_conversation", "exposed": True}))


def refused(outcome, status: int, code: str) -> Refused:
    assert isinstance(outcome, Refused) and (outcome.status, outcome.code) == (status, code), outcome
    return outcome


async def test_a_caller_without_settings_or_on_a_plan_without_mcp_is_refused(use_cases):
    agent = await use_cases.member(permissions=["inbox"])
    for use_case, arguments in EVERY:
        outcome = refused(await use_cases.run(agent, use_case, arguments), 403, "permission_denied")
        assert outcome.reason is Reason.PERMISSION and f"{use_case.name} needs the settings" in outcome.message
        assert not use_case.allows(agent)
    workspaces = [use_cases.workspace_id]
    for plan, code in (("starter", "api_not_in_plan"), ("growth", "api_access_not_enabled")):
        workspaces.append(await builders.workspace(use_cases.db, plan))
        admin = await use_cases.member(role="admin", workspace_id=workspaces[-1])
        for use_case, arguments in EVERY:
            refused(await use_cases.run(admin, use_case, arguments), 403, code)
    assert await use_cases.db.fetchval("SELECT count(*) FROM mcp_tokens WHERE workspace_id = ANY($1)",
                                       workspaces) == 0


async def test_arguments_are_checked_by_the_declared_structs_and_the_token_s_rules(use_cases):
    admin = await use_cases.member(role="admin")
    for use_case, arguments in ((mcp_settings.CREATE_TOKEN, {}), (mcp_settings.CREATE_TOKEN, {"name": 5}),
                                (mcp_settings.REVOKE_TOKEN, {"token_id": "one"}),
                                (mcp_settings.CHANGE_ACTION, {"name": "send_text", "exposed": "yes"}),
                                (mcp_settings.CHANGE_ACTION, {"name": "send_text", "hidden": True})):
        refused(await use_cases.run(admin, use_case, arguments), 400, "invalid_arguments")
    for name in ("   ", "x" * (tokens.MAX_NAME + 1), "two\nlines"):
        outcome = refused(await use_cases.run(admin, mcp_settings.CREATE_TOKEN, {"name": name}), 400, "invalid_name")
        assert outcome.message == f"Name must be 1 to {tokens.MAX_NAME} characters of text on one line."
    for token_id in (0, 999_999, 2**70):
        refused(await use_cases.run(admin, mcp_settings.REVOKE_TOKEN, {"token_id": token_id}), 404, "not_found")
    refused(await use_cases.run(admin, mcp_settings.CHANGE_ACTION, {"name": "launch_rockets"}), 404, "not_found")
    assert await use_cases.db.fetchval("SELECT count(*) FROM mcp_tokens WHERE workspace_id = $1",
                                       use_cases.workspace_id) == 0


async def test_a_token_is_made_for_the_caller_listed_and_revoked(use_cases):
    admin = await use_cases.member(role="admin")
    issued = await use_cases.run(admin, mcp_settings.CREATE_TOKEN, {"name": "  Claude  "})
    assert isinstance(issued, Done) and issued.data.name == "Claude" and issued.data.member_id == admin.member_id
    assert tokens.has_token_shape(issued.data.token)
    listed = await use_cases.run(admin, mcp_settings.LIST_TOKENS, {})
    assert isinstance(listed, Done) and [(t.name, t.status) for t in listed.data.data] == [("Claude", "active")]
    for _ in range(2):  # revoking again changes nothing
        revoked = await use_cases.run(admin, mcp_settings.REVOKE_TOKEN, {"token_id": issued.data.id})
        assert isinstance(revoked, Done) and revoked.data.status == "revoked"
    assert await tokens.find_holder(use_cases.db, issued.data.token, use_cases.deps.clock.now()) is None


async def test_an_action_needing_approval_is_exposed_only_once_the_approval_is_lifted(use_cases):
    admin = await use_cases.member(role="admin")
    refused(await use_cases.run(admin, mcp_settings.CHANGE_ACTION, {"name": "send_text", "exposed": True}),
            409, "action_needs_approval")
    lifted = await use_cases.run(admin, mcp_settings.CHANGE_ACTION,
                                 {"name": "send_text", "exposed": True, "needs_approval": False})
    assert isinstance(lifted, Done) and (lifted.data.exposed, lifted.data.needs_approval) == (True, False)
    listed = await use_cases.run(admin, mcp_settings.LIST_ACTIONS, {})
    assert isinstance(listed, Done)
    assert {setting.name: setting.exposed for setting in listed.data.data}["send_text"] is True
