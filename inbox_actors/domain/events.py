"""Outbound webhook events: the kinds the spec lists, which plan may receive each, and correlation ids.

Every change an event describes appends it to the outbox in the same transaction as the change (see
`persistence/queries/outbox.py`); delivery reads the outbox later. `data` carries, besides the change itself,
an `at` timestamp (ISO 8601 UTC), so receivers can order events as the spec tells them to.
"""

from __future__ import annotations

import secrets
import time
from datetime import datetime, timezone

MESSAGE_RECEIVED = "message_received"
MESSAGE_SENT = "message_sent"
CONTACT_CREATED = "contact_created"
HANDOFF = "handoff"
TAG_ADDED = "tag_added"
MESSAGE_STATUS = "message_status"
CONVERSATION_SEEN = "conversation_seen"
CONVERSATION_ASSIGNED = "conversation_assigned"
CONVERSATION_RESOLVED = "conversation_resolved"
SLA_BREACHED = "sla_breached"
CREDITS_THRESHOLD = "credits_threshold"

CORE_EVENTS = (MESSAGE_RECEIVED, MESSAGE_SENT, CONTACT_CREATED, HANDOFF, TAG_ADDED)
SCALE_EVENTS = (MESSAGE_STATUS, CONVERSATION_SEEN, CONVERSATION_ASSIGNED, CONVERSATION_RESOLVED, SLA_BREACHED,
                CREDITS_THRESHOLD)
ALL_EVENTS = CORE_EVENTS + SCALE_EVENTS

CORRELATION_PREFIX = "evt"


def new_correlation_id() -> str:
    """`evt_<milliseconds, base 36>_<96 random bits, hex>`: the spec's <prefix>_<token>_<token>, unique per
    event and roughly ordered by creation for whoever reads a delivery log."""
    return f"{CORRELATION_PREFIX}_{_base36(time.time_ns() // 1_000_000)}_{secrets.token_hex(12)}"


def iso(moment: datetime | None) -> str | None:
    """ISO 8601 in UTC with a Z, as webhooks carry timestamps."""
    if moment is None:
        return None
    return moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if number == 0:
            return out
