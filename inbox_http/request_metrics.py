"""Counting every HTTP request by route template, method and status, with its latency (`inbox_http_requests_total`,
`inbox_http_request_duration_seconds`).

An ASGI wrapper around the app times each request from its arrival until the app has sent the last of the response
and reads the status the client was sent; the app tells it which route took the request (the URL rule's template,
never the raw path: `install_route_label` stores it in the ASGI scope before any other hook runs). A request no route
took is counted under "unmatched"; one whose client left before any response under status 0.
"""

from __future__ import annotations

import time

from quart import Quart, request

from inbox_actors.monitoring.metrics import UNMATCHED_ROUTE, ServiceMetrics
from inbox_http.requests_in_flight import Asgi

ROUTE_KEY = "inbox.route"


class RequestMetrics:
    """An ASGI wrapper around `app` that records each HTTP request in `metrics`."""

    def __init__(self, app: Asgi, metrics: ServiceMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: dict, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = time.perf_counter()
        status = 0

        async def send_counted(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            return await self.app(scope, receive, send_counted)
        finally:
            self.metrics.request_answered(scope.get(ROUTE_KEY, UNMATCHED_ROUTE), scope["method"], status,
                                          time.perf_counter() - started)


def install_route_label(app: Quart) -> None:
    """Store the template of the route that takes each request in its ASGI scope, for RequestMetrics. Call it before
    any other `before_request` is installed: a hook that answers early skips the ones after it."""
    app.before_request_funcs.setdefault(None, []).insert(0, _label_route)


async def _label_route() -> None:  # async: Quart would run a plain function in a worker thread
    rule = request.url_rule
    if rule is not None:
        request.scope[ROUTE_KEY] = rule.rule
