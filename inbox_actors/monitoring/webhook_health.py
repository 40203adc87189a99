"""How outbound webhook delivery is doing, for operators (`GET /metrics`, `GET /metrics/overview`): the outbox
backlog and the workspaces' endpoints whose latest event failed, read from PostgreSQL when asked. A database that
does not answer gives "unknown" (None, an empty list) rather than failing the scrape: the rest of the numbers are
what an operator needs most while PostgreSQL is away."""

from __future__ import annotations

import logging
from datetime import datetime

import msgspec

from persistence.database import Database, DatabaseUnavailable
from persistence.queries import webhook_health as queries

log = logging.getLogger("inbox_actors.monitoring.webhook_health")

FAILING_ENDPOINTS_LISTED = 20


class FailingEndpoint(msgspec.Struct, frozen=True):
    """A workspace's webhook endpoint whose latest finished event failed."""

    workspace_id: int
    url: str
    consecutive_failures: int
    """Failed events since the last delivered one (counted among the latest 1,000)."""
    last_error: str | None
    """The last attempt's error ("connection refused", "HTTP 503", ...)."""
    last_status_code: int | None
    last_attempt_at: datetime | None


async def outbox_backlog(db: Database) -> int | None:
    """Events pending in the outbox now; None when PostgreSQL could not be read."""
    try:
        return await queries.outbox_backlog(db)
    except DatabaseUnavailable as err:
        log.warning("webhook outbox backlog not read: %s", err)
        return None


async def failing_endpoints(db: Database) -> list[FailingEndpoint]:
    """At most FAILING_ENDPOINTS_LISTED, the most recently attempted first; none when PostgreSQL could not be
    read."""
    try:
        rows = await queries.failing_endpoints(db, limit=FAILING_ENDPOINTS_LISTED)
    except DatabaseUnavailable as err:
        log.warning("failing webhook endpoints not read: %s", err)
        return []
    return [_failing(row) for row in rows]


def _failing(row) -> FailingEndpoint:
    status = row["last_status_code"]
    return FailingEndpoint(workspace_id=row["workspace_id"], url=row["url"],
                           consecutive_failures=row["consecutive_failures"],
                           last_error=row["last_error"] or (f"HTTP {status}" if status is not None else None),
                           last_status_code=status, last_attempt_at=row["last_attempt_at"])
