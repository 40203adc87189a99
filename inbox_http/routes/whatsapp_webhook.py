"""The platform's webhook, `/webhooks/whatsapp`: Meta's verification handshake and the signed deliveries.

The route checks the signature and the envelope's shape, hands the batches to the inbox
(`conversations/inbound.py`, which says what happens to them) and answers: 200 once everything the delivery
carried is committed, 503 with Retry-After otherwise, so the platform retries (the database out included:
`database_outage.py`).
"""

from __future__ import annotations

import msgspec
from quart import Blueprint, Response, request

from inbox_actors.conversations import inbound
from inbox_actors.paging.parameter_catalog import QueryParameter
from inbox_actors.platform.webhook_envelope import InvalidEnvelope, parse_envelope, verify_signature
from inbox_http import database_outage
from inbox_http.contract import answers, takes
from inbox_http.dependencies import dependencies
from inbox_http.encoding import json_response
from inbox_http.errors import ApiError
from inbox_http.guard import accepts, responds
from inbox_http.json_body import NOT_UTF8, is_utf8

blueprint = Blueprint("whatsapp_webhook", __name__, url_prefix="/webhooks/whatsapp")

VERIFICATION = (
    QueryParameter("hub.mode", "string", "subscribe"),
    QueryParameter("hub.verify_token", "string", "the verify token the platform was given"),
    QueryParameter("hub.challenge", "string", "echoed back when the token matches"),
)
# Meta's envelope (object "whatsapp_business_account", entry[].changes[].value with messages and statuses),
# signed: X-Hub-Signature-256 is sha256= and the HMAC-SHA256 of the raw body keyed with the app secret.
ENVELOPE = {"type": "object", "description": "the platform's webhook envelope, as Meta sends it"}


class Received(msgspec.Struct, frozen=True):
    received: bool


@blueprint.get("")
@responds(str)
@accepts(VERIFICATION)
@answers(403)
async def verify():
    """The platform's subscription check: echo hub.challenge when hub.verify_token matches."""
    link = dependencies().platform
    if request.args.get("hub.mode") != "subscribe" or request.args.get("hub.verify_token") != link.verify_token:
        raise ApiError(403, "verification_failed", "hub.mode must be subscribe and hub.verify_token must match.")
    return Response(request.args.get("hub.challenge", ""), 200, content_type="text/plain")


@blueprint.post("")
@responds(Received)
@takes(ENVELOPE)
@answers(401, 503)
async def receive():
    """Customer messages and delivery statuses from the platform (signed with X-Hub-Signature-256)."""
    state = dependencies()
    body = await request.get_data()
    if not verify_signature(state.platform.app_secret, body, request.headers.get("X-Hub-Signature-256")):
        state.metrics.platform_webhook_received("invalid_signature")
        raise ApiError(401, "invalid_signature", "X-Hub-Signature-256 is missing or does not match the body.")
    if not is_utf8(body):  # checked after the signature, which covers the raw bytes
        state.metrics.platform_webhook_received("invalid_envelope")
        raise ApiError(400, "invalid_envelope", f"The webhook body is not a WhatsApp envelope: {NOT_UTF8}.")
    try:
        batches = parse_envelope(body)
    except InvalidEnvelope as err:
        state.metrics.platform_webhook_received("invalid_envelope")
        raise ApiError(400, "invalid_envelope", f"The webhook body is not a WhatsApp envelope: {err}") from None
    delivery = await inbound.deliver(state.db, state.actors, state.platform, batches)
    state.metrics.platform_webhook_received("stored" if delivery.stored else "not_stored",
                                            messages=delivery.messages, statuses=delivery.statuses)
    if not delivery.stored:
        # Some items are not committed: let the platform retry the whole delivery (the rest de-duplicates).
        return json_response({"error": "not_stored", "message": "; ".join(delivery.failures[:5])}, 503,
                             {"Retry-After": database_outage.RETRY_AFTER})
    return json_response({"received": True})

