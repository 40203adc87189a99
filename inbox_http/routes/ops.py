"""`GET /ops`: the operator page, one HTML page with its script and style sheet, served from the package
(`inbox_http/static/ops/`; no build step, nothing fetched from elsewhere).

The page holds no data of its own: its script reads `GET /health/actors`, `GET /health/actors/{kind}/{key}` and
`GET /metrics/overview` every few seconds and draws them. The page answers by the same rule as actor health
(`operator_only`): on this machine without INBOX_HEALTH_TOKEN it is served; from elsewhere without one, 403.
With INBOX_HEALTH_TOKEN set, a browser opening the address carries no bearer token, so the refusal (401) comes
with the page in its sign-in state: it asks for the token once, keeps it in the tab's sessionStorage and sends it
as `Authorization: Bearer` on every call it makes (a request that carries the token gets the page with 200). The
script and style sheet are served to anyone: they are the package's own files, the same for every caller.
"""

from __future__ import annotations

import functools
from importlib import resources

from quart import Blueprint, Response

from inbox_http.guard import responds
from inbox_http.routes.health import operator_only

blueprint = Blueprint("ops", __name__, url_prefix="/ops")

_FILES = resources.files("inbox_http") / "static" / "ops"
_MEDIA = {"html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8",
          "css": "text/css; charset=utf-8"}
# Everything the page loads comes from this service; nothing it shows is ever parsed as markup.
_HEADERS = {
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                               "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
}
_SIGN_IN_ANSWER = {
    "401": {"description": "INBOX_HEALTH_TOKEN is set and the request carries no bearer token, or another one: "
                           "the page in its sign-in state (it asks for the token)",
            "content": {"text/html": {"schema": {"type": "string"}}}},
}


@functools.cache
def _read(name: str) -> bytes:
    return (_FILES / name).read_bytes()


def _file(name: str, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(_read(name), status=status, content_type=_MEDIA[name.rsplit(".", 1)[1]],
                    headers={**_HEADERS, **(headers or {})})


def _sign_in_on_refusal(view):
    """A 401 from `operator_only` answered with the page itself (it holds no data), which then asks for the token."""

    @functools.wraps(view)
    async def page(*args, **kwargs):
        response = await view(*args, **kwargs)
        if response.status_code == 401:
            return _file("ops.html", 401, {"WWW-Authenticate": 'Bearer realm="inbox-actors operator"'})
        return response

    return page


@blueprint.get("")
@responds(bytes, media=("text/html",))
@_sign_in_on_refusal
@operator_only
async def page():
    """The operator page (HTML): actor health, request and error rates, sends and webhooks, refreshed live.

    It draws what GET /health/actors, GET /health/actors/{kind}/{key} and GET /metrics/overview answer."""
    return _file("ops.html")


page.openapi_responses = _SIGN_IN_ANSWER  # type: ignore[attr-defined]


@blueprint.get("/ops.js")
@responds(bytes, media=("text/javascript",))
async def script():
    """The operator page's script (it holds no data)."""
    return _file("ops.js")


@blueprint.get("/ops.css")
@responds(bytes, media=("text/css",))
async def style():
    """The operator page's style sheet."""
    return _file("ops.css")
