"""A chat's trail, as a person reads it beside the messages: who claimed, released, transferred and resolved it (its
assignment events, as the assignment history has them), and who put labels on it or took them off and snoozed it
or ended a snooze (the team audit log's entries about the chat, written in the transaction of each change)."""

from __future__ import annotations

from datetime import datetime

import msgspec

from inbox_actors.domain import team_audit
from inbox_actors.domain.member_ref import MemberRef
from persistence.database import Database, Record
from persistence.queries.reporting import chat_trail as queries

# The audit log's entries about a chat that belong in its trail, and what each is called there.
_AUDITED = {team_audit.LABELED: "labeled", team_audit.UNLABELED: "unlabeled", team_audit.SNOOZED: "snoozed",
            team_audit.UNSNOOZED: "unsnoozed"}
TRAIL_SIZE = 200


class TrailEntry(msgspec.Struct, frozen=True):
    at: datetime
    action: str
    """claimed, released, transferred, resolved (assignment events); labeled, unlabeled, snoozed, unsnoozed."""
    by: MemberRef | None
    """Who acted (None: the service itself, e.g. the snooze clock)."""
    to: MemberRef | None = None
    """A claim's or a transfer's member."""
    reason: str | None = None
    label: str | None = None
    until: datetime | None = None
    """A snooze's end; None with `snoozed`: until the customer writes."""


def _ref(member_id: int | None, name: str | None) -> MemberRef | None:
    return MemberRef(member_id, name) if member_id else None


def _entry(row: Record) -> TrailEntry:
    by = _ref(row["by_member"], row["by_name"])
    if row["kind"] == "assignment":
        return TrailEntry(row["at"], row["action"], by, to=_ref(row["to_member"], row["to_name"]),
                          reason=row["reason"])
    details = msgspec.json.decode(row["details"] or "{}")
    until = details.get("until")
    return TrailEntry(row["at"], _AUDITED[row["action"]], by, label=details.get("label"),
                      until=datetime.fromisoformat(until) if until else None)


async def chat_trail(db: Database, workspace_id: int, conversation_id: int, phone: str,
                     since: datetime | None) -> list[TrailEntry]:
    """The chat's trail from `since` (None: its whole life), oldest first; the newest TRAIL_SIZE entries."""
    rows = await queries.trail(db, workspace_id, conversation_id, phone, tuple(_AUDITED), since, TRAIL_SIZE)
    return [_entry(row) for row in reversed(rows)]


def handed_over_to(trail: list[TrailEntry], member_id: int) -> TrailEntry | None:
    """The transfer that gave the chat to this member, when it is the chat's latest assignment event."""
    for entry in reversed(trail):
        if entry.action in ("claimed", "released", "transferred", "resolved"):
            return entry if entry.action == "transferred" and entry.to and entry.to.user_id == member_id else None
    return None
