"""Satisfaction survey responses, read: each rating that came in a window, with its comment, the chat and the member
and team it is credited to, newest survey first (docs/team.md#satisfaction-surveys). The team report sums the same
ratings (`team_report.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import msgspec

from inbox_actors.domain import satisfaction
from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.domain.team_ref import TeamRef
from inbox_actors.paging import cursors, parameters
from inbox_actors.paging.windows import REPLIES_AND_MESSAGES, Window, window
from persistence.database import Database, Record
from persistence.queries import csat as queries

Args = Mapping[str, str | None]
DEFAULT_LIMIT = 50
CURSOR_KIND = "csat-responses"


class CsatResponse(msgspec.Struct, frozen=True):
    survey_id: int
    phone: str
    rating: int
    """1 (very poor) to 5 (excellent)."""
    label: str
    """The rating as the customer chose it: Excellent, Good, Okay, Poor or Very poor."""
    comment: str | None
    member: MemberRef | None
    """Who held the chat when it was resolved (else who resolved it)."""
    team: TeamRef | None
    """The team whose queue the chat was in when it was resolved."""
    resolved_at: datetime
    rated_at: datetime
    commented_at: datetime | None


class CsatResponsePage(msgspec.Struct, frozen=True):
    data: list[CsatResponse]
    next_cursor: str | None
    window: Window


async def responses(db: Database, workspace_id: int, args: Args, now: datetime) -> CsatResponsePage:
    team_id = parameters.member_id(args.get("team_id"), "team_id")
    member_id = parameters.member_id(args.get("member_id"), "member_id")
    limit = parameters.limit(args.get("limit"), DEFAULT_LIMIT)
    position = cursors.decode(args, CURSOR_KIND, datetime, datetime, int)
    span = Window(position[0], position[1]) if position else window(args, now, REPLIES_AND_MESSAGES)
    rows = await queries.responses(db, workspace_id, span.start, span.end, before_id=position[2] if position else None,
                                   limit=limit + 1, team_id=team_id, member_id=member_id)
    page, more = rows[:limit], len(rows) > limit
    next_cursor = cursors.encode(CURSOR_KIND, args, span.start, span.end, page[-1]["id"]) if more else None
    return CsatResponsePage([_response(row) for row in page], next_cursor, span)


def _response(row: Record) -> CsatResponse:
    return CsatResponse(
        survey_id=row["id"], phone=row["phone"], rating=row["rating"], label=satisfaction.LABELS[row["rating"]],
        comment=row["comment"], member=MemberRef(row["member_id"], row["member_name"]) if row["member_id"] else None,
        team=TeamRef(row["team_id"], row["team_name"]) if row["team_id"] is not None and row["team_name"] else None,
        resolved_at=row["resolved_at"], rated_at=row["rated_at"], commented_at=row["commented_at"])
