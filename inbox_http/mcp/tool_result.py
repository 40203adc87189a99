"""What an MCP tool call answers: a use case's outcome as MCP reports it, `data` on success, and on failure
`is_error` with a sentence a model can act on (MCP reports tool failures in the result, so that the model reads
them, rather than as protocol errors)."""

from __future__ import annotations

from typing import Any

import msgspec

from inbox_actors.use_cases.outcomes import Done, Outcome

_encoder = msgspec.json.Encoder()


class ToolResult(msgspec.Struct, frozen=True):
    text: str
    data: Any = None
    is_error: bool = False


def tool_result(outcome: Outcome) -> ToolResult:
    if isinstance(outcome, Done):
        data = msgspec.to_builtins(outcome.data)
        text = outcome.summary if outcome.summary is not None else _encoder.encode(data).decode()
        return ToolResult(text=text, data=data)
    text = outcome.message
    if outcome.code == "send_failed":
        data = outcome.data or {}
        text = f"The platform refused the message (error {data.get('errorCode')}, {data.get('errorTitle')}): {text}"
    elif outcome.state:
        text = f"{text.rstrip('.')} (the chat is {outcome.state})."
    return ToolResult(text=text, data=outcome.data, is_error=True)
