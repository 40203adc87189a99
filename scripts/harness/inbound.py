"""Customers writing, as the platform delivers their messages: a signed envelope of one message posted to the
service's webhook by the script itself (a separate simulator's own posts are its business, and their answers out of
the script's sight), so that the script sees every answer the platform would."""

from __future__ import annotations

from datetime import datetime, timezone

import httpx

from inbox_actors.platform.payloads import InboundMessage
from inbox_actors.platform.webhook_envelope import build_envelope, sign

WEBHOOK = "/webhooks/whatsapp"


async def customer_writes(http: httpx.AsyncClient, app_secret: str, phone_number_id: str, phone: str,
                          message_id: str, text: str) -> httpx.Response:
    """One delivery of one customer message, answered as the platform would be (200 once stored)."""
    message = InboundMessage(message_id=message_id, from_phone=phone, at=datetime.now(timezone.utc), type="text",
                             text=text, profile_name="Customer")
    body = build_envelope(phone_number_id, "15550000000", messages=[message])
    return await http.post(WEBHOOK, content=body, headers={"Content-Type": "application/json",
                                                           "X-Hub-Signature-256": sign(app_secret, body)})
