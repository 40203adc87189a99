"""How outbound webhook delivery is doing, for operators (`GET /metrics`, `GET /metrics/overview`): the outbox
backlog and the workspaces' endpoints whose latest event failed."""

from __future__ import annotations

from persistence.database import Database, Record

STREAK_LOOKBACK = 1_000
"""Consecutive failures are counted among an endpoint's latest this many finished events at most."""


async def outbox_backlog(db: Database) -> int:
    """Events (and connector hooks' copies) pending delivery, every workspace's; read from the pending index."""
    return await db.fetchval("SELECT count(*) FROM webhook_outbox WHERE outcome = 'pending' AND NOT test")


async def failing_endpoints(db: Database, *, limit: int) -> list[Record]:
    """Enabled endpoints whose latest finished event (not a test, not a hook's copy) failed, the most recently
    attempted first: workspace_id, url, consecutive_failures (failed events since the last delivered one, among
    the latest STREAK_LOOKBACK), last_error and last_status_code (of that event's last attempt), last_attempt_at.
    One probe of the delivery log index per enabled endpoint."""
    return await db.fetch(
        "SELECT c.workspace_id, c.endpoint_url AS url, latest.last_attempt_at, a.error AS last_error,"
        " a.status_code AS last_status_code,"
        " (SELECT count(*) FROM ("
        "   SELECT count(*) FILTER (WHERE r.outcome = 'delivered') OVER (ORDER BY r.id DESC) AS delivered_since"
        "   FROM (SELECT o.id, o.outcome FROM webhook_outbox o"
        "         WHERE o.workspace_id = c.workspace_id AND o.outcome IN ('delivered', 'failed')"
        "         AND o.hook_id IS NULL AND NOT o.test ORDER BY o.id DESC LIMIT $2) r"
        "  ) streak WHERE streak.delivered_since = 0) AS consecutive_failures"
        " FROM webhook_configs c"
        " CROSS JOIN LATERAL (SELECT o.id, o.outcome, o.last_attempt_at FROM webhook_outbox o"
        "   WHERE o.workspace_id = c.workspace_id AND o.outcome IN ('delivered', 'failed')"
        "   AND o.hook_id IS NULL AND NOT o.test ORDER BY o.id DESC LIMIT 1) latest"
        " LEFT JOIN LATERAL (SELECT error, status_code FROM webhook_attempts"
        "   WHERE outbox_id = latest.id ORDER BY attempt DESC LIMIT 1) a ON true"
        " WHERE c.enabled AND latest.outcome = 'failed'"
        " ORDER BY latest.last_attempt_at DESC NULLS LAST, c.workspace_id LIMIT $1",
        limit, STREAK_LOOKBACK)
