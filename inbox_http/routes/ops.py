"""`GET /ops`: the operator page, one HTML page with its scripts and style sheet, served from the package
(`inbox_http/static/ops/`; no build step, nothing fetched from elsewhere), and `GET /ops/cluster`, the nodes it
shows.

The page holds no data of its own: its script reads `GET /health/actors`, `GET /health/actors/{kind}/{key}` and
`GET /metrics/overview` every few seconds, and `GET /ops/cluster` twice a second, and draws them. `GET /ops/cluster`
is every node PostgreSQL knows of (monitoring/cluster_view.py); for it, a node of a cluster publishes its own
figures every second while it serves (cluster/node_summary.py, started here with the app's serving: what it
publishes is this page's). The page and its data answer by the same rule as actor health
(`operator_only`): on this machine without INBOX_HEALTH_TOKEN it is served; from elsewhere without one, 403.
With INBOX_HEALTH_TOKEN set, a browser opening the address carries no bearer token, so the refusal (401) comes
with the page in its sign-in state: it asks for the token once, keeps it in the tab's sessionStorage and sends it
as `Authorization: Bearer` on every call it makes (a request that carries the token gets the page with 200). The
scripts and style sheet are served to anyone: they are the package's own files, the same for every caller.
"""

from __future__ import annotations

import functools
from importlib import resources

import trio
from quart import Blueprint, Response, current_app, request

from inbox_actors.cluster.node_summary import NodeSummaryPublisher
from inbox_actors.monitoring.cluster_view import LEASES_SHOWN, MOST_LEASES_SHOWN, ClusterView, cluster_view
from inbox_actors.monitoring.node_figures import FigureSource
from inbox_actors.paging.parameter_catalog import QueryParameter
from inbox_http.dependencies import Dependencies, dependencies
from inbox_http.encoding import json_response
from inbox_http.guard import accepts, responds
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
    """The operator page (HTML): the nodes, actor health, request and error rates, sends and webhooks, live.

    It draws what GET /ops/cluster, GET /health/actors, GET /health/actors/{kind}/{key} and GET /metrics/overview
    answer."""
    return _file("ops.html")


page.openapi_responses = _SIGN_IN_ANSWER  # type: ignore[attr-defined]


@blueprint.get("/ops.js")
@responds(bytes, media=("text/javascript",))
async def script():
    """The operator page's script (it holds no data)."""
    return _file("ops.js")


@blueprint.get("/nodes.js")
@responds(bytes, media=("text/javascript",))
async def nodes_script():
    """The operator page's script for its Nodes section (it holds no data)."""
    return _file("nodes.js")


@blueprint.get("/ops.css")
@responds(bytes, media=("text/css",))
async def style():
    """The operator page's style sheet."""
    return _file("ops.css")


@blueprint.get("/cluster")
@responds(ClusterView)
@operator_only
@accepts((QueryParameter("leases", "string", "how many of each node's leases to list: a whole number, held to 0 "
                                             f"to {MOST_LEASES_SHOWN}; any other text means the default, "
                                             f"{LEASES_SHOWN}"),))
async def cluster():
    """Every node PostgreSQL knows of, alive or not: the Nodes section of GET /ops.

    Each with its state (alive, draining, silent, lost, stopping, stopped), its liveness lock, since when it runs and
    when it was last heard from, its workspaces with their lease epochs and deadlines, and its own figures as it last
    published them: requests relayed, live actors per kind, its clock's skew from PostgreSQL. Times are
    PostgreSQL's. On a node alone: itself."""
    state = dependencies()
    leases = request.args.get("leases", default=LEASES_SHOWN, type=int)
    return json_response(await cluster_view(
        state.db, this_node=state.placement.node_id, clustered=state.settings.clustered,
        own=figure_source(state).figures(), leases_shown=LEASES_SHOWN if leases is None else leases))


def figure_source(state: Dependencies) -> FigureSource:
    """Where this node's figures are read (monitoring/node_figures.py)."""
    keeper = state.placement.keeper
    return FigureSource(actors=state.actors, metrics=state.metrics, workspaces_held=lambda: len(keeper.held()),
                        draining=lambda: state.lifecycle.draining, started=state.lifecycle.started_at)


@blueprint.while_app_serving
async def publish_node_summary():
    """While the app serves, a node of a cluster publishes its figures for the others' GET /ops/cluster; stopped
    (and its row marked stopped) when serving ends."""
    state: Dependencies | None = current_app.extensions.get("inbox")
    if state is None or not state.settings.clustered:
        yield
        return
    keeper = state.placement.keeper
    publisher = NodeSummaryPublisher(state.db, lambda: keeper.node_id, keeper.wait_named,
                                     figure_source(state).figures)
    scope = trio.CancelScope()

    async def publish() -> None:
        with scope:
            await publisher.run()

    current_app.nursery.start_soon(publish)
    yield
    scope.cancel()
