"""Posting the platform's webhook to the service the way Meta does: signed envelopes, built by hand, so tests
can repeat and reorder them."""

from __future__ import annotations

from datetime import datetime

from inbox_actors.platform.payloads import InboundMessage, StatusUpdate
from inbox_actors.platform.webhook_envelope import build_envelope, sign


async def post_envelope(service, phone_number_id: str, *, messages=(), statuses=(), secret: str | None = None,
                        signature: str | None = None):
    body = build_envelope(phone_number_id, "15550000000", messages=messages, statuses=statuses)
    secret = secret if secret is not None else service.app.extensions["inbox"].platform.app_secret
    headers = {"Content-Type": "application/json",
               "X-Hub-Signature-256": signature if signature is not None else sign(secret, body)}
    return await service.client.post("/webhooks/whatsapp", content=body, headers=headers)


def customer_message(message_id: str, phone: str, text: str, at: datetime, name: str = "Ravi") -> InboundMessage:
    return InboundMessage(message_id=message_id, from_phone=phone, at=at, type="text", text=text, profile_name=name)


def status(message_id: str, phone: str, value: str, at: datetime, **extra) -> StatusUpdate:
    return StatusUpdate(message_id=message_id, recipient_phone=phone, status=value, at=at, **extra)
