"""The agent inbox: the web app a team answers customers from, served by the service itself.

One more front door over the same actions and permissions a key has (docs/inbox-app.md): server-rendered pages
(Jinja2 templates in `templates/`), a small script for live updates and a style sheet (`inbox_http/static/app/`),
no build step. Modules: `page_guard` (the session cookie, CSRF, the per-IP ceiling), `pages` (rendering, headers,
refusals), and one module per group of pages.
"""

from __future__ import annotations

from quart import Blueprint, Quart

from inbox_http.web import chat_pages, inbox_pages, live_stream, sign_in_pages, team_pages
from inbox_http.web.pages import install_web

# The script and the style sheet: the package's own files, the same for every caller.
assets = Blueprint("web_assets", __name__, url_prefix="/app", static_folder="../static/app",
                   static_url_path="/static")


def install_web_app(app: Quart) -> None:
    for blueprint in (sign_in_pages.blueprint, inbox_pages.blueprint, chat_pages.blueprint, team_pages.blueprint,
                      live_stream.blueprint, assets):
        app.register_blueprint(blueprint)
    install_web(app)
