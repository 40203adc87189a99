"""The team audit log, read: who did what to which chat, member, key or policy, and when, newest first.

Entries are written by the changes themselves, in their transactions (team actions on chats, the roster, the SLA
policy, API keys), so the log holds exactly what happened. Kept `RETENTION` (a year); the hourly retention timer
prunes what is older.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import msgspec

from inbox_actors.domain import team_audit
from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.paging import cursors, parameters
from inbox_actors.paging.windows import Window, window
from persistence.database import Database, Record
from persistence.queries import team_audit as queries

Args = Mapping[str, str | None]
DEFAULT_LIMIT = 50
CURSOR_KIND = "team-audit"
# (default days, longest days) of a window.
AUDIT_WINDOW = (30, team_audit.RETENTION.days)


class AuditEntry(msgspec.Struct, frozen=True):
    id: int
    at: datetime
    action: str
    actor: MemberRef | None                 # who acted (None: the operator's command line)
    via: str                                # api_key:<id>, member:<id> (a dashboard session) or operator
    subject: str                            # a chat's phone, member:<id>, key:<id>, or sla
    details: dict


class AuditPage(msgspec.Struct, frozen=True):
    data: list[AuditEntry]
    next_cursor: str | None
    window: Window


async def audit_log(db: Database, workspace_id: int, args: Args, now: datetime) -> AuditPage:
    action = parameters.choice(args.get("action"), "action", team_audit.ACTIONS)
    member_id = parameters.member_id(args.get("member_id"), "member_id")
    limit = parameters.limit(args.get("limit"), DEFAULT_LIMIT)
    position = cursors.decode(args, CURSOR_KIND, datetime, datetime, datetime, int)
    span = Window(position[0], position[1]) if position else window(args, now, AUDIT_WINDOW)
    rows = await queries.entries(db, workspace_id, start=span.start, end=span.end, action=action,
                                 member_id=member_id, after=(position[2], position[3]) if position else None,
                                 limit=limit + 1)
    page, more = rows[:limit], len(rows) > limit
    next_cursor = (cursors.encode(CURSOR_KIND, args, span.start, span.end, page[-1]["at"], page[-1]["id"])
                   if more else None)
    return AuditPage([_entry(row) for row in page], next_cursor, span)


def _entry(row: Record) -> AuditEntry:
    actor = MemberRef(row["member_id"], row["member_name"]) if row["member_id"] else None
    return AuditEntry(row["id"], row["at"], row["action"], actor, row["via"], row["subject"],
                      msgspec.json.decode(row["details"]))


async def prune_expired(db: Database) -> int:
    """Delete entries older than the retention by PostgreSQL's clock (a node-wide sweep); how many."""
    return await queries.prune(db, team_audit.RETENTION)
