"""The connectors' triggers: every outbound webhook event (`inbox_actors.domain.events`) under a label a Zapier or
Make user recognises, with a documented example item. An item, delivered or polled, is the webhook envelope with
an `id` first (the event's correlation id, the platforms' key for de-duplication):

    {"id": "evt_…", "event": "message_received", "sent_at": "…", "correlation_id": "evt_…", "actor": "customer",
     "data": {…}}

The plan rules are the outbound webhooks': Growth the 5 core events, Scale all of them.
"""

from __future__ import annotations

from typing import Any

from inbox_actors.connectors.model import Trigger
from inbox_actors.domain import events
from inbox_actors.domain.plans import Plan

_AT = "2026-01-15T09:30:00Z"
_PHONE = "919876543210"
_MESSAGE = {"phone": _PHONE, "id": 1201, "message_id": "wamid.HBgMOTE5ODc2NTQzMjEw", "sender_type": "customer",
            "actor": None, "sender_label": None, "type": "text", "text": "Is the blue one in stock?",
            "template_name": None, "media_url": None, "status": "received", "sent_at": _AT, "at": _AT}
_ASSIGNMENT = {"phone": _PHONE, "state": "HUMAN_ACTIVE", "from": None, "to": {"user_id": 7, "name": "Asha"},
               "by": {"user_id": 7, "name": "Asha"}, "reason": None, "at": _AT}

# event: (label, noun, example data)
_TRIGGERS: dict[str, tuple[str, str, dict[str, Any]]] = {
    events.MESSAGE_RECEIVED: ("New inbound message", "Message", _MESSAGE),
    events.MESSAGE_SENT: ("New outbound message", "Message", {
        **_MESSAGE, "id": 1202, "message_id": "wamid.HBgMOTE5ODc2NTQzMjEx", "sender_type": "agent",
        "actor": {"user_id": 7, "name": "Asha"}, "sender_label": "Asha", "text": "Yes, it ships today.",
        "status": "sent"}),
    events.CONTACT_CREATED: ("New contact", "Contact", {
        "phone": _PHONE, "name": "Ravi Kumar", "email": None, "company": None, "status": "New", "tags": [],
        "custom_attributes": {}, "opted_out": False, "created_at": _AT, "at": _AT}),
    events.HANDOFF: ("Chat handed to the team", "Hand-off", {
        "phone": _PHONE, "reason": "The customer asked for a person.", "handover_at": _AT, "at": _AT}),
    events.TAG_ADDED: ("Tag added to a contact", "Tag", {
        "phone": _PHONE, "name": "Ravi Kumar", "tag": "vip", "tags": ["vip"], "at": _AT}),
    events.MESSAGE_STATUS: ("Message delivered, read or failed", "Status", {
        "phone": _PHONE, "id": 1202, "message_id": "wamid.HBgMOTE5ODc2NTQzMjEx", "status": "delivered",
        "timestamp": _AT, "error_code": None, "error_title": None, "at": _AT}),
    events.CONVERSATION_SEEN: ("Chat opened by a member", "View", {
        "phone": _PHONE, "user": {"user_id": 7, "name": "Asha"}, "opened_at": _AT, "marked_read": 2, "at": _AT}),
    events.CONVERSATION_ASSIGNED: ("Chat claimed, released or transferred", "Assignment",
                                   {**_ASSIGNMENT, "event": "claimed"}),
    events.CONVERSATION_RESOLVED: ("Chat resolved", "Resolution", {
        **_ASSIGNMENT, "event": "resolved", "state": "AI_ONLY", "from": {"user_id": 7, "name": "Asha"}, "to": None}),
    events.SLA_BREACHED: ("SLA breached", "Breach", {
        "phone": _PHONE, "state": "HANDOFF_PENDING", "assigned_to": None, "waiting_for_person_since": _AT,
        "deadline": "2026-01-15T09:45:00Z", "sla_seconds": 900, "at": "2026-01-15T09:45:00Z"}),
    events.CREDITS_THRESHOLD: ("Credits below a level", "Credit alert", {
        "level": 1000, "balance": 990, "previous_balance": 1010, "at": _AT}),
    events.CSAT_RECEIVED: ("Satisfaction rating received", "Rating", {
        "phone": _PHONE, "survey_id": 88, "rating": 5, "comment": "Quick and friendly, thank you!",
        "member": {"user_id": 7, "name": "Asha"}, "team": {"id": 3, "name": "Billing"},
        "resolved_at": "2026-01-15T09:20:00Z", "rated_at": "2026-01-15T09:25:00Z", "commented_at": _AT, "at": _AT}),
}
assert tuple(_TRIGGERS) == tuple(sorted(_TRIGGERS, key=events.ALL_EVENTS.index)) and set(_TRIGGERS) == set(
    events.ALL_EVENTS), "a trigger per event, in the catalog's order"

EXAMPLE_ID_PREFIX = "example_"


def example_item(event: str) -> dict[str, Any]:
    """The documented example of an event's item (its id says it is one: `example_<event>`)."""
    return {"id": f"{EXAMPLE_ID_PREFIX}{event}", "event": event, "sent_at": _AT,
            "correlation_id": f"{EXAMPLE_ID_PREFIX}{event}", "actor": _example_actor(event),
            "data": _TRIGGERS[event][2]}


def _example_actor(event: str) -> str:
    if event in (events.MESSAGE_RECEIVED, events.CONTACT_CREATED):
        return "customer"
    if event == events.HANDOFF:
        return "bot"
    if event == events.MESSAGE_STATUS:
        return "platform"
    if event in (events.SLA_BREACHED, events.CREDITS_THRESHOLD):
        return "system"
    return "member:7"


def triggers(plan: Plan) -> list[Trigger]:
    allowed = events.events_in_plan(plan)
    return [Trigger(key=entry.event, label=_TRIGGERS[entry.event][0], noun=_TRIGGERS[entry.event][1],
                    description=entry.description, plan=entry.plan, available=entry.event in allowed,
                    sample=example_item(entry.event))
            for entry in events.CATALOG]


def is_event(name: str) -> bool:
    return name in _TRIGGERS
