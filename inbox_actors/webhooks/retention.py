"""The delivery log's retention: finished events (and their attempts) are kept 30 days, then deleted."""

from __future__ import annotations

from datetime import timedelta

from inbox_actors.runtime.clock import Clock
from persistence.database import Database
from persistence.queries.webhook_delivery import prune_finished

RETENTION = timedelta(days=30)


async def prune_delivered_events(db: Database, clock: Clock) -> int:
    """Delete finished events older than the retention; pending ones stay whatever their age."""
    return await prune_finished(db, clock.now() - RETENTION)
