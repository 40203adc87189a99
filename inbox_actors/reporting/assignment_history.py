"""Who held a chat: claims, releases, transfers and resolutions, newest first.

The answer holds every event of the chat, never a first part. Events the conversation actor records are
`source: events`, exact from `detailed_since` (when the workspace began recording here). `source: audit` rows are
rebuilt from an earlier system's team audit log by `inbox-actors import audit-log` (team/audit_import.py), only from
before `detailed_since`.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.reporting.chat_lookup import find_chat
from persistence.database import Database
from persistence.queries.reporting import attention as queries


class AssignmentEvent(msgspec.Struct, frozen=True, rename={"from_": "from"}):
    event: str
    at: datetime
    from_: MemberRef | None
    to: MemberRef | None
    by: MemberRef | None
    reason: str | None
    source: str


class AssignmentHistory(msgspec.Struct, frozen=True):
    phone: str
    data: list[AssignmentEvent]
    detailed_since: datetime | None


def _ref(member_id: int | None, name: str | None) -> MemberRef | None:
    return MemberRef(member_id, name) if member_id else None


async def assignment_history(db: Database, workspace_id: int, raw_phone: str,
                             restricted_to: int | None) -> AssignmentHistory:
    phone, chat = await find_chat(db, workspace_id, raw_phone, restricted_to)
    rows = await queries.assignment_history(db, chat["id"])
    return AssignmentHistory(phone, [
        AssignmentEvent(row["event"], row["at"], _ref(row["from_member"], row["from_name"]),
                        _ref(row["to_member"], row["to_name"]), _ref(row["by_member"], row["by_name"]),
                        row["reason"], row["source"])
        for row in rows
    ], chat["recorded_from"])
