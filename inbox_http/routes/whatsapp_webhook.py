"""The platform's webhook, `/webhooks/whatsapp`: Meta's verification handshake and the signed deliveries.

A delivery is answered 200 only after everything it carried is committed, so the platform retries anything
else; retries are harmless because a message id is stored once and a late status never moves a message
backwards. Items for one customer are handled in the order they came; different customers in parallel.
A delivery for a number no workspace owns is acknowledged and dropped (retrying would not help).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from functools import partial

import msgspec
import trio
from quart import Blueprint, Response, request

from inbox_actors.conversations import conversation
from inbox_actors.conversations.chat_lookup import chats_of_statuses
from inbox_actors.domain.phones import platform_phone
from inbox_actors.platform.envelope import InvalidEnvelope, parse_envelope, verify_signature
from inbox_actors.reporting.parameter_catalog import QueryParameter
from inbox_actors.runtime import ActorError
from inbox_http.contract import answers, takes
from inbox_http.encoding import json_response
from inbox_http.errors import ApiError
from inbox_http.guard import accepts, responds
from inbox_http.json_body import NOT_UTF8, is_utf8
from inbox_http.services import services
from persistence.database import DatabaseUnavailable

log = logging.getLogger("inbox_http.whatsapp_webhook")

blueprint = Blueprint("whatsapp_webhook", __name__, url_prefix="/webhooks/whatsapp")

# How many customers' items one delivery works on at once. A chat's items wait in its actor's mailbox (behind
# the bot's send, say), not on a connection, so this is set well above the database pool: at 16 a delivery
# of 100 statuses took longer than the platform waits (measured with scripts/load_chats.py).
PARALLEL_CHATS = 64

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
    link = services().platform
    if request.args.get("hub.mode") != "subscribe" or request.args.get("hub.verify_token") != link.verify_token:
        raise ApiError(403, "verification_failed", "hub.mode must be subscribe and hub.verify_token must match.")
    return Response(request.args.get("hub.challenge", ""), 200, content_type="text/plain")


@blueprint.post("")
@responds(Received)
@takes(ENVELOPE)
@answers(401, 503)
async def receive():
    """Customer messages and delivery statuses from the platform (signed with X-Hub-Signature-256)."""
    state = services()
    body = await request.get_data()
    if not verify_signature(state.platform.app_secret, body, request.headers.get("X-Hub-Signature-256")):
        raise ApiError(401, "invalid_signature", "X-Hub-Signature-256 is missing or does not match the body.")
    if not is_utf8(body):  # checked after the signature, which covers the raw bytes
        raise ApiError(400, "invalid_envelope", f"The webhook body is not a WhatsApp envelope: {NOT_UTF8}.")
    try:
        batches = parse_envelope(body)
    except InvalidEnvelope as err:
        raise ApiError(400, "invalid_envelope", f"The webhook body is not a WhatsApp envelope: {err}") from None
    work: dict[tuple[int, str], list[object]] = defaultdict(list)
    for batch in batches:
        workspace_id = await state.platform.workspace_of(state.db, batch.phone_number_id)
        if workspace_id is None:
            log.warning("webhook for unknown phone_number_id %s dropped", batch.phone_number_id)
            continue
        for message in batch.messages:
            _add(work, workspace_id, message.from_phone, conversation.CustomerWrote(message))
        # A status goes to the chat its message was sent from, whatever spelling of the number the platform
        # reports back (its WhatsApp id can differ from the number a send used); a send whose answer was lost is
        # found by the callback data its status carries.
        chats = await chats_of_statuses(state.db, workspace_id, batch.statuses)
        for status, phone in zip(batch.statuses, chats):
            _add(work, workspace_id, phone or status.recipient_phone, conversation.StatusReported(status))
    failures: list[str] = []
    limiter = trio.CapacityLimiter(PARALLEL_CHATS)
    async with trio.open_nursery() as nursery:
        for (workspace_id, phone), items in work.items():
            nursery.start_soon(partial(_deliver, workspace_id, phone, items, limiter, failures))
    if failures:
        # Some items are not committed: let the platform retry the whole delivery (the rest de-duplicates).
        return json_response({"error": "not_stored", "message": "; ".join(failures[:5])}, 503)
    return json_response({"received": True})


def _add(work: dict, workspace_id: int, raw_phone: str, item: object) -> None:
    phone = platform_phone(raw_phone)
    if phone is None:
        log.warning("webhook item for unusable phone %r dropped", raw_phone)
        return
    work[(workspace_id, phone)].append(item)


async def _deliver(workspace_id: int, phone: str, items: list[object], limiter: trio.CapacityLimiter,
                   failures: list[str]) -> None:
    actors = services().actors
    async with limiter:
        for item in items:
            try:
                await conversation.ask_conversation(actors, workspace_id, phone, item)
            except (ActorError, DatabaseUnavailable) as err:
                log.warning("webhook item for %s:%s not stored: %s", workspace_id, phone, err)
                failures.append(f"{phone}: {type(err).__name__}")
                return  # later items of this chat wait for the retry, so their order holds
