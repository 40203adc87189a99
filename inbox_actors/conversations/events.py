"""The `data` of the webhook events a conversation emits, built from the rows just written.

The spec leaves each event's data open; these shapes are ours (docs/webhooks.md lists them). Every data object
names the chat's `phone` and carries `at`, the moment of the change, so receivers can order events.
Envelope `actor`: who caused the change; docs/webhooks.md lists every value the code writes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from inbox_actors.domain.events import iso
from persistence.database import Record


def member_ref(member_id: int | None, names: dict[int, str]) -> dict[str, Any] | None:
    return None if member_id is None else {"user_id": member_id, "name": names.get(member_id)}


def message_data(phone: str, message: Record, names: dict[int, str]) -> dict[str, Any]:
    """message_received and message_sent."""
    return {
        "phone": phone,
        "id": message["id"],
        "message_id": message["platform_message_id"],
        "sender_type": message["sender_type"],
        "actor": member_ref(message["actor_id"], names),
        "sender_label": message["sender_label"],
        "type": message["type"],
        "text": message["text"],
        "template_name": message["template_name"],
        "media_url": message["media_url"],
        "status": message["status"],
        "sent_at": iso(message["sent_at"]),
        "at": iso(message["sent_at"]),
    }


def status_data(phone: str, message: Record, status: str, platform_at: datetime, error_code: int | None,
                error_title: str | None, at: datetime) -> dict[str, Any]:
    """message_status: `timestamp` is the platform's time of the status, `at` when it was recorded."""
    return {
        "phone": phone,
        "id": message["id"],
        "message_id": message["platform_message_id"],
        "status": status,
        "timestamp": iso(platform_at),
        "error_code": error_code,
        "error_title": error_title,
        "at": iso(at),
    }


def handoff_data(phone: str, reason: str, at: datetime) -> dict[str, Any]:
    return {"phone": phone, "reason": reason, "handover_at": iso(at), "at": iso(at)}


def assignment_data(phone: str, event: str, state: str, from_member: int | None, to_member: int | None,
                    by_member: int | None, reason: str | None, names: dict[int, str], at: datetime) -> dict[str, Any]:
    """conversation_assigned (claimed, released, transferred) and conversation_resolved."""
    return {
        "phone": phone,
        "event": event,
        "state": state,
        "from": member_ref(from_member, names),
        "to": member_ref(to_member, names),
        "by": member_ref(by_member, names),
        "reason": reason,
        "at": iso(at),
    }


def sla_breach_data(phone: str, row: Record, sla_seconds: int | None, names: dict[int, str],
                    at: datetime) -> dict[str, Any]:
    """sla_breached: the wait for a person that passed its deadline, and who holds the chat."""
    return {
        "phone": phone,
        "state": row["state"],
        "assigned_to": member_ref(row["assigned_to"], names),
        "waiting_for_person_since": iso(row["waiting_for_person_since"]),
        "deadline": iso(row["sla_deadline_at"]),
        "sla_seconds": sla_seconds,
        "at": iso(at),
    }


def seen_data(phone: str, member_id: int, names: dict[int, str], marked_read: int, at: datetime) -> dict[str, Any]:
    return {"phone": phone, "user": member_ref(member_id, names), "opened_at": iso(at), "marked_read": marked_read,
            "at": iso(at)}


def chat_changed_data(phone: str, change: str, at: datetime) -> dict[str, Any]:
    """chat_changed (screens only, never a webhook): `change` is note, labels, snooze or read."""
    return {"phone": phone, "change": change, "at": iso(at)}


def note_mentions_data(changed: dict[str, Any], note_id: int, writer: int, names: dict[int, str],
                       mentioned: list[int]) -> dict[str, Any]:
    """A note's chat_changed that mentions members: also the note, its writer and the members it names (ids), whose
    screens tell them (`live/event_stream.py` passes each screen only whether it names its member)."""
    return {**changed, "note": note_id, "by": member_ref(writer, names), "mentioned": mentioned}


def csat_data(phone: str, survey: Record, names: dict[int, str], team_name: str | None,
              at: datetime) -> dict[str, Any]:
    """csat_received: the survey as it stands after the change (a rating, then maybe a comment), and the member and
    team it is credited to."""
    return {
        "phone": phone,
        "survey_id": survey["id"],
        "rating": survey["rating"],
        "comment": survey["comment"],
        "member": member_ref(survey["member_id"], names),
        "team": None if survey["team_id"] is None else {"id": survey["team_id"], "name": team_name},
        "resolved_at": iso(survey["resolved_at"]),
        "rated_at": iso(survey["rated_at"]),
        "commented_at": iso(survey["commented_at"]),
        "at": iso(at),
    }
