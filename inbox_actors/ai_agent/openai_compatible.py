"""A `ChatModel` over the OpenAI-compatible Chat Completions protocol, with the official `openai` SDK.

The SDK is built on httpx and anyio, so it runs under Trio as it does under asyncio
(tests/integration/test_model_simulator_http.py drives it so). It retries a 429 and a 5xx itself, waiting what the
provider's `Retry-After` says (up to a minute, the SDK's ceiling); the agent's own deadline (INBOX_MODEL_TIMEOUT)
bounds the whole call, retries included. The key is handed to the SDK alone: it is never logged, and a failure's
text is the SDK's without it.
"""

from __future__ import annotations

import logging

import httpx

from inbox_actors.ai_agent.model import ModelAnswer, ModelFailure, ModelRequest, ToolCall

log = logging.getLogger("inbox_actors.ai_agent.openai_compatible")

# Retries of a 429 or a 5xx before the call fails (the SDK's default is 2).
MAX_RETRIES = 2


class OpenAICompatibleModel:
    """The endpoint is named at once (`base_url`) or once known (`attach`: the built-in model simulator's address
    is its socket's, known after the service starts)."""

    def __init__(self, api_key: str | None, *, timeout: float, base_url: str | None = None) -> None:
        # Imported here: the SDK (with pydantic) takes half a second to import, which only a service that talks to a
        # model should pay.
        import openai

        self._openai = openai
        self._api_key = api_key or "none"   # local servers (Ollama, vLLM) take any key; the SDK wants one
        self._timeout = timeout
        self._client: openai.AsyncOpenAI | None = None
        self.base_url: str | None = None
        if base_url is not None:
            self.attach(base_url)

    def attach(self, base_url: str) -> None:
        # An httpx client of our own: the SDK's default one, when garbage-collected unclosed, schedules its closing
        # on the running asyncio loop, which under trio-asyncio (the database's) runs Trio's sockets in an asyncio
        # task and fails. Ours is closed by `close` when the service stops, in Trio.
        self._client = self._openai.AsyncOpenAI(
            base_url=base_url, api_key=self._api_key, timeout=self._timeout, max_retries=MAX_RETRIES,
            http_client=httpx.AsyncClient(timeout=self._timeout,
                                          limits=httpx.Limits(max_connections=512, max_keepalive_connections=64)))
        self.base_url = base_url

    async def complete(self, request: ModelRequest) -> ModelAnswer:
        openai = self._openai
        if self._client is None:
            raise ModelFailure("refused", "no model endpoint is attached yet")
        arguments: dict = dict(model=request.model, messages=request.messages, temperature=request.temperature,
                               max_tokens=request.max_tokens)
        if request.tools:
            arguments["tools"] = request.tools
        try:
            completion = await self._client.chat.completions.create(**arguments)
        except openai.RateLimitError as err:
            raise ModelFailure("rate_limited", _said(err)) from None
        except openai.APITimeoutError:
            raise ModelFailure("timed_out", "the model did not answer in time") from None
        except openai.APIConnectionError as err:
            raise ModelFailure("server_error", f"could not reach the model: {type(err.__cause__).__name__}") from None
        except openai.InternalServerError as err:
            raise ModelFailure("server_error", _said(err)) from None
        except openai.APIStatusError as err:
            raise ModelFailure("refused", _said(err)) from None
        except (openai.APIError, ValueError) as err:
            raise ModelFailure("unusable", f"{type(err).__name__}") from None
        if not completion.choices:
            raise ModelFailure("unusable", "the answer has no choices")
        message = completion.choices[0].message
        calls = tuple(ToolCall(id=call.id, name=call.function.name, arguments=call.function.arguments or "")
                      for call in (message.tool_calls or ()) if getattr(call, "function", None) is not None)
        usage = completion.usage
        return ModelAnswer(content=message.content, tool_calls=calls,
                           prompt_tokens=usage.prompt_tokens if usage else 0,
                           completion_tokens=usage.completion_tokens if usage else 0,
                           model=completion.model or request.model)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()


def _said(err: Exception) -> str:
    """The provider's status and its error's message, never the request (which names the key in its headers)."""
    status = getattr(err, "status_code", None)
    body = getattr(err, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    return f"{status} {message or type(err).__name__}"[:300]
