"""A member's own settings: the time zone the agent inbox shows them times in."""

from __future__ import annotations

from persistence.database import Database


async def set_time_zone(db: Database, workspace_id: int, member_id: int, time_zone: str) -> bool:
    """Whether the member was found in the workspace (and now has the time zone)."""
    status = await db.execute("UPDATE members SET time_zone = $3 WHERE workspace_id = $1 AND id = $2",
                              workspace_id, member_id, time_zone)
    return status.split()[-1] != "0"


async def time_zone(db: Database, workspace_id: int, member_id: int) -> str | None:
    """The member's time zone (None: never chosen)."""
    return await db.fetchval("SELECT time_zone FROM members WHERE workspace_id = $1 AND id = $2",
                             workspace_id, member_id)
