"""The platform's webhook, `/webhooks/whatsapp`: Meta's verification handshake and the signed deliveries.

A delivery is answered 200 only after everything it carried is committed, so the platform retries anything
else; retries are harmless because a message id is stored once and a late status never moves a message
backwards. Customer messages go to their chats' actors first (one customer's in the order they came, different
customers in parallel); then the statuses go to the workspace's status writer, which records most of them in bulk
and hands the rest to their chats' actors.
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
from inbox_actors.conversations.status_writer import write_statuses
from inbox_actors.domain.phones import platform_phone
from inbox_actors.platform.envelope import InvalidEnvelope, parse_envelope, verify_signature
from inbox_actors.platform.messages import StatusUpdate
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
    chats: dict[tuple[int, str], list[object]] = defaultdict(list)
    statuses: dict[int, list[StatusUpdate]] = defaultdict(list)
    for batch in batches:
        workspace_id = await state.platform.workspace_of(state.db, batch.phone_number_id)
        if workspace_id is None:
            log.warning("webhook for unknown phone_number_id %s dropped", batch.phone_number_id)
            continue
        for message in batch.messages:
            _add(chats, workspace_id, message.from_phone, conversation.CustomerWrote(message))
        statuses[workspace_id].extend(batch.statuses)
    failures: list[str] = []
    # Customer messages first, then statuses: a status judged after a message the same envelope carried sees it.
    await _deliver(chats, failures)
    chats.clear()
    for workspace_id, updates in statuses.items():
        # Most statuses are written in bulk for the whole workspace; those a chat must judge go to its actor
        # (status_writer.py), which finds the chat's row whatever spelling of the number the platform reports.
        try:
            written = await write_statuses(state.actors, workspace_id, updates)
        except (ActorError, DatabaseUnavailable) as err:
            log.warning("webhook statuses for workspace %s not stored: %s", workspace_id, err)
            failures.append(f"statuses: {type(err).__name__}")
            continue
        for phone, update in written.for_chats:
            _add(chats, workspace_id, phone, conversation.StatusReported(update))
    await _deliver(chats, failures)
    state.metrics.platform_webhook_received(
        "not_stored" if failures else "stored", messages=sum(len(batch.messages) for batch in batches),
        statuses=sum(len(batch.statuses) for batch in batches))
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


async def _deliver(chats: dict[tuple[int, str], list[object]], failures: list[str]) -> None:
    """Each chat's items to its actor in order, up to PARALLEL_CHATS chats at once."""
    if not chats:
        return
    limiter = trio.CapacityLimiter(PARALLEL_CHATS)
    async with trio.open_nursery() as nursery:
        for (workspace_id, phone), items in chats.items():
            nursery.start_soon(partial(_deliver_to_chat, workspace_id, phone, items, limiter, failures))


async def _deliver_to_chat(workspace_id: int, phone: str, items: list[object], limiter: trio.CapacityLimiter,
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
