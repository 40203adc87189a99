"""The seam between the AI agent and a language model: what the agent asks (`ModelRequest`), what a model answers
(`ModelAnswer`), how a call fails (`ModelFailure`), and the `ChatModel` protocol a provider implements.

The shapes are the OpenAI-compatible Chat Completions protocol's (messages with roles, function tools, tool calls,
token usage), which OpenAI, Azure OpenAI, Ollama, vLLM, llama.cpp's server, LiteLLM and OpenRouter all speak
(`openai_compatible.py`). Another protocol (Anthropic's Messages API) is one more module implementing `ChatModel`
that translates these shapes.
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec


class ToolCall(msgspec.Struct, frozen=True):
    id: str
    name: str
    # The arguments as the model wrote them: JSON text, which a model can get wrong (`arguments_or_none`).
    arguments: str

    def arguments_or_none(self) -> dict[str, Any] | None:
        try:
            decoded = msgspec.json.decode(self.arguments)
        except msgspec.DecodeError:
            return None
        return decoded if isinstance(decoded, dict) else None


class ModelRequest(msgspec.Struct, frozen=True):
    model: str
    # Chat Completions messages: {"role": "system" | "user" | "assistant" | "tool", "content": ..., ...}.
    messages: list[dict[str, Any]]
    # Function tools in Chat Completions' shape.
    tools: list[dict[str, Any]]
    temperature: float
    max_tokens: int


class ModelAnswer(msgspec.Struct, frozen=True):
    content: str | None
    tool_calls: tuple[ToolCall, ...]
    prompt_tokens: int
    completion_tokens: int
    # The model that answered, as the provider names it.
    model: str


class ModelFailure(Exception):
    """The model could not answer: `kind` is rate_limited, server_error, timed_out, refused (a 4xx: a wrong key,
    an unknown model) or unusable (an answer the agent cannot read)."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


class ChatModel(Protocol):
    async def complete(self, request: ModelRequest) -> ModelAnswer:
        """One Chat Completions call (retries of the provider's 429 and 5xx included); raises ModelFailure."""
        ...
