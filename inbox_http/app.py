"""The Quart-Trio application: blueprints, error handlers, the services the handlers use."""

from __future__ import annotations

from quart_trio import QuartTrio

from inbox_http.audit import install_audit
from inbox_http.body_limit import install_body_limit
from inbox_http.converters import IdConverter, PhoneConverter
from inbox_http.dependencies import Dependencies
from inbox_http.errors import install_error_handlers
from inbox_http.guard import install_guard
from inbox_http.request_metrics import install_route_label
from inbox_http.routes import (
    bot,
    bot_knowledge,
    broadcasts,
    canned_responses,
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
    satisfaction,
    send_message,
    team,
    team_reports,
    teams,
    templates,
    webhooks,
    whatsapp_webhook,
)
from inbox_http.url_rules import RuleBuiltOnDemand
from inbox_http.web import install_web_app


def create_app(services: Dependencies | None) -> QuartTrio:
    """The app; `services` is None only to read its routes (the OpenAPI generator)."""
    app = QuartTrio("inbox_http")
    app.url_rule_class = RuleBuiltOnDemand
    app.config["JSON_SORT_KEYS"] = False
    app.url_map.converters["id"] = IdConverter
    app.url_map.converters["phone"] = PhoneConverter
    if services is not None:
        app.extensions["inbox"] = services
    for module in (reporting, reporting_chat, keys, send_message, contact_reads, contact_removal, contacts,
                   templates, inbox, labels, bot, team, credits, broadcasts, mcp, webhooks, whatsapp_webhook, health,
                   ops, docs, metrics, bot_knowledge, canned_responses, teams, team_reports,
                   satisfaction):
        app.register_blueprint(module.blueprint)
    for blueprint in connectors.blueprints:  # /api/zapier and /api/make: the same handlers
        app.register_blueprint(blueprint)
    install_web_app(app)
    install_route_label(app)
    install_error_handlers(app)
    install_guard(app)
    install_audit(app)
    install_body_limit(app)
    return app
