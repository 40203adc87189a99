"""The workspace's SLA policy: how long a customer may wait for a person, and the business hours that clock runs in.

Read and saved whole (`GET`/`PUT /api/team/sla`), or its target alone by the operator (`inbox-actors workspace
set-sla`); the rule for deadlines is `domain/business_hours.py`'s. A saved
policy applies to waits that start after it: a chat already waiting keeps the deadline it was given (what its
customer was promised does not move under them), and a wait that starts later is measured by the new policy, read
by the conversation when the wait starts (`ChatState.waiting_for_person`).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated

import msgspec

from inbox_actors.domain import team_audit
from inbox_actors.domain.business_hours import (
    DAYS,
    MAX_HOLIDAYS,
    MAX_OPENINGS_PER_DAY,
    InvalidBusinessHours,
    business_hours_json,
    parse_business_hours,
)
from inbox_actors.domain.member_ref import MemberRef
from persistence.database import Database, Record
from persistence.queries import team_audit as audit_queries
from persistence.queries import workspaces as workspace_queries

MAX_SLA_SECONDS = 30 * 24 * 3600
_TIME = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"
_CLOSE = r"^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$"
_ZONE = r"^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$"


def _schema(**json_schema: object) -> msgspec.Meta:
    """JSON Schema, for the published contract, of what `save_policy` checks after decoding."""
    return msgspec.Meta(extra_json_schema=json_schema)


class OpeningBody(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    # Also checked: close after open, and a day's openings do not overlap.
    open: Annotated[str, msgspec.Meta(pattern=_TIME, description="HH:MM, local time")]
    close: Annotated[str, msgspec.Meta(pattern=_CLOSE, description="HH:MM after open, or 24:00")]


Day = Annotated[list[OpeningBody], msgspec.Meta(min_length=1, max_length=MAX_OPENINGS_PER_DAY)]
Unset = msgspec.UnsetType


class WeeklyBody(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """Openings per day of the week; a day left out is closed."""

    mon: Day | Unset = msgspec.UNSET
    tue: Day | Unset = msgspec.UNSET
    wed: Day | Unset = msgspec.UNSET
    thu: Day | Unset = msgspec.UNSET
    fri: Day | Unset = msgspec.UNSET
    sat: Day | Unset = msgspec.UNSET
    sun: Day | Unset = msgspec.UNSET


class BusinessHoursBody(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    time_zone: Annotated[str, msgspec.Meta(max_length=64, pattern=_ZONE,
                                           description="an IANA time zone, e.g. Asia/Kolkata (also checked: known)")]
    weekly: Annotated[WeeklyBody, _schema(minProperties=1)]
    holidays: Annotated[list[date], msgspec.Meta(max_length=MAX_HOLIDAYS), _schema(uniqueItems=True)] = []


class SaveSla(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    sla_seconds: Annotated[int, msgspec.Meta(ge=1, le=MAX_SLA_SECONDS)] | None
    business_hours: BusinessHoursBody | None = None


class SlaPolicy(msgspec.Struct, frozen=True):
    sla_seconds: int | None
    business_hours: dict | None
    # How deadlines are measured: "business_hours", "around_the_clock", or "none" (no target: nothing breaches).
    deadlines: str
    updated_at: datetime | None
    updated_by: MemberRef | None


class InvalidSlaPolicy(Exception):
    """The sentence says what is wrong (answered 400 invalid_business_hours)."""


async def read_policy(db: Database, workspace_id: int) -> SlaPolicy:
    return _policy(await workspace_queries.find_sla_policy(db, workspace_id))


async def save_policy(db: Database, workspace_id: int, member_id: int, via: str, body: SaveSla,
                      now: datetime) -> SlaPolicy:
    """Replace the policy (and record it in the team audit log); refuses business hours the deadline rule cannot
    use (InvalidSlaPolicy)."""
    hours = None
    if body.business_hours is not None:
        try:
            hours = parse_business_hours(_plain(body.business_hours))
        except InvalidBusinessHours as err:
            raise InvalidSlaPolicy(str(err)) from None
    stored = msgspec.json.encode(business_hours_json(hours)).decode() if hours is not None else None
    async with db.transaction() as tx:
        saved = await workspace_queries.save_sla_policy(tx, workspace_id, body.sla_seconds, stored, member_id, now)
        await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=member_id, via=via,
                                   action=team_audit.SLA_CHANGED, subject="sla",
                                   details={"sla_seconds": body.sla_seconds, "business_hours": hours is not None})
    return _policy(saved)


async def set_target(db: Database, workspace_id: int, sla_seconds: int | None) -> Record | None:
    """The operator's command line: the target alone (None removes it), business hours kept as they are; None
    when there is no such workspace. The same limits as `save_policy`; applies to waits that start after it."""
    if sla_seconds is not None and not 1 <= sla_seconds <= MAX_SLA_SECONDS:
        raise InvalidSlaPolicy(f"the SLA must be 1 to {MAX_SLA_SECONDS} seconds")
    async with db.transaction() as tx:
        return await workspace_queries.set_sla(tx, workspace_id, sla_seconds)


def _plain(hours: BusinessHoursBody) -> dict:
    """The body as the JSON it came as (the domain parser judges decoded JSON)."""
    weekly = {day: [{"open": o.open, "close": o.close} for o in getattr(hours.weekly, day)]
              for day in DAYS if getattr(hours.weekly, day) is not msgspec.UNSET}
    plain: dict = {"time_zone": hours.time_zone, "weekly": weekly}
    if hours.holidays:
        plain["holidays"] = [day.isoformat() for day in hours.holidays]
    return plain


def _policy(row: Record) -> SlaPolicy:
    hours = msgspec.json.decode(row["sla_business_hours"]) if row["sla_business_hours"] is not None else None
    deadlines = "none" if row["sla_seconds"] is None else ("business_hours" if hours else "around_the_clock")
    updated_by = MemberRef(row["sla_updated_by"], row["updated_by_name"]) if row["sla_updated_by"] else None
    return SlaPolicy(row["sla_seconds"], hours, deadlines, row["sla_updated_at"], updated_by)
