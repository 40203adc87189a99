"""The `data` of the contact webhook events, built from a contact row: `contact_created` (whoever creates the
contact: the contact card, or a chat's first contact) and `tag_added`.

Like every event's data it carries an `at` timestamp (ISO 8601 UTC) beside the change itself.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from inbox_actors.domain.events import iso
from persistence.database import Record
from persistence.queries.contacts import contact_attributes


def contact_event_data(row: Record) -> dict[str, Any]:
    """The `data` of a `contact_created` webhook event."""
    return {
        "phone": row["phone"],
        "name": row["name"],
        "email": row["email"],
        "company": row["company"],
        "status": row["status"],
        "tags": list(row["tags"] or []),
        "custom_attributes": contact_attributes(row),
        "opted_out": row["opted_out"],
        "created_at": iso(row["created_at"]),
        "at": iso(row["created_at"]),
    }


def tag_event_data(row: Record, tag: str, at: datetime) -> dict[str, Any]:
    """The `data` of a `tag_added` webhook event: the tag, and the contact's tags after the change."""
    return {
        "phone": row["phone"],
        "name": row["name"],
        "tag": tag,
        "tags": list(row["tags"] or []),
        "at": iso(at),
    }
