"""The simulated model's HTTP face, added to the platform simulator's app so one server plays both.

Routes:
- `POST /model/v1/chat/completions`: OpenAI's Chat Completions (no streaming), answered by `ModelSimulator`;
- `GET /model/v1/models`: the one model, `simulated-grounded`;
so a client's base URL for the model is `{simulator_url}/model/v1`; both need `Authorization: Bearer <api key>`.
Control routes, without auth like the platform's `/simulator/...` ones:
- `PUT /simulator/model` `{"latency_seconds"?, "fault"?, "fault_times"?, "retry_after"?}`: changes the fields
  given (see `ModelSettingsChange`), answers the settings;
- `GET /simulator/model`: the settings and the counters.
A bad control body is 400 `{"error": sentence}`.
"""

from __future__ import annotations

from typing import Any

import msgspec
from quart import Response, request
from quart_trio import QuartTrio

from inbox_actors.model_simulator.simulated_model import ModelSettingsChange, ModelSimulator

MODEL_PREFIX = "/model/v1"
_encoder = msgspec.json.Encoder()


def _json(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(_encoder.encode(payload), status=status, headers=headers, content_type="application/json")


def add_model_routes(app: QuartTrio, model: ModelSimulator) -> None:
    """Registers the model's routes on `app`; its explicit paths are matched before the platform's patterns."""

    @app.post(f"{MODEL_PREFIX}/chat/completions")
    async def model_chat_completions() -> Response:
        status, payload, headers = await model.complete(request.headers.get("Authorization"),
                                                        await request.get_data(as_text=False))
        return _json(payload, status, headers)

    @app.get(f"{MODEL_PREFIX}/models")
    async def model_list() -> Response:
        status, payload, headers = model.list_models(request.headers.get("Authorization"))
        return _json(payload, status, headers)

    @app.put("/simulator/model")
    async def model_settings() -> Response:
        try:
            change = msgspec.json.decode(await request.get_data(as_text=False), type=ModelSettingsChange)
        except msgspec.DecodeError as err:
            return _json({"error": str(err)}, 400)
        model.change_settings(change)
        return _json(model.settings_view())

    @app.get("/simulator/model")
    async def model_report() -> Response:
        return _json(model.report())
