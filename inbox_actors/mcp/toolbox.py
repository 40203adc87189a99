"""One caller's MCP tools: the catalog actions its workspace exposes, listed and called (`protocol.Toolbox`)."""

from __future__ import annotations

from typing import Any

from inbox_actors.actions.caller import Caller
from inbox_actors.actions.catalog import Kind, input_schema
from inbox_actors.actions.deps import ActionDeps
from inbox_actors.actions.run import run_action
from inbox_actors.mcp import exposure
from inbox_actors.mcp.tool_result import ToolResult, tool_result


class WorkspaceToolbox:
    def __init__(self, deps: ActionDeps, caller: Caller) -> None:
        self._deps, self._caller = deps, caller

    async def list_tools(self) -> list[dict[str, Any]]:
        return [{
            "name": action.name,
            "title": action.title,
            "description": action.description,
            "inputSchema": input_schema(action),
            "annotations": {"title": action.title, "readOnlyHint": action.kind is Kind.READ,
                            "destructiveHint": False, "openWorldHint": action.kind is Kind.WRITE},
        } for action in await exposure.exposed_actions(self._deps.db, self._caller.workspace_id)]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult | None:
        # Looked up among the exposed ones only: a hidden action is answered as if it did not exist.
        exposed = {action.name: action for action in await exposure.exposed_actions(self._deps.db,
                                                                                    self._caller.workspace_id)}
        action = exposed.get(name)
        if action is None:
            return None
        return tool_result(await run_action(self._deps, self._caller, action, arguments))
