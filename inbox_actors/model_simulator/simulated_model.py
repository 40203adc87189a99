"""The simulated model on OpenAI's wire: its API key, the latency and faults a test sets, and the counters it reads.

`grounded` decides what the model says; this decides whether and when it gets to say it. A chat completion is
checked in order: the bearer key (401 `invalid_api_key`), the body (400 in OpenAI's error shape; streaming is
refused), then it takes the fault set at its arrival, if any, waits the latency, and answers. Faults:
- `rate_limited`: 429 `rate_limit_exceeded` with `Retry-After`;
- `server_error`: 500;
- `timeout`: no answer for ten minutes, so the caller's own timeout fires (a trio sleep, cancelled with the
  request);
- `malformed_tool_call`: a tool call whose arguments are not JSON;
- `overlong`: content longer than WhatsApp's 4,096 characters.
A fault is set for its next `fault_times` calls (0: every call until changed); then it clears itself.
"""

from __future__ import annotations

import secrets
from typing import Annotated, Any, Literal

import msgspec
import trio

from inbox_actors.model_simulator.grounded import (
    MODEL_ID,
    QUOTE_PRICE,
    Answer,
    Reply,
    ToolCall,
    completion,
    decide,
    offered_tools,
)

Fault = Literal["rate_limited", "server_error", "timeout", "malformed_tool_call", "overlong"]
# The status, JSON body and extra headers of an answer.
WireAnswer = tuple[int, dict[str, Any], dict[str, str]]

DEFAULT_FAULT_TIMES = 1
TIMEOUT_SECONDS = 600.0            # longer than any caller waits
MALFORMED_ARGUMENTS = '{"query": '
UNOFFERED_TOOL = "lookup_everything"
_OVERLONG_SENTENCE = "Thank you for your patience while I explain every part of this in great detail. "
OVERLONG_CONTENT = _OVERLONG_SENTENCE * (5_000 // len(_OVERLONG_SENTENCE) + 1)
MESSAGE_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


class ModelSettings(msgspec.Struct, frozen=True):
    latency_seconds: float = 0.0
    fault: Fault | None = None
    fault_times: int = DEFAULT_FAULT_TIMES     # calls the fault is still set for; 0: every call
    retry_after: int = 1                       # seconds, told by a `rate_limited` answer


class ModelSettingsChange(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """`PUT /simulator/model`: the fields given are changed, the others kept. Setting `fault` without
    `fault_times` sets it for one call."""

    latency_seconds: Annotated[float, msgspec.Meta(ge=0)] | msgspec.UnsetType = msgspec.UNSET
    fault: Fault | None | msgspec.UnsetType = msgspec.UNSET
    fault_times: Annotated[int, msgspec.Meta(ge=0)] | msgspec.UnsetType = msgspec.UNSET
    retry_after: Annotated[int, msgspec.Meta(ge=0)] | msgspec.UnsetType = msgspec.UNSET


class ModelCounters(msgspec.Struct):
    calls: int = 0                      # chat completion requests received, refused ones too
    faults: int = 0
    prompt_tokens: int = 0              # of the completions answered (200)
    completion_tokens: int = 0
    last_request: Any = None            # the last chat completion body, decoded; None when it was not JSON


class InvalidChatRequest(Exception):
    """A chat completion body OpenAI would refuse with 400."""

    def __init__(self, message: str, param: str | None, code: str | None) -> None:
        super().__init__(message)
        self.param = param
        self.code = code


def openai_error(message: str, error_type: str, *, param: str | None = None,
                 code: str | None = None) -> dict[str, Any]:
    """OpenAI's error body."""
    return {"error": {"message": message, "type": error_type, "param": param, "code": code}}


def check_chat_request(request: Any) -> dict[str, Any]:
    """The body, when it is one the model can answer; raises InvalidChatRequest."""
    if not isinstance(request, dict):
        raise InvalidChatRequest("We could not parse the JSON body of your request. The body must be a JSON object.",
                                 None, None)
    for name, expected, kind in (("model", str, "a string"), ("messages", list, "an array")):
        if name not in request:
            raise InvalidChatRequest(f"Missing required parameter: '{name}'.", name, "missing_required_parameter")
        if not isinstance(request[name], expected):
            raise InvalidChatRequest(f"Invalid type for '{name}': expected {kind}.", name, "invalid_type")
    if not request["messages"]:
        raise InvalidChatRequest("Invalid 'messages': empty array. Expected an array with minimum length 1.",
                                 "messages", "empty_array")
    for index, message in enumerate(request["messages"]):
        if not isinstance(message, dict) or message.get("role") not in MESSAGE_ROLES:
            raise InvalidChatRequest(f"Invalid 'messages[{index}]': expected an object with a role of "
                                     f"{', '.join(sorted(MESSAGE_ROLES))}.", f"messages[{index}]", "invalid_value")
    if "tools" in request and not isinstance(request["tools"], list):
        raise InvalidChatRequest("Invalid type for 'tools': expected an array.", "tools", "invalid_type")
    if request.get("stream"):
        raise InvalidChatRequest("Streaming is not supported by the simulated model; send \"stream\": false.",
                                 "stream", "unsupported_value")
    return request


def _decoded(body: bytes) -> Any:
    try:
        return msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None


class ModelSimulator:
    """The simulated model's settings, counters and answers; `routes.add_model_routes` serves it."""

    def __init__(self, api_key: str, *, settings: ModelSettings | None = None) -> None:
        self.api_key = api_key
        self.settings = settings or ModelSettings()
        self.counters = ModelCounters()

    # -- control ------------------------------------------------------------------------------------------------

    def change_settings(self, change: ModelSettingsChange) -> ModelSettings:
        current = self.settings
        fault = current.fault if change.fault is msgspec.UNSET else change.fault
        if change.fault_times is not msgspec.UNSET:
            fault_times = change.fault_times
        elif change.fault is not msgspec.UNSET:
            fault_times = DEFAULT_FAULT_TIMES
        else:
            fault_times = current.fault_times
        self.settings = ModelSettings(
            latency_seconds=current.latency_seconds if change.latency_seconds is msgspec.UNSET
            else change.latency_seconds,
            fault=fault, fault_times=fault_times,
            retry_after=current.retry_after if change.retry_after is msgspec.UNSET else change.retry_after)
        return self.settings

    def settings_view(self) -> dict[str, Any]:
        return msgspec.structs.asdict(self.settings)

    def report(self) -> dict[str, Any]:
        """`GET /simulator/model`: the settings and the counters."""
        return self.settings_view() | msgspec.structs.asdict(self.counters)

    def _take_fault(self) -> Fault | None:
        """The fault for the call arriving now, counting it off the calls it is set for."""
        fault = self.settings.fault
        if fault is None:
            return None
        self.counters.faults += 1
        if self.settings.fault_times == 1:
            self.settings = msgspec.structs.replace(self.settings, fault=None, fault_times=DEFAULT_FAULT_TIMES)
        elif self.settings.fault_times > 1:
            self.settings = msgspec.structs.replace(self.settings, fault_times=self.settings.fault_times - 1)
        return fault

    # -- the wire -----------------------------------------------------------------------------------------------

    def _authorized(self, authorization: str | None) -> bool:
        return authorization is not None and secrets.compare_digest(
            authorization.encode(), f"Bearer {self.api_key}".encode())

    def _unauthorized(self) -> WireAnswer:
        return 401, openai_error("Incorrect API key provided. The simulated model takes the key it was started with.",
                                 "invalid_request_error", code="invalid_api_key"), {}

    def list_models(self, authorization: str | None) -> WireAnswer:
        """`GET /v1/models`."""
        if not self._authorized(authorization):
            return self._unauthorized()
        return 200, {"object": "list", "data": [
            {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "inbox-actors"}]}, {}

    async def complete(self, authorization: str | None, body: bytes) -> WireAnswer:
        """`POST /v1/chat/completions`."""
        self.counters.calls += 1
        request = _decoded(body)
        self.counters.last_request = request
        if not self._authorized(authorization):
            return self._unauthorized()
        try:
            request = check_chat_request(request)
        except InvalidChatRequest as err:
            return 400, openai_error(str(err), "invalid_request_error", param=err.param, code=err.code), {}
        settings = self.settings
        fault = self._take_fault()
        await trio.sleep(TIMEOUT_SECONDS if fault == "timeout" else settings.latency_seconds)
        if fault == "rate_limited":
            return 429, openai_error(f"Rate limit reached for {request['model']}. Please try again in "
                                     f"{settings.retry_after}s.", "rate_limit_error", code="rate_limit_exceeded"), \
                {"Retry-After": str(settings.retry_after)}
        if fault == "server_error":
            return 500, openai_error("The server had an error while processing your request. Sorry about that!",
                                     "server_error"), {}
        answer = completion(request, self._faulty_reply(fault, request) or decide(request))
        self.counters.prompt_tokens += answer["usage"]["prompt_tokens"]
        self.counters.completion_tokens += answer["usage"]["completion_tokens"]
        return 200, answer, {}

    @staticmethod
    def _faulty_reply(fault: Fault | None, request: dict[str, Any]) -> Reply | None:
        if fault == "malformed_tool_call":
            offered = offered_tools(request)
            # The tool the agent would expect, when offered, so only the arguments are at fault.
            name = QUOTE_PRICE if QUOTE_PRICE in offered else min(offered, default=UNOFFERED_TOOL)
            return ToolCall(name, MALFORMED_ARGUMENTS)
        if fault == "overlong":
            return Answer(OVERLONG_CONTENT)
        return None
