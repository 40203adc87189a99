"""Which chats a member limited to assigned chats may see: the one rule, for SQL and for a chat already read.

Such a member (or a key with `inbox_assigned_only`, acting as its creator) sees the chats they hold and, when a team
of theirs opens its queue to them (`teams.queue_visible_to_assigned_only`), the chats waiting in that queue for a
person: handed over, held by nobody. Everyone else sees every chat of the workspace (`restricted_to` None).
Every read and the conversation actor ask this module, so a list, a chat's page, its live events and an action
never disagree on whether a chat exists for the caller (docs/team.md#team-queues).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from persistence.database import Database, UnitOfWork

_OPEN_QUEUES = ("SELECT tm.team_id FROM team_members tm JOIN teams t ON t.id = tm.team_id"
                " WHERE tm.member_id = {member} AND t.queue_visible_to_assigned_only")


def visible(chat: str, member: str) -> str:
    """SQL: whether the chat aliased `chat` is one the caller may see. `member` is the SQL of `restricted_to`
    (a parameter; NULL: the caller sees every chat). The teams' part is planned once per statement."""
    member = f"{member}::bigint"
    return (f"({member} IS NULL OR {chat}.assigned_to = {member}"
            f" OR ({chat}.assigned_to IS NULL AND {chat}.state = 'HANDOFF_PENDING'"
            f" AND {chat}.team_id IN ({_OPEN_QUEUES.format(member=member)})))")


def just_left_sight(chat: str, member: str, event: str) -> str:
    """SQL: whether an assignment event (`event`, the outbox row's data) of a chat the caller no longer sees is
    one of how it left their sight: taken from them, or taken or closed while it waited in a team queue open to
    them. Their screen then reads the chat again and finds it gone, instead of showing it until the next event."""
    member = f"{member}::bigint"
    return (f"(({event} -> 'from' ->> 'user_id')::bigint = {member}"
            f" OR {chat}.team_id IN ({_OPEN_QUEUES.format(member=member)}))")


async def may_see(q: Database | UnitOfWork, chat: Mapping[str, Any], restricted_to: int | None) -> bool:
    """Whether a chat already read (its `assigned_to`, `state` and `team_id`) is one the caller may see."""
    if restricted_to is None or chat["assigned_to"] == restricted_to:
        return True
    if chat["assigned_to"] is not None or chat["state"] != "HANDOFF_PENDING" or chat["team_id"] is None:
        return False
    return bool(await q.fetchval(f"SELECT $1::bigint IN ({_OPEN_QUEUES.format(member='$2::bigint')})",
                                 chat["team_id"], restricted_to))
