"""A member's own settings as use cases: the time zone the agent inbox shows them times in.

Set from their browser (its `Intl` time zone, the first time the inbox opens) or chosen in the inbox's settings
menu; an IANA name (`Asia/Kolkata`) that this machine's time zone database knows (`zoneinfo`), or it is refused. It
is the caller's own, whatever member the arguments could name: there is no member argument.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from inbox_actors.domain.time_zones import is_time_zone
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused
from inbox_actors.use_cases.use_case import Kind, UseCase, rule
from persistence.queries import member_settings as queries

MAX_TIME_ZONE = 64
_UNKNOWN_ZONE = "Choose a time zone by its IANA name, as in Europe/Paris, Asia/Kolkata or UTC."

TimeZoneName = Annotated[str, msgspec.Meta(
    min_length=1, max_length=MAX_TIME_ZONE, pattern=r"^[A-Za-z0-9_+/-]+$", examples=["Asia/Kolkata"],
    description="An IANA time zone name.", extra=rule("invalid_time_zone", _UNKNOWN_ZONE))]


class TimeZoneChoice(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    time_zone: TimeZoneName


class TimeZoneSet(msgspec.Struct, frozen=True):
    time_zone: str




async def _set_time_zone(deps: UseCaseDeps, caller: Caller, a: TimeZoneChoice) -> Outcome:
    if not is_time_zone(a.time_zone):
        return Refused(Reason.INVALID, _UNKNOWN_ZONE, 400, "invalid_time_zone")
    if caller.is_operator or not await queries.set_time_zone(deps.db, caller.workspace_id, caller.member_id,
                                                             a.time_zone):
        return Refused(Reason.NOT_FOUND, "A time zone is a member's own: no member of this workspace calls.", 404,
                       "not_found")
    return Done(TimeZoneSet(a.time_zone))


SET_TIME_ZONE = UseCase("set_member_time_zone", TimeZoneChoice, permissions.OWN_PREFERENCES, Kind.WRITE,
                        _set_time_zone)
