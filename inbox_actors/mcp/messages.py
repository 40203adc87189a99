"""The MCP area's shared types: who calls (a token's caller) and what a tool call answers."""

from __future__ import annotations

from typing import Any

import msgspec

from inbox_actors.domain.plans import Plan


class McpCaller(msgspec.Struct, frozen=True):
    """A live MCP token with what its calls depend on: the member it acts as, and the workspace."""

    token_id: int
    token_name: str
    workspace_id: int
    member_id: int
    role: str
    permissions: tuple[str, ...]
    status: str
    assigned_only: bool
    plan: Plan
    cloud_api_enabled: bool

    @property
    def author(self) -> str:
        """How events, the audit log and message labels name who acted."""
        return f"mcp_token:{self.token_id}"

    @property
    def only_assigned_to(self) -> int | None:
        """The member whose assigned chats alone this caller may see and touch (None: any chat)."""
        if self.assigned_only or "inbox_assigned_only" in self.permissions:
            return self.member_id
        return None


class ToolResult(msgspec.Struct, frozen=True):
    """A tool's answer: `data` (JSON-able) on success; on failure `is_error` and a sentence a model can act on."""

    text: str
    data: Any = None
    is_error: bool = False


def tool_error(sentence: str) -> ToolResult:
    return ToolResult(text=sentence, is_error=True)
