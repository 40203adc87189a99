"""The team's performance over a window: per member, the chats they took and resolved, the replies they sent, how
fast their first responses to a customer waiting for a person were (the Reporting API's clock: from when the wait
for a person began to the reply), and the SLA breaches of chats assigned to them.

Definitions (docs/team.md's): `chats_claimed` and `chats_transferred_in` count assignment events to the member in the
window (claims from the queue or the bot, transfers to them); `chats_resolved` the resolves they made; `replies_sent`
their replies whose outcome is known and not a failure; `first_human_response` the replies that were the first to
answer a wait for a person (no earlier reply answered the same wait), sent in the window; `sla_breaches` the
breaches announced in the window while the chat was assigned to them (those of unassigned chats are counted apart).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import msgspec

from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.paging.windows import REPLIES_AND_MESSAGES, Window, window
from persistence.database import Database, Record
from persistence.queries import performance as queries

Args = Mapping[str, str | None]


class FirstResponses(msgspec.Struct, frozen=True):
    count: int
    median_seconds: float | None
    p90_seconds: float | None


class MemberPerformance(msgspec.Struct, frozen=True):
    member: MemberRef
    role: str
    status: str
    chats_claimed: int
    chats_transferred_in: int
    chats_resolved: int
    replies_sent: int
    first_human_response: FirstResponses
    sla_breaches: int


class TeamPerformance(msgspec.Struct, frozen=True):
    window: Window
    data: list[MemberPerformance]
    unassigned_sla_breaches: int


async def team_performance(db: Database, workspace_id: int, args: Args, now: datetime) -> TeamPerformance:
    """The window is `since`/`to` (default the last 7 days, at most 90)."""
    span = window(args, now, REPLIES_AND_MESSAGES)
    rows = await queries.team_performance(db, workspace_id, span.start, span.end)
    unassigned = rows[0]["unassigned_breaches"] if rows else None
    return TeamPerformance(span, [_member(row) for row in rows], unassigned or 0)


def _member(row: Record) -> MemberPerformance:
    return MemberPerformance(
        member=MemberRef(row["id"], row["name"]), role=row["role"], status=row["status"],
        chats_claimed=row["claimed"], chats_transferred_in=row["transferred_in"], chats_resolved=row["resolved"],
        replies_sent=row["replies"],
        first_human_response=FirstResponses(row["responses"], _rounded(row["median_seconds"]),
                                            _rounded(row["p90_seconds"])),
        sla_breaches=row["breaches"],
    )


def _rounded(seconds: float | None) -> float | None:
    return round(seconds, 1) if seconds is not None else None
