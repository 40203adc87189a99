"""Reads of a workspace's API keys and their activity, straight from PostgreSQL (the read model).

Writes go through the workspace's key ring actor (key_ring.py); these never change anything.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from inbox_actors.access.key_ring import KeyView, key_view
from persistence.database import Database
from persistence.queries import api_keys as key_queries


class KeyCall(msgspec.Struct, frozen=True):
    """One call made with a key, as its activity log holds it; `id` orders the log (newest is highest)."""

    id: int
    method: str
    path: str
    status: int
    ip: str
    at: datetime


async def list_keys(db: Database, workspace_id: int, now: datetime) -> list[KeyView]:
    """Every key of the workspace, newest first."""
    return [key_view(row, now) for row in await key_queries.list_keys(db, workspace_id)]


async def find_key(db: Database, workspace_id: int, key_id: int, now: datetime) -> KeyView | None:
    """The workspace's key `key_id`, or None when the workspace has no such key."""
    row = await key_queries.find_key(db, workspace_id, key_id)
    return None if row is None else key_view(row, now)


async def key_activity(db: Database, workspace_id: int, key_id: int, *, since: datetime, before_id: int | None,
                       limit: int) -> list[KeyCall] | None:
    """Up to `limit` calls made with the key since `since`, newest first, continuing below `before_id` when
    given; None when the workspace has no such key."""
    if await key_queries.find_key(db, workspace_id, key_id) is None:
        return None
    rows = await key_queries.read_activity(db, key_id, since=since, before_id=before_id, limit=limit)
    return [KeyCall(id=r["id"], method=r["method"], path=r["path"], status=r["status"], ip=r["ip"], at=r["at"])
            for r in rows]
