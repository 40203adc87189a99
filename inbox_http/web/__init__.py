"""The agent inbox: the web app a team answers customers from, served by the service itself.

One more front door over the same actions and permissions a key has (docs/inbox-app.md): server-rendered pages
(Jinja2 templates in `templates/`), a small script for live updates and a style sheet (`inbox_http/static/app/`),
no build step. Modules: `page_guard` (the session cookie, CSRF, the per-IP ceiling), `pages` (rendering, headers,
refusals, the sections a member may open), and one module per group of pages, each with its `blueprint`.
"""

from __future__ import annotations

from quart import Blueprint, Quart

from inbox_http.web import bot_pages
from inbox_http.web import broadcast_pages
from inbox_http.web import chat_pages
from inbox_http.web import connect_pages
from inbox_http.web import inbox_pages
from inbox_http.web import keys_pages
from inbox_http.web import label_pages
from inbox_http.web import live_stream
from inbox_http.web import sign_in_pages
from inbox_http.web import sla_pages
from inbox_http.web import team_pages
from inbox_http.web import webhook_pages
from inbox_http.web.pages import install_web

PAGE_GROUPS = (
    sign_in_pages,
    inbox_pages,
    chat_pages,
    team_pages,
    bot_pages,
    label_pages,
    sla_pages,
    broadcast_pages,
    keys_pages,
    webhook_pages,
    connect_pages,
    live_stream,
)

# The script and the style sheet: the package's own files, the same for every caller.
assets = Blueprint("web_assets", __name__, url_prefix="/app", static_folder="../static/app",
                   static_url_path="/static")


def install_web_app(app: Quart) -> None:
    for group in PAGE_GROUPS:
        app.register_blueprint(group.blueprint)
    app.register_blueprint(assets)
    install_web(app)
