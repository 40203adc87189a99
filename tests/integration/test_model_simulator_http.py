"""The model simulator on a real socket, driven by the official `openai` SDK under Trio.

The platform simulator's server plays the model too (`serve_simulator(..., model=...)`), at `{url}/model/v1`.
These tests are also the project's proof that the `openai` SDK runs under Trio: `AsyncOpenAI` goes through httpx,
whose transport runs on AnyIO, so its requests, its timeouts and its retries (which honour `Retry-After`) work
unchanged in a trio task. The client is always closed by `async with` (its finaliser would look for an asyncio
loop).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import httpx
import msgspec
import openai
import pytest
import trio

from inbox_actors.model_simulator.simulated_model import ModelSimulator
from inbox_actors.platform.simulator.model import Simulator, SimulatorConfig
from inbox_actors.platform.simulator.server import serve_simulator

KEY = "sk-simulated-model"
MODEL = "acme-agent"
TOOLS: list[Any] = [
    {"type": "function", "function": {
        "name": "quote_price", "description": "Prices from the workspace's price sheets",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}},
    {"type": "function", "function": {
        "name": "hand_off", "description": "Hand the chat to a person",
        "parameters": {"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]}}},
]
SYSTEM = {"role": "system", "content": (
    "You answer customers of Acme from the knowledge below.\n\n## Knowledge\n"
    '<passage id="p12" title="Returns policy">You can return any item within 30 days of delivery. '
    "Refunds reach your card within 5 working days. Items must be unused.</passage>\n"
    '<passage id="faq3" title="">We ship to Germany, France and Spain.</passage>')}


@dataclass(frozen=True)
class Served:
    url: str
    model: ModelSimulator


@pytest.fixture
async def served(nursery) -> Served:
    model = ModelSimulator(KEY)
    simulator = Simulator(SimulatorConfig(app_secret="simulator-app-secret", access_token="simulator-access-token"))
    url = await nursery.start(partial(serve_simulator, simulator, model=model))
    return Served(url, model)


@pytest.fixture
async def client(served) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(base_url=f"{served.url}/model/v1", api_key=KEY, max_retries=0,
                                  timeout=5.0) as opened:
        yield opened


@pytest.fixture
async def control(served) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=served.url, timeout=5.0) as http:
        yield http


async def set_model(control: httpx.AsyncClient, **settings: Any) -> dict[str, Any]:
    response = await control.put("/simulator/model", json=settings)
    assert response.status_code == 200, response.text
    return response.json()


def ask(text: str) -> list[Any]:
    return [SYSTEM, {"role": "user", "content": text}]


async def test_the_model_list(client):
    models = await client.models.list()
    assert [model.id for model in models.data] == ["simulated-grounded"]
    assert models.data[0].owned_by == "inbox-actors"


async def test_a_grounded_answer(client, served):
    answer = await client.chat.completions.create(model=MODEL, messages=ask("How do returns work?"), tools=TOOLS)
    assert answer.object == "chat.completion" and answer.model == MODEL and answer.id.startswith("chatcmpl-")
    [choice] = answer.choices
    assert choice.finish_reason == "stop" and choice.message.tool_calls is None
    assert choice.message.content == ("You can return any item within 30 days of delivery. "
                                      "Refunds reach your card within 5 working days.")
    assert answer.usage is not None and answer.usage.total_tokens == \
        answer.usage.prompt_tokens + answer.usage.completion_tokens
    assert served.model.report()["completion_tokens"] == answer.usage.completion_tokens


async def test_a_price_question_round_trip_through_quote_price(client):
    messages = ask("How much is the Basic plan?")
    first = await client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
    assert first.choices[0].finish_reason == "tool_calls"
    [call] = first.choices[0].message.tool_calls or []
    assert call.type == "function" and call.function.name == "quote_price"
    assert msgspec.json.decode(call.function.arguments) == {"query": "Basic plan"}
    items = {"items": [{"item_id": 7, "sheet": "Plans", "name": "Basic plan", "price": "19.00", "currency": "EUR",
                        "unit": "month", "valid_until": None, "notes": ""}]}
    messages += [first.choices[0].message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": call.id, "content": msgspec.json.encode(items).decode()}]
    second = await client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
    assert second.choices[0].finish_reason == "stop"
    assert second.choices[0].message.content == "Basic plan: 19.00 EUR per month."


async def test_nothing_known_hands_off(client):
    answer = await client.chat.completions.create(model=MODEL, messages=ask("Do you sell unicorns?"), tools=TOOLS)
    [call] = answer.choices[0].message.tool_calls or []
    assert call.function.name == "hand_off"
    assert msgspec.json.decode(call.function.arguments) == {"reason": "nothing in the knowledge"}


async def test_a_wrong_key_is_an_authentication_error(served):
    async with openai.AsyncOpenAI(base_url=f"{served.url}/model/v1", api_key="sk-wrong", max_retries=0) as wrong:
        with pytest.raises(openai.AuthenticationError) as refused:
            await wrong.chat.completions.create(model=MODEL, messages=ask("hi"))
    assert refused.value.status_code == 401 and refused.value.code == "invalid_api_key"


async def test_streaming_is_a_bad_request(client):
    with pytest.raises(openai.BadRequestError) as refused:
        await client.chat.completions.create(model=MODEL, messages=ask("hi"), stream=True)
    assert refused.value.param == "stream" and "not supported" in refused.value.message


async def test_rate_limited_then_the_sdk_retries_after_retry_after(served, control):
    await set_model(control, fault="rate_limited", retry_after=1)
    async with openai.AsyncOpenAI(base_url=f"{served.url}/model/v1", api_key=KEY, max_retries=0) as once:
        with pytest.raises(openai.RateLimitError) as limited:
            await once.chat.completions.create(model=MODEL, messages=ask("How do returns work?"))
    assert limited.value.code == "rate_limit_exceeded" and limited.value.response.headers["retry-after"] == "1"
    await set_model(control, fault="rate_limited", retry_after=1)
    async with openai.AsyncOpenAI(base_url=f"{served.url}/model/v1", api_key=KEY, max_retries=1) as retrying:
        started = trio.current_time()
        answer = await retrying.chat.completions.create(model=MODEL, messages=ask("How do returns work?"))
    assert answer.choices[0].message.content
    assert trio.current_time() - started >= 0.9         # it waited the second the model asked for
    report = (await control.get("/simulator/model")).json()
    assert report["calls"] == 3 and report["faults"] == 2 and report["fault"] is None


async def test_a_server_error(client, control):
    await set_model(control, fault="server_error")
    with pytest.raises(openai.InternalServerError) as failed:
        await client.chat.completions.create(model=MODEL, messages=ask("hi"))
    assert failed.value.status_code == 500


async def test_a_timeout_fires_the_callers_own_timeout(client, control):
    await set_model(control, fault="timeout")
    started = trio.current_time()
    with pytest.raises(openai.APITimeoutError):
        await client.chat.completions.create(model=MODEL, messages=ask("hi"), timeout=0.3)
    assert trio.current_time() - started < 3
    # The next call is answered: the fault was for one call, and the sleeping request does not hold the model up.
    answer = await client.chat.completions.create(model=MODEL, messages=ask("How do returns work?"))
    assert answer.choices[0].message.content


async def test_a_malformed_tool_call_reaches_the_caller_as_sent(client, control):
    await set_model(control, fault="malformed_tool_call")
    answer = await client.chat.completions.create(model=MODEL, messages=ask("How do returns work?"), tools=TOOLS)
    [call] = answer.choices[0].message.tool_calls or []
    with pytest.raises(msgspec.DecodeError):
        msgspec.json.decode(call.function.arguments)


async def test_overlong_content(client, control):
    await set_model(control, fault="overlong")
    answer = await client.chat.completions.create(model=MODEL, messages=ask("How do returns work?"))
    assert len(answer.choices[0].message.content or "") > 4_096


async def test_latency(client, control):
    await set_model(control, latency_seconds=0.3)
    started = trio.current_time()
    await client.chat.completions.create(model=MODEL, messages=ask("hi"))
    assert trio.current_time() - started >= 0.3


async def test_the_control_routes(control):
    assert await set_model(control, latency_seconds=0.25, fault="server_error", fault_times=0) == {
        "latency_seconds": 0.25, "fault": "server_error", "fault_times": 0, "retry_after": 1}
    assert await set_model(control, fault=None) == {
        "latency_seconds": 0.25, "fault": None, "fault_times": 1, "retry_after": 1}
    report = (await control.get("/simulator/model")).json()
    assert report == {"latency_seconds": 0.25, "fault": None, "fault_times": 1, "retry_after": 1, "calls": 0,
                      "faults": 0, "prompt_tokens": 0, "completion_tokens": 0, "last_request": None}
    for bad in ({"fault": "lightning"}, {"latency_seconds": -1}, {"fault_times": -2}, {"colour": "blue"}):
        refused = await control.put("/simulator/model", json=bad)
        assert refused.status_code == 400 and isinstance(refused.json()["error"], str)
    refused = await control.put("/simulator/model", content=b"not json")
    assert refused.status_code == 400 and refused.json()["error"]


async def test_the_last_request_is_kept(client, control):
    await client.chat.completions.create(model=MODEL, messages=ask("How do returns work?"), tools=TOOLS,
                                         temperature=0)
    last = (await control.get("/simulator/model")).json()["last_request"]
    assert last["model"] == MODEL and last["messages"][1] == {"role": "user", "content": "How do returns work?"}
    assert last["tools"] == TOOLS and last["temperature"] == 0


async def test_the_platform_routes_are_untouched(control):
    unknown = await control.get("/model/v1/nowhere")
    assert unknown.status_code == 400 and unknown.json()["error"]["code"] == 100     # Meta's error body, as before
    assert (await control.get("/simulator/stats")).status_code == 200
