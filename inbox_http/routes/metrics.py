"""Operators' numbers: `GET /metrics` in Prometheus' text format, and `GET /metrics/overview`, the same counters
as JSON for the operator page (`GET /ops`), which computes rates from the change between two reads.

Both answer by the rule of actor health (`operator_only`): with INBOX_HEALTH_TOKEN set, that bearer token; without
one, callers on this machine only. The metrics themselves are `inbox_actors.monitoring`'s; read at request time are
the outbox backlog and the failing endpoints (`monitoring.webhook_health`, from PostgreSQL), and what tells this node
from the others (`inbox_node_info{node}`, its start, its liveness lock).
"""

from __future__ import annotations

import time
from datetime import datetime

import msgspec
from prometheus_client import CONTENT_TYPE_LATEST
from quart import Blueprint, Response

from inbox_actors.monitoring import webhook_health
from inbox_actors.monitoring.webhook_health import FailingEndpoint
from inbox_http.dependencies import dependencies
from inbox_http.encoding import json_response
from inbox_http.guard import responds
from inbox_http.routes.health import operator_only

blueprint = Blueprint("metrics", __name__, url_prefix="/metrics")


class RequestTotals(msgspec.Struct, frozen=True):
    total: int
    client_errors: int
    """Answered 4xx."""
    server_errors: int
    """Answered 5xx."""


class WebhookOverview(msgspec.Struct, frozen=True):
    backlog: int | None
    """Events pending in the outbox now; null when PostgreSQL could not be read."""
    deliveries: dict[str, int]
    """Delivery attempts since start by outcome: delivered, rejected, server_error, timeout, unreachable, refused."""
    failing_endpoints: list[FailingEndpoint]
    """At most 20, the most recently attempted first."""


class ActivityLogOverview(msgspec.Struct, frozen=True):
    dropped: int
    """Call records dropped since start (the log had no room in time)."""


class MetricsOverview(msgspec.Struct, frozen=True):
    """What `GET /metrics/overview` answers: totals since the service started, read from its metrics."""

    generated_at: datetime
    requests: RequestTotals
    sends: dict[str, int]
    """Platform sends since start by outcome: accepted, refused, timeout, unreachable, unexpected_answer."""
    webhooks: WebhookOverview
    rate_limited: int
    """Requests refused with 429 since start (per-IP ceiling and key limits)."""
    activity_log: ActivityLogOverview


@blueprint.get("")
@responds(str)
@operator_only
async def exposition():
    """Every metric in Prometheus' text format (scrape target)."""
    state = dependencies()
    backlog = await webhook_health.outbox_backlog(state.db)
    state.metrics.webhook_backlog.set(float("nan") if backlog is None else backlog)
    liveness = state.placement.keeper.liveness
    started = time.time() - (time.monotonic() - state.lifecycle.started_at)
    state.metrics.node_identified(state.placement.node_id, started, liveness.holding if liveness is not None else None)
    return Response(state.metrics.exposition(), 200, content_type=CONTENT_TYPE_LATEST)


@blueprint.get("/overview")
@responds(MetricsOverview)
@operator_only
async def overview():
    """Totals since start, the webhook outbox backlog and the failing webhook endpoints, as JSON (for GET /ops).

    Totals: requests (all, 4xx, 5xx), platform sends and webhook delivery attempts by outcome, 429s, dropped
    activity records."""
    state = dependencies()
    totals = state.metrics.totals()
    backlog = await webhook_health.outbox_backlog(state.db)
    failing = await webhook_health.failing_endpoints(state.db) if backlog is not None else []
    return json_response(MetricsOverview(
        generated_at=state.clock.now(),
        requests=RequestTotals(total=totals.requests, client_errors=totals.client_errors,
                               server_errors=totals.server_errors),
        sends=totals.sends,
        webhooks=WebhookOverview(backlog=backlog, deliveries=totals.deliveries, failing_endpoints=failing),
        rate_limited=totals.rate_limited,
        activity_log=ActivityLogOverview(dropped=totals.activity_log_dropped)))
