"""Members' availability: whether each is there to take chats, online, busy or offline.

A member chooses their status (`choose`); the service makes it offline when no page of theirs has been open for the
workspace's idle time, and outside the business hours (the SLA policy's) unless they chose it while the workspace
was closed: a choice made after hours holds until the next opening. The rule is `effective`; who is seen when is
written with PostgreSQL's clock and judged by it, so that every node answers alike.

Why rows and not an actor: each write is one statement that reads nothing first (a status replaced, a seen time
moved forward, never back), so requests that race on it cannot undo each other, and whether a member is seen must
hold across nodes. A page's live stream is served by the node that held the workspace when it connected and stays
there when the workspace moves to another node (rebalancing moves new requests only); a count of open pages kept by
the workspace's actors would lose it. Each open stream says it is there every `beat_seconds` instead (`PageBeat`),
and idleness is read from the last time one did.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

import msgspec

from inbox_actors.domain import team_audit
from inbox_actors.domain.business_hours import BusinessHours, parse_business_hours, sla_deadline
from inbox_actors.domain.member_ref import MemberRef
from persistence.database import Database, Record, UnitOfWork
from persistence.queries import availability as queries
from persistence.queries import team_audit as audit_queries
from persistence.statement_fence import fencing_statements

STATUSES = ("online", "busy", "offline")
DEFAULT_IDLE_SECONDS = 300
MIN_IDLE_SECONDS, MAX_IDLE_SECONDS = 5, 86_400
MAX_BEAT_SECONDS = 15.0
"""A page says it is open at least this often (and three times per idle time), so that an open page never looks
idle: the live stream's keep-alive already wakes it this often."""
SUBJECT = "availability"

Status = Literal["online", "busy", "offline"]
Reason = Literal["chosen", "no_open_page", "outside_business_hours", "not_active"]


class Availability(msgspec.Struct, frozen=True):
    status: Status
    """What the member is now: what they chose, unless `reason` says why they are offline instead."""
    chosen: Status
    """What they chose (online until they choose)."""
    reason: Reason
    """chosen (status is their choice), no_open_page (no page of theirs open for the idle time),
    outside_business_hours (the workspace is closed and they chose before it closed), not_active (suspended or
    removed)."""
    chosen_at: datetime | None
    seen_at: datetime | None
    """The last time a page of theirs was open, or they chose their status."""
    chosen_until: datetime | None
    """A choice made while the workspace was closed holds until this opening (null: it was made in open hours, or
    there are no business hours)."""


class MemberAvailability(Availability, frozen=True):
    user_id: int


class TeamAvailability(msgspec.Struct, frozen=True):
    data: list[MemberAvailability]
    idle_seconds: int
    business_hours_open: bool
    """Whether the workspace is inside its business hours now (true without business hours)."""


class AvailabilitySettings(msgspec.Struct, frozen=True):
    idle_seconds: int
    """How long after the last page of a member closed they count as offline."""
    updated_at: datetime | None
    updated_by: MemberRef | None


def effective(row: Record, now: datetime, idle_seconds: int, hours_open: bool) -> Availability:
    """The rule, for one member's row (members_availability's)."""
    chosen, seen_at, until = row["chosen"], row["seen_at"], row["after_hours_until"]
    if row["member_status"] != "active":
        status, reason = "offline", "not_active"
    elif chosen == "offline":
        status, reason = "offline", "chosen"
    elif seen_at is None or seen_at < now - timedelta(seconds=idle_seconds):
        status, reason = "offline", "no_open_page"
    elif not hours_open and (until is None or until <= now):
        status, reason = "offline", "outside_business_hours"
    else:
        status, reason = chosen, "chosen"
    return Availability(status, chosen, reason, row["chosen_at"], seen_at,
                        until if until is not None and until > now else None)


async def availability(db: Database | UnitOfWork, workspace_id: int, member_ids: list[int] | None = None
                       ) -> TeamAvailability:
    """Every member's availability now (only `member_ids`, when given), oldest member first."""
    rows = await queries.members_availability(db, workspace_id, member_ids, DEFAULT_IDLE_SECONDS)
    if not rows:
        return TeamAvailability([], DEFAULT_IDLE_SECONDS, True)
    now, idle = rows[0]["now"], rows[0]["idle_seconds"]
    hours_open = is_open(_hours(rows[0]["business_hours"]), now)
    return TeamAvailability(
        [MemberAvailability(**msgspec.structs.asdict(effective(row, now, idle, hours_open)), user_id=row["member_id"])
         for row in rows if row["member_id"] is not None], idle, hours_open)


async def of_members(db: Database | UnitOfWork, workspace_id: int, member_ids: list[int]) -> dict[int, Availability]:
    """The availability of these members, by id: what the roster shows beside each."""
    found = await availability(db, workspace_id, member_ids)
    return {one.user_id: Availability(one.status, one.chosen, one.reason, one.chosen_at, one.seen_at,
                                      one.chosen_until) for one in found.data}


async def choose(db: Database, workspace_id: int, member_id: int, status: str) -> Availability:
    """The member's own choice. Made while the workspace is closed, it holds until the next opening."""
    async with db.transaction() as tx:
        context = await queries.workspace_context(tx, workspace_id, DEFAULT_IDLE_SECONDS)
        hours = _hours(context["business_hours"])
        until = None if is_open(hours, context["now"]) else sla_deadline(context["now"], 0, hours)
        await queries.choose(tx, workspace_id, member_id, status, until)
    return (await of_members(db, workspace_id, [member_id]))[member_id]


def is_open(hours: BusinessHours | None, now: datetime) -> bool:
    """Whether `now` is inside an opening (always, without business hours): the next instant of open time is now."""
    return hours is None or sla_deadline(now, 0, hours) == now


def _hours(stored: str | None) -> BusinessHours | None:
    return parse_business_hours(msgspec.json.decode(stored)) if stored is not None else None


# -- the workspace's setting --------------------------------------------------------------------------------


async def read_settings(db: Database, workspace_id: int) -> AvailabilitySettings:
    row = await queries.settings(db, workspace_id)
    if row is None:
        return AvailabilitySettings(DEFAULT_IDLE_SECONDS, None, None)
    by = MemberRef(row["updated_by"], row["updated_by_name"]) if row["updated_by"] else None
    return AvailabilitySettings(row["idle_seconds"], row["updated_at"], by)


async def save_settings(db: Database, workspace_id: int, member_id: int | None, via: str, idle_seconds: int,
                        now: datetime) -> AvailabilitySettings:
    """Save the idle time (recorded in the team audit log); it applies to every member at once."""
    async with db.transaction() as tx:
        before = await queries.settings(tx, workspace_id)
        await queries.save_settings(tx, workspace_id, idle_seconds, member_id)
        await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=member_id, via=via,
                                   action=team_audit.AVAILABILITY_CHANGED, subject=SUBJECT,
                                   details={"idle_seconds": idle_seconds,
                                            "from": before["idle_seconds"] if before else DEFAULT_IDLE_SECONDS})
    return await read_settings(db, workspace_id)


# -- an open page ------------------------------------------------------------------------------------------


def beat_seconds(idle_seconds: int) -> float:
    """How often an open page says so: often enough that it never looks idle between two beats."""
    return min(MAX_BEAT_SECONDS, idle_seconds / 3)


class PageBeat:
    """An open page's heartbeat (the live stream's): `beat()` when `due()`, and wait at most `wait_limit()`."""

    def __init__(self, db: Database, workspace_id: int, member_id: int) -> None:
        self._db, self._workspace_id, self._member_id = db, workspace_id, member_id
        self._interval = beat_seconds(DEFAULT_IDLE_SECONDS)
        self._next: float | None = None

    def due(self, at: float) -> bool:
        return self._next is None or at >= self._next

    def wait_limit(self, at: float) -> float:
        """Seconds until the next beat is due (at `at`, the caller's monotonic clock)."""
        return 0.0 if self._next is None else max(0.0, self._next - at)

    async def beat(self, at: float) -> None:
        """Mark the member seen now, and learn the workspace's idle time (it may have changed) for the next beat."""
        # Not under the workspace's lease fence: the page is open on this node, whichever node holds the workspace
        # now, and saying so changes nothing the workspace's node owns.
        with fencing_statements(None):
            idle = await queries.seen(self._db, self._workspace_id, self._member_id, DEFAULT_IDLE_SECONDS)
        self._interval = beat_seconds(idle)
        self._next = at + self._interval
