"""The agent inbox: the web app a team answers customers from, served by the service itself.

One more front door over the same actions and permissions a key has (docs/inbox-app.md): server-rendered pages
(Jinja2 templates in `templates/`), a few scripts and a style sheet (`inbox_http/static/app/`), no build step.
The agent workspace (the list and the open chat on one screen) swaps server-rendered parts with htmx, fetched at
set-up (`vendor_assets`). Modules: `page_guard` (the session cookie, CSRF, the per-IP ceiling), `pages`
(rendering, headers, refusals, the sections a member may open), `app_assets` (the pages' own files from memory,
the scripts as one, at addresses named by their content), `fragments` (a page's part rendered alone),
`workspace` (the screen's reads), `composer` (the reply forms' keys, the canned responses they offer),
`member_time` (times in the member's zone, counted on by the script), and one module per group of pages, each with
its `blueprint`.
"""

from __future__ import annotations

from quart import Blueprint, Quart

from inbox_http.web import (
    app_assets,
    availability_pages,
    bot_knowledge_pages,
    bot_pages,
    bot_price_pages,
    broadcast_pages,
    bulk_pages,
    canned_insert,
    canned_pages,
    chat_pages,
    composer,
    connect_pages,
    inbox_pages,
    keys_pages,
    label_pages,
    live_stream,
    member_settings_pages,
    member_time,
    mention_pages,
    report_pages,
    saved_view_pages,
    sign_in_pages,
    sla_pages,
    team_pages,
    teams_pages,
    webhook_pages,
)
from inbox_http.web.pages import install_web

PAGE_GROUPS = (
    sign_in_pages,
    inbox_pages,
    bulk_pages,
    saved_view_pages,
    chat_pages,
    canned_insert,
    mention_pages,
    team_pages,
    bot_pages,
    bot_knowledge_pages,
    bot_price_pages,
    label_pages,
    canned_pages,
    sla_pages,
    broadcast_pages,
    keys_pages,
    webhook_pages,
    connect_pages,
    live_stream,
    member_settings_pages,
    teams_pages,
    availability_pages,
    report_pages,
)

# The package's own files at their plain addresses (`/app/static/app.css`); the pages name them at the addresses
# `app_assets` serves, named by their content.
assets = Blueprint("web_assets", __name__, url_prefix="/app", static_folder="../static/app",
                   static_url_path="/static")


def install_web_app(app: Quart) -> None:
    # Imported here, not with the page groups: `python -m inbox_http.web.vendor_assets` (the set-up's fetch) runs
    # that module as __main__, which must not have been imported already by this package's own import.
    from inbox_http.web import vendor_assets

    for group in (*PAGE_GROUPS, vendor_assets, app_assets):
        app.register_blueprint(group.blueprint)
    app.register_blueprint(assets)
    install_web(app)
    member_time.install(app)
    member_settings_pages.install(app)
    composer.install(app)
    app.jinja_env.globals["asset_url"] = app_assets.asset_url
    app.jinja_env.globals["workspace_script_url"] = app_assets.workspace_script_url
