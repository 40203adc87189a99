"""The real service on a real socket (Hypercorn on 127.0.0.1, an ephemeral port), driven over HTTP: one node, or with
`--nodes N` N nodes on one database sharing one port (tests/e2e/running_nodes.py, docs/development.md)."""

from __future__ import annotations

import fcntl
import hashlib
import ipaddress
import tempfile
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import msgspec
import pytest
from quart_trio import QuartTrio

from inbox_actors.outbound_http.verified_tls import verified_context
from inbox_actors.runtime import ActorSystem
from inbox_http.settings import NO_MODEL, Settings
from persistence.database import Database
from tests.browser import artifacts, chromium  # noqa: F401 (fixtures of the web pages' tests)
from tests.e2e.running_nodes import ActorsOfNodes, Node, Spread, running_cluster, running_node


@dataclass
class RunningService:
    url: str
    app: QuartTrio
    actors: ActorSystem
    db: Database
    client: httpx.AsyncClient
    # The built-in WhatsApp simulator the service sends through (None with WHATSAPP_API_URL set).
    simulator_url: str | None = None
    # Every node (one, unless `--nodes N`). With several, `url` is the port they share, `client` sends each request
    # to the next node, `app` is the first node's and `actors` finds a workspace's actor on the node holding it
    # (running_nodes.ActorsOfNodes).
    nodes: list[Node] = field(default_factory=list)

    def db_of(self, workspace_id: int) -> Database:
        """The connection pool of the node holding the workspace (each node has its own): where a fault planned
        with `fail_next` meets the statements of the workspace's requests. `db` with one node."""
        holder = next((node for node in self.nodes if node.holds(workspace_id)), None)
        return holder.state.db if holder is not None and len(self.nodes) > 1 else self.db


def node_count(config: pytest.Config) -> int:
    """How many nodes the `service` fixture starts (`--nodes`, tests/conftest.py)."""
    return config.getoption("nodes")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With several nodes, a test marked `single_node` (it looks inside one node) is skipped, with its reason."""
    if node_count(config) == 1:
        return
    for item in items:
        marker = item.get_closest_marker("single_node")
        if marker is not None:
            why = marker.args[0] if marker.args else marker.kwargs.get("reason", "looks inside one node")
            item.add_marker(pytest.mark.skip(reason=f"single_node: {why}"))


@pytest.fixture
def service_settings(database_url: str) -> Settings:
    # Webhook receivers in tests listen on this machine, which only an allowed network may be. The bot is the
    # keyword FAQ bot, whose answers most tests pin; the AI agent's tests ask the built-in model simulator
    # (`model_url=None`, the service's default: tests/e2e/test_ai_agent.py).
    return Settings(database_url=database_url, port=0, shutdown_grace_seconds=2.0,
                    simulator_status_delays=(0.01, 0.02, 0.03),
                    webhook_allowed_networks=(ipaddress.ip_network("127.0.0.0/8"),), model_url=NO_MODEL)


@pytest.fixture
def extra_actor_kinds() -> list:
    """Overridden by tests that need actor kinds of their own on the running server."""
    return []


@pytest.fixture
def extra_blueprints() -> list:
    """Overridden by tests that mount routes of their own next to the real ones."""
    return []


@pytest.fixture
async def service(request, db: Database, service_settings: Settings, extra_actor_kinds, extra_blueprints):
    count = node_count(request.config)
    if count > 1:
        async with spread_service(db, service_settings, count, extra_actor_kinds, extra_blueprints) as running:
            yield running
        return
    async with running_node(db, service_settings, extra_kinds=extra_actor_kinds, blueprints=extra_blueprints) as node:
        yield RunningService(url=node.url, app=node.app, actors=node.state.actors, db=db, client=node.client,
                             simulator_url=node.simulator_url, nodes=[node])


@asynccontextmanager
async def spread_service(db: Database, settings: Settings, count: int, extra_actor_kinds, extra_blueprints):
    """The service as `count` nodes on one database, as `inbox-actors serve --nodes N` runs it: the kernel spreads
    the connections made to `url` over them, and `client` sends each request to the next node in turn, so every
    workspace's calls land on all of them and most are relayed to the node holding it."""
    async with running_cluster(db, settings, count, extra_kinds=extra_actor_kinds,
                               blueprints=extra_blueprints) as (url, nodes):
        async with httpx.AsyncClient(verify=verified_context(), base_url=url, timeout=10,
                                     transport=Spread([node.url for node in nodes])) as client:
            first = nodes[0]
            yield RunningService(url=url, app=first.app, actors=ActorsOfNodes(nodes), db=db, client=client,
                                 simulator_url=first.simulator_url, nodes=nodes)


@pytest.fixture
def alone_with_bench_databases(postgres_server):
    """For a test whose script makes an `inbox_bench_*` database on the session's server and must drop it: waits
    until no other such test uses that server, so its before-and-after lists see only its own script's. Only a
    shared server (DATABASE_URL, under pytest-xdist or in two test runs at once) makes anyone wait: with the
    embedded one each worker has a server of its own."""
    if not postgres_server.shared:
        yield
        return
    server = hashlib.sha256(postgres_server.admin_url.encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"inbox-test-bench-databases-{server}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def assert_stable(response: httpx.Response, status: int, code: str) -> dict:
    """Asserts `response` is the stable error `code` at `status` and returns its body: clients branch on `error`,
    so it must be exact, and people read `message`, so it must be there."""
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == code, body
    assert isinstance(body["message"], str) and body["message"], body
    return body


def with_settings(settings: Settings, **changes) -> Settings:
    return msgspec.structs.replace(settings, **changes)
