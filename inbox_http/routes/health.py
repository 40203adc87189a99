"""Operators' view: is the database answering, is the service ready for traffic, and how is each actor doing.

`/health`, `/health/ready` and `/health/live` are probes, open to anyone (a load balancer, an orchestrator);
`/health/actors*` name customers' phones and clients' addresses, so they are for operators only.
Times are shown as UTC ISO 8601 and as seconds ago, converted from the runtime's monotonic clock here.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import time
from datetime import datetime, timedelta, timezone

import msgspec
import trio
from quart import Blueprint, request

from inbox_actors.paging.parameter_catalog import QueryParameter
from inbox_actors.runtime.statistics import ActorStatistics, KindCounts, SystemSummary
from inbox_http.contract import answers
from inbox_http.dependencies import Dependencies, dependencies
from inbox_http.encoding import json_response
from inbox_http.errors import stable_error
from inbox_http.guard import accepts, bearer_token, responds
from persistence.database import DatabaseUnavailable

blueprint = Blueprint("health", __name__, url_prefix="/health")


class HealthReport(msgspec.Struct, frozen=True):
    """What `GET /health` answers (the contract's description; the handler builds it)."""

    status: str
    database: str
    accepting: bool | msgspec.UnsetType = msgspec.UNSET
    failing_kinds: list[str] | msgspec.UnsetType = msgspec.UNSET
    activity_records_dropped: int | msgspec.UnsetType = msgspec.UNSET


class Readiness(msgspec.Struct, frozen=True):
    """What `GET /health/ready` answers: ready for traffic, or why not."""

    ready: bool
    draining: bool
    """SIGTERM was received: finishing what is under way, taking no new connections soon."""
    database: str
    """"ok", or the error PostgreSQL's ping met."""
    accepting: bool
    """The actor system takes new work."""
    failing_kinds: list[str]
    """Vital actor kinds whose circuit is open."""


class Liveness(msgspec.Struct, frozen=True):
    """What `GET /health/live` answers while the process serves HTTP."""

    live: bool
    draining: bool
    uptime_seconds: float


class ActorHealth(msgspec.Struct, frozen=True):
    """One actor as operators read it: times as UTC ISO 8601 and as seconds ago."""

    kind: str
    key: str
    status: str
    """starting, running, restarting, failed or stopping."""
    mailbox_used: int
    mailbox_capacity: int
    oldest_message_seconds: float | None
    """Age of the oldest message waiting in the mailbox (since it was sent); null when the mailbox is empty."""
    messages_handled: int
    messages_dropped: int
    restarts: int
    tasks_running: int
    last_error: str | None
    """The last crash as "ExceptionType: message"."""
    last_error_at: str | None
    last_error_seconds_ago: float | None
    last_activity_at: str | None
    """When the actor last handled a message; null if it has not yet."""
    last_activity_seconds_ago: float | None
    started_at: str
    """The activation (a restart keeps it)."""
    started_seconds_ago: float


class ActorsHealth(msgspec.Struct, frozen=True):
    """What `GET /health/actors` answers."""

    as_of: str
    """When the figures were read (UTC)."""
    accepting: bool
    kinds: dict[str, KindCounts]
    busiest: list[ActorHealth]
    """Live actors with the fullest mailboxes first, then the most messages handled."""
    failing: list[ActorHealth]
    """Failed actors and actors that restarted after a crash, most recent error first (at most 100)."""
    failing_count: int
    """How many actors are failing in all."""


class _Moment:
    """Now on both clocks, to show the runtime's monotonic times as wall-clock times."""

    def __init__(self) -> None:
        self.wall = datetime.now(timezone.utc)
        self.monotonic = trio.current_time()

    def iso(self, at: float | None) -> str | None:
        if at is None:
            return None
        wall = self.wall - timedelta(seconds=self.monotonic - at)
        return wall.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def ago(self, at: float | None) -> float | None:
        return None if at is None else round(max(0.0, self.monotonic - at), 3)

    def actor(self, stats: ActorStatistics) -> ActorHealth:
        return ActorHealth(
            kind=stats.kind, key=stats.key, status=stats.status.value, mailbox_used=stats.mailbox_used,
            mailbox_capacity=stats.mailbox_capacity, oldest_message_seconds=self.ago(stats.oldest_message_at),
            messages_handled=stats.messages_handled, messages_dropped=stats.messages_dropped,
            restarts=stats.restarts, tasks_running=stats.tasks_running, last_error=stats.last_error,
            last_error_at=self.iso(stats.last_error_at), last_error_seconds_ago=self.ago(stats.last_error_at),
            last_activity_at=self.iso(stats.last_activity_at),
            last_activity_seconds_ago=self.ago(stats.last_activity_at),
            started_at=self.iso(stats.started_at) or "", started_seconds_ago=self.ago(stats.started_at) or 0.0)

    def summary(self, summary: SystemSummary) -> ActorsHealth:
        return ActorsHealth(as_of=self.iso(self.monotonic) or "", accepting=summary.accepting, kinds=summary.kinds,
                            busiest=[self.actor(s) for s in summary.busiest],
                            failing=[self.actor(s) for s in summary.failing], failing_count=summary.failing_count)


def operator_only(handler):
    """Actor keys name customers' phones and clients' addresses: with INBOX_HEALTH_TOKEN set, actor details
    need it as the bearer token; without one, only callers on this machine (loopback) may read them."""

    @functools.wraps(handler)
    async def view(*args, **kwargs):
        expected = dependencies().settings.health_token
        if expected is not None:
            given = bearer_token(request.headers.get("Authorization")) or ""
            if not hmac.compare_digest(given.encode(), expected.encode()):
                return stable_error(401, "invalid_token", "Actor health needs the operator token (INBOX_HEALTH_TOKEN).")
        elif not _is_loopback(request.remote_addr):
            return stable_error(403, "operator_only", "Actor health is served to this machine only unless "
                                "INBOX_HEALTH_TOKEN is set.")
        return await handler(*args, **kwargs)

    return answers(*getattr(handler, "error_statuses", ()), stable=(401, 403))(view)


def _is_loopback(address: str | None) -> bool:
    try:
        return address is not None and ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


@blueprint.get("")
@responds(HealthReport)
@answers(reports=(503,))
async def health():
    """Database and actors in one: 200 while PostgreSQL answers and no vital actor kind has its circuit open;
    503 otherwise (see /health/ready for the probe that also turns false while draining)."""
    state = dependencies()
    database = await _database_status(state)
    if database != "ok":
        return json_response({"status": "unavailable", "database": database}, 503)
    failing = state.actors.failing_vital_kinds()
    body = {"status": "degraded" if failing else "ok", "database": "ok",
            "accepting": state.actors.accepting, "failing_kinds": failing,
            "activity_records_dropped": state.metrics.activity_records_dropped()}
    return json_response(body, 503 if failing else 200)


@blueprint.get("/ready")
@responds(Readiness)
@answers(reports=(503,))
async def ready():
    """Readiness probe: 200 `ready: true` while the service takes traffic; 503 `ready: false` from SIGTERM on
    (draining), while PostgreSQL does not answer, the actors take no work, or a vital actor kind fails."""
    state = dependencies()
    draining = state.lifecycle.draining
    database = await _database_status(state)
    failing = state.actors.failing_vital_kinds()
    accepting = state.actors.accepting
    is_ready = not draining and database == "ok" and accepting and not failing
    return json_response(Readiness(ready=is_ready, draining=draining, database=database, accepting=accepting,
                                   failing_kinds=failing), 200 if is_ready else 503)


async def _database_status(state: Dependencies) -> str:
    """"ok", or the error PostgreSQL's ping met."""
    try:
        await state.db.ping()
    except DatabaseUnavailable as err:
        return f"error: {err}"
    return "ok"


@blueprint.get("/live")
@responds(Liveness)
async def live():
    """Liveness probe: 200 while the process serves HTTP, draining included; it reads nothing else."""
    state = dependencies()
    return json_response(Liveness(live=True, draining=state.lifecycle.draining,
                                  uptime_seconds=round(time.monotonic() - state.lifecycle.started_at, 3)))


@blueprint.get("/actors")
@responds(ActorsHealth)
@operator_only
@accepts((QueryParameter("busiest", "string", "how many of the busiest actors to list: a whole number, held to "
                                          "0 to 100; any other text means the default, 10"),))
async def actors():
    """Counts per kind (live, failed, mailbox depth sum and max, messages handled, activations, passivations,
    restarts, escalations), the busiest and the failing actors; times as UTC ISO 8601 and seconds ago."""
    limit = request.args.get("busiest", default=10, type=int)
    summary = dependencies().actors.summary(busiest=max(0, min(limit or 0, 100)))
    return json_response(_Moment().summary(summary))


@blueprint.get("/actors/<kind>/<path:key>")
@responds(ActorHealth)
@operator_only
@answers(404)
async def actor(kind: str, key: str):
    """One actor's statistics (live, or failed within its cooldown), with its oldest queued message's age."""
    stats = dependencies().actors.statistics(kind, key)
    if stats is None:
        return stable_error(404, "not_found", f"No live or failed {kind} actor with key {key}.")
    return json_response(_Moment().actor(stats))
