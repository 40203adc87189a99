"""The simulator's HTTP face: Meta's send route, and the control routes that play customers and report.

Routes:
- `POST /{phone_number_id}/messages` (also under a version prefix, `/v21.0/{phone_number_id}/messages`, so a
  Graph-style base URL works unchanged): Meta's answers, see `rules`.
- `GET /{media-id}` (also versioned) and the URL it answers: a customer's media, as Meta serves it (both need
  the access token).
- `POST /simulator/customers/{phone}/messages` `{"phone_number_id", "text", "name"?, "type"?}` (media also
  `"content_base64"?`, `"mime_type"?`, `"filename"?`): the customer writes; answers `{"message_id",
  "delivered_to_service", "service_status", "media_id"}` once the service has answered.
- `PUT /simulator/customers/{phone}` `{"read_receipts": bool}`: the customer's read-receipt setting.
- `GET /simulator/stats`: the counters.
- `GET /simulator/numbers/{phone_number_id}/messages?to=PHONE`: the accepted sends kept, oldest first.
Control routes answer their own errors as `{"error": sentence}` (400); unknown paths get Meta's error body.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import trio
from quart import Response, request
from quart_trio import QuartTrio
from werkzeug.exceptions import HTTPException

from inbox_actors.platform.cloud_api import encode_accepted, encode_error
from inbox_actors.platform.simulator.customers import CustomerMessage, InvalidCustomerMessage
from inbox_actors.platform.simulator.model import Simulator
from inbox_actors.platform.simulator.rules import Refusal, unknown_path

MAX_BODY_BYTES = 1024 * 1024
_encoder = msgspec.json.Encoder()


class ReadReceiptsSetting(msgspec.Struct, frozen=True):
    read_receipts: bool


def _json(payload: Any, status: int = 200) -> Response:
    return Response(_encoder.encode(payload), status=status, content_type="application/json")


def _platform_error(refusal: Refusal) -> Response:
    error = msgspec.structs.replace(refusal.error, fbtrace_id=secrets.token_urlsafe(16))
    return Response(encode_error(error), status=refusal.http_status, content_type="application/json")


# The ASGI scope's key for the trio time a request reached the app (`stamping_arrival`).
ARRIVED_AT = "inbox.simulator.arrived_at"


def stamping_arrival(app: QuartTrio) -> Callable[[dict, Any, Any], Awaitable[None]]:
    """`app` with each request's scope stamped as the server hands it over, before the app's own awaits: the
    platform counts a send's throughput when it arrives, not when a busy simulator has got round to it."""
    async def stamped(scope: dict, receive: Any, send: Any) -> None:
        scope[ARRIVED_AT] = trio.current_time()
        await app(scope, receive, send)
    return stamped


def create_simulator_app(simulator: Simulator) -> QuartTrio:
    app = QuartTrio("inbox_actors.platform.simulator")
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES

    async def send(phone_number_id: str) -> Response:
        outcome = await simulator.send(phone_number_id, request.headers.get("Authorization"),
                                       await request.get_data(as_text=False), arrived_at=request.scope.get(ARRIVED_AT))
        if isinstance(outcome, Refusal):
            return _platform_error(outcome)
        return Response(encode_accepted(outcome.recipient_input, outcome.wa_id, outcome.message_id),
                        content_type="application/json")

    @app.post("/<phone_number_id>/messages")
    async def send_unversioned(phone_number_id: str) -> Response:
        return await send(phone_number_id)

    @app.post("/<version>/<phone_number_id>/messages")
    async def send_versioned(version: str, phone_number_id: str) -> Response:
        return await send(phone_number_id)

    def media_location(media_id: str) -> Response:
        outcome = simulator.media_location(media_id, request.headers.get("Authorization"))
        return _platform_error(outcome) if isinstance(outcome, Refusal) else _json(outcome)

    @app.get("/<media_id>")
    async def media_unversioned(media_id: str) -> Response:
        return media_location(media_id)

    @app.get("/<version>/<media_id>")
    async def media_versioned(version: str, media_id: str) -> Response:
        return media_location(media_id)

    @app.get("/simulator/media/<media_id>")
    async def media_file(media_id: str) -> Response:
        outcome = simulator.media_file(media_id, request.headers.get("Authorization"))
        if isinstance(outcome, Refusal):
            return _platform_error(outcome)
        return Response(outcome.content, content_type=outcome.mime_type)

    @app.post("/simulator/customers/<phone>/messages")
    async def customer_writes(phone: str) -> Response:
        try:
            message = msgspec.json.decode(await request.get_data(as_text=False), type=CustomerMessage)
            result = await simulator.customer_writes(phone, message)
        except (msgspec.DecodeError, InvalidCustomerMessage) as err:
            return _json({"error": str(err)}, 400)
        return _json(result)

    @app.put("/simulator/customers/<phone>")
    async def customer_settings(phone: str) -> Response:
        try:
            setting = msgspec.json.decode(await request.get_data(as_text=False), type=ReadReceiptsSetting)
            customer = simulator.set_read_receipts(phone, setting.read_receipts)
        except (msgspec.DecodeError, InvalidCustomerMessage) as err:
            return _json({"error": str(err)}, 400)
        return _json({"phone": customer, "read_receipts": setting.read_receipts})

    @app.get("/simulator/stats")
    async def stats() -> Response:
        return _json(simulator.statistics())

    @app.get("/simulator/numbers/<phone_number_id>/messages")
    async def sent_messages(phone_number_id: str) -> Response:
        return _json({"data": simulator.sent_messages(phone_number_id, request.args.get("to"))})

    @app.errorhandler(HTTPException)
    async def unknown(err: HTTPException) -> Response:
        if err.code in (404, 405):
            return _platform_error(unknown_path(request.path))
        return _json({"error": err.description or err.name}, err.code or 500)

    return app
