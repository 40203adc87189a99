"""Outbound webhook events: the kinds the spec lists, their catalog (group, plan, description), which plan may
receive each, and correlation ids.

Every change an event describes appends it to the outbox in the same transaction as the change (see
`persistence/queries/outbox.py`); delivery reads the outbox later. `data` carries, besides the change itself,
an `at` timestamp (ISO 8601 UTC), so receivers can order events as the spec tells them to.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from inbox_actors.domain.plans import Plan

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
# Ours, besides the spec's 11 (docs/webhooks.md#csat_received): a customer rated a resolved chat or commented on
# their rating. A Scale event, as its kin conversation_resolved is.
CSAT_RECEIVED = "csat_received"

CORE_EVENTS = (MESSAGE_RECEIVED, MESSAGE_SENT, CONTACT_CREATED, HANDOFF, TAG_ADDED)
SCALE_EVENTS = (MESSAGE_STATUS, CONVERSATION_SEEN, CONVERSATION_ASSIGNED, CONVERSATION_RESOLVED, SLA_BREACHED,
                CREDITS_THRESHOLD, CSAT_RECEIVED)
ALL_EVENTS = CORE_EVENTS + SCALE_EVENTS

# Not an event kind: what `POST /api/webhook/outbound/test` sends. Nobody subscribes to it.
WEBHOOK_TEST = "webhook_test"

# Not one either: a chat changed in a way only people's screens follow (a note, a label, a snooze begun
# or ended, its unread cleared), `data: {phone, change, at}`. The outbox writes it already finished ("skipped":
# `persistence/queries/outbox.py`), so no webhook endpoint, connector hook, delivery log or backlog ever has it;
# the agent inbox's stream reads it (`live/event_stream.py`).
CHAT_CHANGED = "chat_changed"
SCREEN_ONLY_EVENTS = (CHAT_CHANGED,)

CORRELATION_PREFIX = "evt"


@dataclass(frozen=True)
class CatalogEntry:
    event: str
    group: str
    plan: str
    """"any" (Growth and Scale) or "scale", as the spec's event_catalog says."""
    description: str


CATALOG = (
    CatalogEntry(MESSAGE_RECEIVED, "messages", "any", "A customer's message arrived in a chat."),
    CatalogEntry(MESSAGE_SENT, "messages", "any",
                 "A message was sent to a customer (by a member, the bot or an API key)."),
    CatalogEntry(CONTACT_CREATED, "contacts", "any", "A contact was created (by the API or a first message)."),
    CatalogEntry(HANDOFF, "conversations", "any", "The bot handed a chat to the team."),
    CatalogEntry(TAG_ADDED, "contacts", "any", "A tag was added to a contact."),
    CatalogEntry(MESSAGE_STATUS, "messages", "scale",
                 "An outbound message was delivered, read or failed, with the platform's timestamp."),
    CatalogEntry(CONVERSATION_SEEN, "conversations", "scale", "A member opened a chat."),
    CatalogEntry(CONVERSATION_ASSIGNED, "conversations", "scale",
                 "A chat was claimed, released or transferred."),
    CatalogEntry(CONVERSATION_RESOLVED, "conversations", "scale", "A chat was resolved."),
    CatalogEntry(SLA_BREACHED, "team", "scale",
                 "A customer waited for a person past the workspace's SLA deadline."),
    CatalogEntry(CREDITS_THRESHOLD, "billing", "scale",
                 "The credit balance fell below one of the configured alert levels."),
    CatalogEntry(CSAT_RECEIVED, "conversations", "scale",
                 "A customer rated a resolved chat in its satisfaction survey, or added a comment to their rating."),
)
assert tuple(entry.event for entry in CATALOG) == ALL_EVENTS


def events_in_plan(plan: Plan) -> tuple[str, ...]:
    """The events a workspace on `plan` may receive: none on Starter, the core five on Growth, all on Scale."""
    if plan is Plan.SCALE:
        return ALL_EVENTS
    if plan is Plan.GROWTH:
        return CORE_EVENTS
    return ()


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


def credits_threshold_data(*, level: int, balance: int, previous_balance: int, at: datetime) -> dict[str, object]:
    """The `data` of credits_threshold: the balance fell from at or above `level` to below it (one event per
    level crossed, highest first). Emitted by the credits ledger when a debit crosses a configured level."""
    return {"level": level, "balance": balance, "previous_balance": previous_balance, "at": iso(at)}
