"""One caller's MCP tools: the catalog actions its workspace exposes, listed and called (`protocol.Toolbox`); a
token limited to some actions (the OAuth connection flow's) sees only those of them the workspace exposes, so
hiding an action in the workspace's settings hides it from every token at once."""

from __future__ import annotations

from typing import Any

from inbox_actors.use_cases import tool_exposure as exposure
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.catalog import Action, Kind, input_schema
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.run import run_action
from inbox_http.mcp.tool_result import ToolResult, tool_result


class WorkspaceToolbox:
    def __init__(self, deps: UseCaseDeps, caller: Caller, only: frozenset[str] | None = None) -> None:
        self._deps, self._caller, self._only = deps, caller, only

    async def _tools(self) -> list[Action]:
        exposed = await exposure.exposed_actions(self._deps.db, self._caller.workspace_id)
        return exposed if self._only is None else [action for action in exposed if action.name in self._only]

    async def list_tools(self) -> list[dict[str, Any]]:
        return [{
            "name": action.name,
            "title": action.title,
            "description": action.description,
            "inputSchema": input_schema(action),
            "annotations": {"title": action.title, "readOnlyHint": action.kind is Kind.READ,
                            "destructiveHint": False, "openWorldHint": action.kind is Kind.WRITE},
        } for action in await self._tools()]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult | None:
        # Looked up among the exposed ones only: a hidden action is answered as if it did not exist.
        exposed = {action.name: action for action in await self._tools()}
        action = exposed.get(name)
        if action is None:
            return None
        return tool_result(await run_action(self._deps, self._caller, action, arguments))
