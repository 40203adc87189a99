"""The action area's shared types: who calls (an MCP token's member, or an API key through a connector) and what
an action answers."""

from __future__ import annotations

import enum
from typing import Any

import msgspec

from inbox_actors.domain.plans import Plan


class ActionCaller(msgspec.Struct, frozen=True):
    """Who runs a catalog action, with what its calls depend on: the member it acts as (an MCP token's member, or
    an API key's creator with the key's effective permissions), and the workspace."""

    author: str
    """How events, the audit log and message labels name who acted: "mcp_token:<id>", "api_key:<id>"."""
    label: str
    """The sender label on the messages it sends ("MCP: <token name>", "Zapier: key <id>")."""
    workspace_id: int
    member_id: int
    role: str
    permissions: tuple[str, ...]
    status: str
    assigned_only: bool
    plan: Plan
    cloud_api_enabled: bool

    @property
    def only_assigned_to(self) -> int | None:
        """The member whose assigned chats alone this caller may see and touch (None: any chat)."""
        if self.assigned_only or "inbox_assigned_only" in self.permissions:
            return self.member_id
        return None


class Failure(str, enum.Enum):
    """Why an action changed nothing, for callers that answer in status codes (the connectors); MCP shows the
    sentence only."""

    INVALID = "invalid"              # an argument the action cannot take
    NOT_FOUND = "not_found"          # no such chat, contact or broadcast (or not one the caller may touch)
    PERMISSION = "permission"        # the caller's permissions lack the action's
    REFUSED = "refused"              # not possible now: the chat's state, the window, the platform, a setting
    UNAVAILABLE = "unavailable"      # a busy or failing part of the service; a write may still have happened


class ToolResult(msgspec.Struct, frozen=True):
    """An action's answer: `data` (JSON-able) on success; on failure `is_error`, a sentence a model can act on,
    and the `failure` kind."""

    text: str
    data: Any = None
    is_error: bool = False
    failure: Failure | None = None


def tool_error(sentence: str, failure: Failure = Failure.REFUSED, data: Any = None) -> ToolResult:
    return ToolResult(text=sentence, data=data, is_error=True, failure=failure)


def failure_of_status(status: int) -> Failure:
    """The failure kind of a refusal that carries an HTTP status (a chat's, a contact's, a broadcast's)."""
    return {400: Failure.INVALID, 403: Failure.PERMISSION, 404: Failure.NOT_FOUND,
            503: Failure.UNAVAILABLE}.get(status, Failure.REFUSED)
