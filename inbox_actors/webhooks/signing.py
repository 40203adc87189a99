"""An event's request: the envelope's exact bytes and the headers that sign them.

Two signatures go on every request, both over the exact body bytes:
- the spec's `X-Webhook-Signature: sha256=<hex HMAC-SHA256 of the body>`, keyed with the signing secret as
  shown (its UTF-8 bytes, `whsec_` included), with `X-Webhook-Timestamp` beside it, unsigned;
- Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of
  "id.timestamp.body">`, keyed with the secret's base64 part decoded), which also signs the timestamp, so a
  receiver can refuse a replay with that library alone.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
from datetime import datetime

import msgspec

from inbox_actors.domain.events import iso

_encode = msgspec.json.encode


def envelope_body(*, event: str, sent_at: datetime, correlation_id: str, actor: str, data_json: str,
                  item_id: str | None = None) -> bytes:
    """The spec's envelope, `data` spliced in as stored (jsonb text) rather than decoded and encoded again.
    `item_id`: an `id` first (a connector hook's delivery: the item's key for the platform's de-duplication)."""
    return b"".join((
        b'{"id":' + _encode(item_id) + b',"event":' if item_id is not None else b'{"event":', _encode(event),
        b',"sent_at":', _encode(iso(sent_at)),
        b',"correlation_id":', _encode(correlation_id),
        b',"actor":', _encode(actor),
        b',"data":', data_json.encode(), b"}",
    ))


def signed_headers(*, secret: str, body: bytes, event: str, correlation_id: str, timestamp: int
                   ) -> list[tuple[bytes, bytes]]:
    stamp = str(timestamp).encode()
    ident = correlation_id.encode()
    spec_signature = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest().encode()
    standard_key = _standard_key(secret)
    standard_signature = base64.b64encode(
        hmac.new(standard_key, b".".join((ident, stamp, body)), hashlib.sha256).digest())
    return [
        (b"x-webhook-event", event.encode()),
        (b"x-webhook-timestamp", stamp),
        (b"x-correlation-id", ident),
        (b"x-webhook-signature", b"sha256=" + spec_signature),
        (b"webhook-id", ident),
        (b"webhook-timestamp", stamp),
        (b"webhook-signature", b"v1," + standard_signature),
    ]


@functools.lru_cache(maxsize=256)
def _standard_key(secret: str) -> bytes:
    """The key Standard Webhooks libraries derive from a `whsec_<base64>` secret."""
    encoded = secret.removeprefix("whsec_")
    try:
        return base64.b64decode(encoded, validate=True)
    except ValueError:
        return secret.encode()
