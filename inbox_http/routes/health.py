"""Operators' view: is the database answering, and how is each actor doing."""

from __future__ import annotations

import functools
import hmac
import ipaddress

import msgspec
from quart import Blueprint, request

from inbox_actors.reporting.parameter_catalog import QueryParameter
from inbox_actors.runtime.statistics import ActorStatistics, SystemSummary
from inbox_http.contract import answers
from inbox_http.encoding import json_response
from inbox_http.errors import stable_error
from inbox_http.guard import accepts, bearer_token, responds
from inbox_http.services import services
from persistence.database import DatabaseUnavailable

blueprint = Blueprint("health", __name__, url_prefix="/health")


class HealthReport(msgspec.Struct, frozen=True):
    """What `GET /health` answers (the contract's description; the handler builds it)."""

    status: str
    database: str
    accepting: bool | msgspec.UnsetType = msgspec.UNSET
    failing_kinds: list[str] | msgspec.UnsetType = msgspec.UNSET
    activity_records_dropped: int | msgspec.UnsetType = msgspec.UNSET


def operator_only(handler):
    """Actor keys name customers' phones and clients' addresses: with INBOX_HEALTH_TOKEN set, actor details
    need it as the bearer token; without one, only callers on this machine (loopback) may read them."""

    @functools.wraps(handler)
    async def view(*args, **kwargs):
        expected = services().settings.health_token
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
    """Readiness: 200 while PostgreSQL answers and no vital actor kind has its circuit open; 503 otherwise."""
    try:
        await services().db.ping()
    except DatabaseUnavailable as err:
        return json_response({"status": "unavailable", "database": f"error: {err}"}, 503)
    state = services()
    failing = state.actors.failing_vital_kinds()
    body = {"status": "degraded" if failing else "ok", "database": "ok",
            "accepting": state.actors.summary(busiest=0).accepting, "failing_kinds": failing,
            "activity_records_dropped": state.statistics.activity_records_dropped}
    return json_response(body, 503 if failing else 200)


@blueprint.get("/actors")
@responds(SystemSummary)
@operator_only
@accepts((QueryParameter("busiest", "string", "how many of the busiest actors to list: a whole number, held to "
                                          "0 to 100; any other text means the default, 10"),))
async def actors():
    """Counts per kind, mailbox depth, restarts, the busiest and the failing actors."""
    limit = request.args.get("busiest", default=10, type=int)
    return json_response(services().actors.summary(busiest=max(0, min(limit or 0, 100))))


@blueprint.get("/actors/<kind>/<path:key>")
@responds(ActorStatistics)
@operator_only
@answers(404)
async def actor(kind: str, key: str):
    """One actor's statistics (live, or failed within its cooldown)."""
    stats = services().actors.statistics(kind, key)
    if stats is None:
        return stable_error(404, "not_found", f"No live or failed {kind} actor with key {key}.")
    return json_response(stats)
