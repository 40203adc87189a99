"""Automatic assignment's settings: how the workspace hands waiting chats to whoever is free (off, round robin or least
busy) and how many open chats a member holds at most before it passes them by. A team setting, recorded in the team
audit log; saving it wakes the workspace's assignment desk (team/assignment_desk.py)."""

from __future__ import annotations

from datetime import datetime

import msgspec

from inbox_actors.domain import team_audit
from inbox_actors.domain.auto_assignment import DEFAULT_CAPACITY, Mode
from inbox_actors.domain.member_ref import MemberRef
from persistence.database import Database
from persistence.queries import assignment as queries
from persistence.queries import team_audit as audit_queries

SUBJECT = "assignment"


class AssignmentSettings(msgspec.Struct, frozen=True):
    mode: Mode
    """off (members take chats from the queue themselves), round_robin or least_busy."""
    capacity: int
    """Open chats a member holds at most before automatic assignment passes them by."""
    updated_at: datetime | None
    updated_by: MemberRef | None


async def read_settings(db: Database, workspace_id: int) -> AssignmentSettings:
    row = await queries.settings(db, workspace_id)
    if row is None:
        return AssignmentSettings("off", DEFAULT_CAPACITY, None, None)
    by = MemberRef(row["updated_by"], row["updated_by_name"]) if row["updated_by"] else None
    return AssignmentSettings(row["mode"], row["capacity"], row["updated_at"], by)


async def save_settings(db: Database, workspace_id: int, member_id: int | None, via: str, mode: Mode, capacity: int,
                        now: datetime) -> AssignmentSettings:
    """Save the settings (recorded in the team audit log with what they were); they apply from the next round."""
    async with db.transaction() as tx:
        before = await queries.settings(tx, workspace_id)
        await queries.save_settings(tx, workspace_id, mode, capacity, member_id)
        await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=member_id, via=via,
                                   action=team_audit.ASSIGNMENT_CHANGED, subject=SUBJECT, details={
                                       "mode": mode, "capacity": capacity,
                                       "from": {"mode": before["mode"], "capacity": before["capacity"]}
                                       if before else {"mode": "off", "capacity": DEFAULT_CAPACITY}})
    return await read_settings(db, workspace_id)
