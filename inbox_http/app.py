"""The Quart-Trio application: blueprints, error handlers, the services the handlers use."""

from __future__ import annotations

from quart import request
from quart_trio import QuartTrio

from inbox_http.audit import install_audit
from inbox_http.converters import IdConverter, PhoneConverter
from inbox_http.dependencies import Dependencies
from inbox_http.errors import install_error_handlers, stable_error
from inbox_http.guard import install_guard
from inbox_http.request_metrics import install_route_label
from inbox_http.routes import (
    bot,
    broadcasts,
    connectors,
    contact_reads,
    contact_removal,
    contacts,
    credits,
    docs,
    health,
    inbox,
    keys,
    labels,
    mcp,
    metrics,
    ops,
    reporting,
    reporting_chat,
    send_message,
    team,
    templates,
    webhooks,
    whatsapp_webhook,
)
from inbox_http.url_rules import RuleBuiltOnDemand
from inbox_http.web import install_web_app

# No body the API takes comes near this; larger requests are refused before they are read.
MAX_BODY_BYTES = 1 * 1024 * 1024
# Except a broadcast's audience: 100,000 recipients with parameters of their own fit.
BULK_SEND_BODY_BYTES = 8 * 1024 * 1024
_LARGE_BODY_PATHS = {"/api/bulk-send": BULK_SEND_BODY_BYTES}


def create_app(services: Dependencies | None) -> QuartTrio:
    """The app; `services` is None only to read its routes (the OpenAPI generator)."""
    app = QuartTrio("inbox_http")
    app.url_rule_class = RuleBuiltOnDemand
    # The largest any route takes; each route's own limit is judged from Content-Length (_refuse_oversized_body).
    app.config["MAX_CONTENT_LENGTH"] = BULK_SEND_BODY_BYTES
    app.config["JSON_SORT_KEYS"] = False
    app.url_map.converters["id"] = IdConverter
    app.url_map.converters["phone"] = PhoneConverter
    if services is not None:
        app.extensions["inbox"] = services
    for module in (reporting, reporting_chat, keys, send_message, contact_reads, contact_removal, contacts,
                   templates, inbox, labels, bot, team, credits, broadcasts, mcp, webhooks, whatsapp_webhook, health,
                   ops, docs, metrics):
        app.register_blueprint(module.blueprint)
    for blueprint in connectors.blueprints:  # /api/zapier and /api/make: the same handlers
        app.register_blueprint(blueprint)
    install_web_app(app)
    install_route_label(app)
    install_error_handlers(app)
    install_guard(app)
    install_audit(app)
    app.before_request(_refuse_oversized_body)
    app.after_request(_read_unread_body)
    return app


async def _refuse_oversized_body():
    """Answer 413 from the headers alone; waiting for a body no handler will read would stall the client."""
    limit = _body_limit()
    if (request.content_length or 0) > limit:
        response = stable_error(413, "payload_too_large", f"The request body is larger than {limit:,} bytes.")
        response.headers["Connection"] = "close"
        return response
    return None


def _body_limit() -> int:
    return _LARGE_BODY_PATHS.get(request.path, MAX_BODY_BYTES)


async def _read_unread_body(response):
    """Read the body of a request answered without it (a refusal, a route that takes none): left unread, it
    can stall the next request on the same keep-alive connection. An oversized one is not read; that answer
    closes the connection instead. A request without Content-Length or Transfer-Encoding has no body (most
    GETs): nothing to wait for."""
    length = request.content_length
    if (length is not None and 0 < length <= _body_limit()) or \
            (length is None and "Transfer-Encoding" in request.headers):
        await request.get_data()
    return response
