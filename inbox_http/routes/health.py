"""Operators' view: is the database answering, and how is each actor doing."""

from __future__ import annotations

import functools
import hmac
import ipaddress

from quart import Blueprint, request

from inbox_http.encoding import json_response
from inbox_http.errors import stable_error
from inbox_http.guard import bearer_token
from inbox_http.services import services
from persistence.database import DatabaseUnavailable

blueprint = Blueprint("health", __name__, url_prefix="/health")


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

    return view


def _is_loopback(address: str | None) -> bool:
    try:
        return address is not None and ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


@blueprint.get("")
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
@operator_only
async def actors():
    """Counts per kind, mailbox depth, restarts, the busiest and the failing actors."""
    limit = request.args.get("busiest", default=10, type=int)
    return json_response(services().actors.summary(busiest=max(0, min(limit or 0, 100))))


@blueprint.get("/actors/<kind>/<path:key>")
@operator_only
async def actor(kind: str, key: str):
    stats = services().actors.statistics(kind, key)
    if stats is None:
        return stable_error(404, "not_found", f"No live or failed {kind} actor with key {key}.")
    return json_response(stats)
