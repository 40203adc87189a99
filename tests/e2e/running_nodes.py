"""Nodes of the real service in the test's process, on one PostgreSQL, as `inbox-actors serve --nodes N` runs them as
processes: what the tests of several nodes (`tests/e2e/test_nodes.py` and others) and the e2e `service` fixture with
`--nodes N` (docs/development.md) share."""

from __future__ import annotations

import itertools
import socket
from collections.abc import AsyncIterator, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from functools import partial

import httpx
import msgspec
import trio
from quart_trio import QuartTrio

from inbox_actors.access import activity_log
from inbox_actors.outbound_http.verified_tls import verified_context
from inbox_http.cluster.node_launcher import reserve_service_port
from inbox_http.server import build_app, serve_app
from inbox_http.settings import Settings
from persistence.database import Database

CLUSTER_SECRET = "test-cluster-secret"


@dataclass
class Node:
    url: str                        # the address it serves on; with a shared service port, its own (the node's name)
    app: QuartTrio
    state: object                   # the app's Dependencies
    client: httpx.AsyncClient       # on `url`
    simulator_url: str | None       # the platform's, for the chat helpers

    def holds(self, workspace_id: int) -> bool:
        return self.state.placement.holds(workspace_id)

    def live(self, kind: str) -> int:
        return self.state.actors.summary().kinds[kind].live


@asynccontextmanager
async def running_node(db: Database, settings: Settings, *, extra_kinds: Iterable = (),
                       blueprints: Iterable = ()) -> AsyncIterator[Node]:
    """The service on a real socket, stopped (drained, its leases released) on leaving."""
    app = await build_app(db, settings, extra_kinds=list(extra_kinds))
    for blueprint in blueprints:
        app.register_blueprint(blueprint)
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        served_at = await nursery.start(partial(serve_app, app, shutdown_trigger=stop.wait))
        state = app.extensions["inbox"]
        # With a port of its own next to a shared one, the node is named (and reached by the others) by its own.
        url = state.placement.node_id if settings.node_port is not None else served_at
        async with httpx.AsyncClient(verify=verified_context(), base_url=url, timeout=10) as client:
            yield Node(url=url, app=app, state=state, client=client, simulator_url=state.platform.simulator_url)
        stop.set()


@asynccontextmanager
async def own_pool(db: Database, settings: Settings) -> AsyncIterator[Database]:
    """A Database of its own on the database of `db` (a pool of `settings.db_pool_size`), closed on leaving: what a
    further node of one test runs on, as each process of `inbox-actors serve --nodes N` has its own. Nodes sharing
    one Database would take each other's LISTEN connections (it keeps one per name) and miss notifications."""
    own = await Database.connect(db.url, min_size=1, max_size=settings.db_pool_size)
    try:
        yield own
    finally:
        await own.close()


@asynccontextmanager
async def running_node_of_its_own(db: Database, settings: Settings, *, extra_kinds: Iterable = (),
                                  blueprints: Iterable = ()) -> AsyncIterator[Node]:
    """`running_node` on a pool of its own (`own_pool`) on the database of `db`: a further node next to one running
    on `db`. Stopped before its pool is closed."""
    async with own_pool(db, settings) as own, running_node(own, settings, extra_kinds=extra_kinds,
                                                          blueprints=blueprints) as node:
        yield node


def cluster_settings(settings: Settings) -> Settings:
    """What every node of one cluster shares: the cluster's secret and, unless the settings name a platform of their
    own, the secrets of the built-in simulator the first node runs for all of them."""
    shared = {"cluster_secret": CLUSTER_SECRET}
    if settings.uses_simulator:
        shared.update(whatsapp_app_secret=settings.whatsapp_app_secret or "test-app-secret",
                      whatsapp_access_token=settings.whatsapp_access_token or "test-access-token",
                      whatsapp_verify_token=settings.whatsapp_verify_token or "test-verify-token")
    return _replace(settings, **shared)


def on_first_nodes_platform(settings: Settings, first: Node) -> Settings:
    """The settings of a further node: the first node's built-in simulator is its platform too (one platform, which
    posts every webhook to the first node's service address), unless the settings name one of their own."""
    if first.simulator_url is None:
        return settings
    return _replace(settings, whatsapp_api_url=first.simulator_url)


@asynccontextmanager
async def running_cluster(db: Database, settings: Settings, count: int, *, extra_kinds: Iterable = (),
                          blueprints: Iterable = ()) -> AsyncIterator[tuple[str, list[Node]]]:
    """`count` nodes sharing one service port (SO_REUSEPORT: the kernel spreads the connections made to it over
    them, as under `inbox-actors serve --nodes N`), each with a port of its own the others relay to, and a pool of
    its own on the database of `db` (the first node's is `db`; the others', `own_pool`), as each process has.
    Yields the service's URL and the nodes."""
    reservation, port = reserve_service_port(settings.host, 0)
    reserved, own_ports = reserve_ports(settings.host, count)
    shared = _replace(cluster_settings(settings), port=port, reuse_port=True)
    extra_kinds, blueprints = list(extra_kinds), list(blueprints)
    try:
        async with AsyncExitStack() as stack:
            first = await stack.enter_async_context(running_node(
                db, _replace(shared, node_port=own_ports[0]), extra_kinds=extra_kinds, blueprints=blueprints))
            nodes = [first]
            further = on_first_nodes_platform(shared, first)
            for own_port in own_ports[1:]:
                nodes.append(await stack.enter_async_context(running_node_of_its_own(
                    db, _replace(further, node_port=own_port), extra_kinds=extra_kinds, blueprints=blueprints)))
            # Every node listens on the service port and its own now: nothing else can take them.
            for held in (reservation, *reserved):
                held.close()
            await seeing_each_other(nodes)
            yield f"http://{settings.host}:{port}", nodes
    finally:
        for held in (reservation, *reserved):
            held.close()


async def seeing_each_other(nodes: list[Node]) -> None:
    """Until every node's view of the live nodes is all of them, each having said it is alive once named: a client
    address then has one owner, whichever node is asked (inbox_http/cluster/address_admission.py). Each node reads
    the view again every 2 s by itself; the test's nodes read it now."""
    everyone = {node.url for node in nodes}
    with trio.fail_after(10):
        while True:
            for node in nodes:
                await node.state.membership.refresh()
            if all(set(node.state.membership.nodes()) == everyone for node in nodes):
                return
            await trio.sleep(0.05)


def reserve_ports(host: str, count: int) -> tuple[list[socket.socket], list[int]]:
    """`count` ports for the nodes' own addresses, each held by a socket bound with SO_REUSEADDR but not listening
    until its node listens there (Hypercorn binds with SO_REUSEADDR too): a port picked and let go could be taken
    by another test meanwhile (pytest-xdist's workers start nodes at the same time)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    held = []
    try:
        for _ in range(count):
            probe = socket.socket(family, socket.SOCK_STREAM)
            held.append(probe)
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host.strip("[]"), 0))
    except OSError:
        for probe in held:
            probe.close()
        raise
    return held, [probe.getsockname()[1] for probe in held]


class ActorsOfNodes:
    """`service.actors` when the service is several nodes: an actor of a workspace's kind (a chat, a key ring, a
    webhook endpoint: `ActorKind.workspace_of`) is the one on the node holding that workspace (the first node's when
    none holds it yet, which takes it at the first message); the activity log's, asked by `wait_recorded`, is every
    node's (each records the calls it serves); anything else is the first node's."""

    def __init__(self, nodes: list[Node]) -> None:
        self._nodes = nodes
        self._first = nodes[0].state.actors

    def _workspace_of(self, kind: str, key: str) -> int | None:
        workspace_of = self._first.kind(kind).workspace_of
        return workspace_of(key) if workspace_of is not None else None

    def _holder(self, workspace_id: int) -> Node | None:
        return next((node for node in self._nodes if node.holds(workspace_id)), None)

    def ref(self, kind: str, key: str):
        if kind == activity_log.KIND:
            return _EveryNode([node.state.actors.ref(kind, key) for node in self._nodes])
        workspace_id = self._workspace_of(kind, key)
        holder = self._holder(workspace_id) if workspace_id is not None else None
        return (holder.state.actors if holder is not None else self._first).ref(kind, key)

    def statistics(self, kind: str, key: str):
        workspace_id = self._workspace_of(kind, key)
        if workspace_id is None:
            return self._first.statistics(kind, key)
        holder = self._holder(workspace_id)
        if holder is not None:
            return holder.state.actors.statistics(kind, key)
        # Held by none: an actor that failed (or is leaving) is still on the node it ran on.
        return next((found for node in self._nodes
                     if (found := node.state.actors.statistics(kind, key)) is not None), None)

    def __getattr__(self, name: str):
        return getattr(self._first, name)


class _EveryNode:
    """One actor's ref on every node: a question is asked of each in turn, the first node's answer returned."""

    def __init__(self, refs: list) -> None:
        self._refs = refs

    async def ask(self, message: object, *args, **kwargs) -> object:
        answers = [await ref.ask(message, *args, **kwargs) for ref in self._refs]
        return answers[0]

    async def tell(self, message: object) -> None:
        for ref in self._refs:
            await ref.tell(message)

    def tell_nowait(self, message: object) -> None:
        for ref in self._refs:
            ref.tell_nowait(message)


class Spread(httpx.AsyncBaseTransport):
    """Sends each request to the next of `urls` in turn, as a round-robin load balancer would: what the client
    addressed, its Host header included, is left as it was, so cookies, redirects and Origin checks see one
    service."""

    def __init__(self, urls: list[str]) -> None:
        self._targets = [httpx.URL(url) for url in urls]
        self._turn = itertools.count()
        self._transport = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        target = self._targets[next(self._turn) % len(self._targets)]
        url = request.url.copy_with(scheme=target.scheme, host=target.host, port=target.port)
        sent = httpx.Request(request.method, url, headers=request.headers, stream=request.stream,
                             extensions=request.extensions)
        return await self._transport.handle_async_request(sent)

    async def aclose(self) -> None:
        await self._transport.aclose()


def _replace(settings: Settings, **changes) -> Settings:
    return msgspec.structs.replace(settings, **changes)
