"""The simulator's HTTP face: Meta's send route, and the control routes that play customers and report.

Routes:
- `POST /{phone_number_id}/messages` (also under a version prefix, `/v21.0/{phone_number_id}/messages`, so a
  Graph-style base URL works unchanged): Meta's answers, see `rules`.
- `POST /{phone_number_id}/media` (also versioned): an upload, multipart `file`, `type`, `messaging_product`, as
  Meta takes it (`media_desk`); answers `{"id"}`. Its body may be up to UPLOAD_BODY_BYTES.
- `GET /{media-id}` (also versioned) and the URL it answers: a customer's media or an upload, as Meta serves it
  (both need the access token).
- `POST /simulator/customers/{phone}/messages` `{"phone_number_id", "text", "name"?, "type"?}` (media also
  `"content_base64"?`, `"mime_type"?`, `"filename"?`): the customer writes; answers `{"message_id",
  "delivered_to_service", "service_status", "media_id"}` once the service has answered.
- `POST /simulator/customers/{phone}/choices` `{"phone_number_id", "choice", "message_id"?}`: the customer picks a
  row (by id, or title in any case) of an interactive list that number sent them (the message named, or the
  newest), posted as Meta's `list_reply` replying to it; answers as a message the customer writes.
- `PUT /simulator/customers/{phone}` `{"read_receipts"?: bool, "auto_read"?: bool}`: the customer's settings.
- `POST /simulator/customers/{phone}/read` `{"phone_number_id"?}` (or no body): the customer reads what they were
  sent; answers `{"phone", "read_statuses", "read_receipts"}`.
- `GET /simulator/stats`: the counters.
- `GET /simulator/numbers/{phone_number_id}/messages?to=PHONE`: the accepted sends kept, oldest first.
- With a `ModelSimulator`, the simulated language model's routes too (`/model/v1/...`, `/simulator/model`; see
  `inbox_actors.model_simulator.routes`).
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
from quart_trio.wrappers import TrioRequest
from werkzeug.exceptions import HTTPException

from inbox_actors.model_simulator.routes import add_model_routes
from inbox_actors.model_simulator.simulated_model import ModelSimulator
from inbox_actors.platform.cloud_api import encode_accepted, encode_error, encode_uploaded
from inbox_actors.platform.media_types import META_LIMITS
from inbox_actors.platform.simulator.customers import (
    CustomerChoice,
    CustomerMessage,
    CustomerReads,
    CustomerSettings,
    InvalidCustomerMessage,
)
from inbox_actors.platform.simulator.media import StoredMedia
from inbox_actors.platform.simulator.media_desk import UploadForm
from inbox_actors.platform.simulator.model import Simulator
from inbox_actors.platform.simulator.rules import Refusal, unknown_path

MAX_BODY_BYTES = 1024 * 1024
# An upload's body: Meta's largest file (a 100 MB document) and the form around it. Larger is cut off, 413.
UPLOAD_BODY_BYTES = max(META_LIMITS.values()) + MAX_BODY_BYTES
_encoder = msgspec.json.Encoder()


class SimulatorRequest(TrioRequest):
    """A request held to its path's body limit as it arrives: an upload's, or MAX_BODY_BYTES."""

    def __init__(self, method: str, scheme: str, path: str, *args, **kwargs) -> None:
        upload = method == "POST" and path.endswith("/media")
        kwargs["max_content_length"] = UPLOAD_BODY_BYTES if upload else MAX_BODY_BYTES
        super().__init__(method, scheme, path, *args, **kwargs)


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


def create_simulator_app(simulator: Simulator, model: ModelSimulator | None = None) -> QuartTrio:
    app = QuartTrio("inbox_actors.platform.simulator")
    app.request_class = SimulatorRequest
    app.config["MAX_CONTENT_LENGTH"] = UPLOAD_BODY_BYTES
    if model is not None:
        add_model_routes(app, model)

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

    async def upload() -> Response:
        fields, files = await request.form, await request.files
        part = files.get("file")
        file = None if part is None else StoredMedia(part.mimetype or "application/octet-stream", part.read(),
                                                     part.filename or None)
        outcome = simulator.media_desk.upload(request.headers.get("Authorization"), UploadForm(
            messaging_product=fields.get("messaging_product"), type=fields.get("type"), file=file))
        if isinstance(outcome, Refusal):
            return _platform_error(outcome)
        return Response(encode_uploaded(outcome.id), content_type="application/json")

    @app.post("/<phone_number_id>/media")
    async def upload_unversioned(phone_number_id: str) -> Response:
        return await upload()

    @app.post("/<version>/<phone_number_id>/media")
    async def upload_versioned(version: str, phone_number_id: str) -> Response:
        return await upload()

    def media_location(media_id: str) -> Response:
        outcome = simulator.media_desk.location(media_id, request.headers.get("Authorization"))
        return _platform_error(outcome) if isinstance(outcome, Refusal) else _json(outcome)

    @app.get("/<media_id>")
    async def media_unversioned(media_id: str) -> Response:
        return media_location(media_id)

    @app.get("/<version>/<media_id>")
    async def media_versioned(version: str, media_id: str) -> Response:
        return media_location(media_id)

    @app.get("/simulator/media/<media_id>")
    async def media_file(media_id: str) -> Response:
        outcome = simulator.media_desk.file(media_id, request.headers.get("Authorization"))
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

    @app.post("/simulator/customers/<phone>/choices")
    async def customer_chooses(phone: str) -> Response:
        try:
            choice = msgspec.json.decode(await request.get_data(as_text=False), type=CustomerChoice)
            result = await simulator.customer_chooses(phone, choice)
        except (msgspec.DecodeError, InvalidCustomerMessage) as err:
            return _json({"error": str(err)}, 400)
        return _json(result)

    @app.put("/simulator/customers/<phone>")
    async def customer_settings(phone: str) -> Response:
        try:
            setting = msgspec.json.decode(await request.get_data(as_text=False), type=CustomerSettings)
            customer = simulator.set_customer(phone, read_receipts=setting.read_receipts, auto_read=setting.auto_read)
        except (msgspec.DecodeError, InvalidCustomerMessage) as err:
            return _json({"error": str(err)}, 400)
        return _json({"phone": customer, "read_receipts": simulator.read_receipts(customer),
                      "auto_read": simulator.customers.auto_read(customer)})

    @app.post("/simulator/customers/<phone>/read")
    async def customer_reads(phone: str) -> Response:
        try:
            raw = await request.get_data(as_text=False)
            reading = msgspec.json.decode(raw, type=CustomerReads) if raw.strip() else CustomerReads()
            return _json(simulator.customer_reads(phone, reading.phone_number_id))
        except (msgspec.DecodeError, InvalidCustomerMessage) as err:
            return _json({"error": str(err)}, 400)

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
