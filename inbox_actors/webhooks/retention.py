"""The delivery log's retention: finished events (and their attempts) are kept 30 days, then deleted. Their age is
told by PostgreSQL's clock, which set their `created_at`: a node-wide sweep, so no node's own clock decides what
every workspace loses."""

from __future__ import annotations

from datetime import timedelta

from persistence.database import Database
from persistence.queries.webhook_delivery import prune_finished

RETENTION = timedelta(days=30)


async def prune_delivered_events(db: Database) -> int:
    """Delete finished events older than the retention; pending ones stay whatever their age."""
    return await prune_finished(db, RETENTION)
