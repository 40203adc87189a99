"""Running the service: one trio-asyncio loop around the database, the actor system and Hypercorn."""

from __future__ import annotations

import logging
import secrets
import socket
from functools import partial
from typing import Awaitable, Callable, Sequence

import trio
from hypercorn.config import Config
from hypercorn.middleware import ProxyFixMiddleware
from hypercorn.trio import serve
from quart_trio import QuartTrio

from inbox_actors.access.credentials import CredentialCache
from inbox_actors.access.demo_workspace import DemoAccess, seed_demo
from inbox_actors.access.rate_bucket import AddressAdmission, NodeAddresses
from inbox_actors.actor_kinds import (
    OUTAGES,
    ServiceDeps,
    actor_kinds,
    start_standing_actors,
)
from inbox_actors.ai_agent.agent import AgentConfig, AiAgent
from inbox_actors.ai_agent.openai_compatible import OpenAICompatibleModel
from inbox_actors.broadcasts.schedule import workspace_taken
from inbox_actors.cluster.crash_watch import CrashWatch
from inbox_actors.cluster.leases import LeaseKeeper
from inbox_actors.cluster.liveness import NodeLiveness
from inbox_actors.cluster.membership import ClusterMembership
from inbox_actors.cluster.placement import WorkspacePlacement
from inbox_actors.cluster.rebalancing import Rebalancer
from inbox_actors.conversations import idempotency_keys
from inbox_actors.conversations.bot import FaqBot, Responder
from inbox_actors.conversations.conversation import ConversationDeps
from inbox_actors.conversations.sla_clock import deadline_set
from inbox_actors.conversations.turn_resumption import wake_unanswered_chats
from inbox_actors.model_simulator.simulated_model import ModelSettings, ModelSimulator
from inbox_actors.monitoring.collectors import ActorKindCollector, DatabasePoolCollector
from inbox_actors.monitoring.gc_pauses import GcPauses, freeze_start_up
from inbox_actors.monitoring.metrics import ServiceMetrics
from inbox_actors.platform.link import PlatformLink
from inbox_actors.platform.simulator.model import Simulator, SimulatorConfig
from inbox_actors.platform.simulator.rules import StatusDelays
from inbox_actors.platform.simulator.server import serve_simulator
from inbox_actors.platform.stored_templates import StoredTemplateCatalog
from inbox_actors.runtime import ActorKind, ActorSystem, Job
from inbox_actors.runtime.clock import Clock, WallClock
from inbox_actors.runtime.stop_signal import set_on_stop_signal
from inbox_actors.team import assignment_desk
from inbox_actors.webhooks.address_guard import AddressGuard
from inbox_actors.webhooks.endpoint import EndpointDeps
from inbox_actors.webhooks.outbox_listener import OutboxListener
from inbox_actors.webhooks.transport import WebhookTransport
from inbox_http.app import create_app
from inbox_http.cluster.address_admission import ClusterAddresses
from inbox_http.cluster.routing import WorkspaceRouting
from inbox_http.database_outage import AnsweringOutages
from inbox_http.dependencies import Dependencies, WebhookServices
from inbox_http.oauth.mount import OAuthMount
from inbox_http.request_metrics import RequestMetrics
from inbox_http.requests_in_flight import RequestsInFlight
from inbox_http.settings import Settings
from persistence.database import Database, DatabaseUnavailable, open_database_loop
from persistence.session_lock import SessionLock
from persistence.startup import open_database

log = logging.getLogger("inbox_http.server")

IDEMPOTENCY_PRUNE_SECONDS = 3600.0


async def build_app(db: Database, settings: Settings, *, clock: Clock | None = None,
                    extra_kinds: Sequence[ActorKind] = (), responder: Responder | None = None,
                    address_guard: AddressGuard | None = None) -> QuartTrio:
    """The app with its services: credential cache (listening for changes), clock, platform link, actors.

    `clock`, `extra_kinds`, `responder` and `address_guard` are for tests and scripts (a clock that follows
    trio's, probe actors, a bot of their own, webhook address rules stricter than the settings'); the default
    bot is the workspace's FAQ bot.
    """
    clock = clock or WallClock()
    metrics = ServiceMetrics()
    db.observe_queries(metrics.query_finished)
    credentials = CredentialCache(db)
    platform = PlatformLink.with_secrets(
        app_secret=settings.whatsapp_app_secret, verify_token=settings.whatsapp_verify_token,
        access_token=settings.whatsapp_access_token, api_url=settings.whatsapp_api_url)
    platform.metrics = metrics
    # The built-in model simulator checks a key as a provider does: one made for this process.
    simulator_key = secrets.token_urlsafe(24)
    model = _model_for(settings, simulator_key)
    if responder is None:
        # The AI agent when the service has a model (its built-in simulator by default), else the keyword FAQ bot.
        faq = FaqBot(db)
        responder = AiAgent(db, model, agent_config(settings), faq) if model is not None else faq
    conversations = ConversationDeps(db=db, clock=clock, platform=platform, responder=responder,
                                     sends_per_second=settings.platform_sends_per_second,
                                     template_prices=settings.template_prices,
                                     ai_reply_credits=settings.ai_reply_credits,
                                     on_queue_moved=assignment_desk.look)
    guard = address_guard or AddressGuard(settings.webhook_allowed_networks)
    # As many kept-alive connections as requests in flight: fewer would close and reopen one per event.
    webhooks = WebhookServices(guard=guard, transport=WebhookTransport(
        guard, max_idle_per_host=settings.webhook_concurrency, metrics=metrics))
    endpoint_deps = EndpointDeps(db=db, clock=clock, transport=webhooks.transport, guard=guard,
                                 concurrency=settings.webhook_concurrency)
    service_deps = ServiceDeps(db=db, clock=clock, credentials=credentials, conversations=conversations,
                               webhooks=endpoint_deps, idle_seconds=settings.actor_idle_seconds,
                               extra_jobs=_front_jobs(db), metrics=metrics)
    # Unless INBOX_NODE_URL names it, the node is named by the address it serves on, once listening (serve_app).
    # A node of a cluster (it shares a secret with others) fences its writes in PostgreSQL too, says it is alive
    # (for rebalancing, and the choice of an address's owner), and counts a client address on its owner.
    # A node of a cluster also holds its liveness lock, which tells the others at once when it dies (crash_watch.py).
    liveness = NodeLiveness(partial(_liveness_lock, db, settings), lambda: placement.keeper.node_id or None) \
        if settings.clustered else None
    placement = WorkspacePlacement(LeaseKeeper(db, settings.node_url, on_lost=lambda workspace: None,
                                               announce=settings.clustered, liveness=liveness),
                                   fence_in_database=settings.clustered)
    actors = ActorSystem(placement=placement, outages=OUTAGES)
    membership, addresses = _where_addresses_count(db, settings, placement, actors, metrics)
    placement.keeper.on_lost = actors.evict_workspace
    metrics.workspaces_held.set_function(lambda: len(placement.keeper.held()))
    for kind in (*actor_kinds(service_deps), *extra_kinds):
        actors.register(kind)
    conversations.on_new_deadline = partial(deadline_set, actors)
    metrics.watch(ActorKindCollector(actors))
    metrics.watch(DatabasePoolCollector(db))
    return create_app(Dependencies(settings=settings, db=db, actors=actors, credentials=credentials, clock=clock,
                               platform=platform, webhooks=webhooks, actor_deps=service_deps, placement=placement,
                               addresses=addresses, membership=membership, metrics=metrics, model=model,
                               model_simulator_key=simulator_key))


def _liveness_lock(db: Database, settings: Settings, name: str) -> SessionLock:
    return SessionLock(db.url, name, application_name=f"{settings.connection_name} liveness")


def _model_for(settings: Settings, simulator_key: str) -> OpenAICompatibleModel | None:
    """The AI agent's model endpoint: INBOX_MODEL_URL's, or the built-in simulator's once it listens
    (`_connect_platform`); None: no model, the keyword FAQ bot answers."""
    if not settings.has_model:
        return None
    url = None if settings.uses_model_simulator else settings.model_url
    key = settings.model_key if url is not None else simulator_key
    return OpenAICompatibleModel(key, timeout=settings.model_timeout_seconds, base_url=url)


def agent_config(settings: Settings) -> AgentConfig:
    return AgentConfig(default_model=settings.model, timeout_seconds=settings.model_timeout_seconds,
                       context_tokens=settings.model_context_tokens, concurrent_calls=settings.model_concurrency,
                       prices=settings.model_prices, reply_credits=settings.ai_reply_credits)


def _where_addresses_count(db: Database, settings: Settings, placement: WorkspacePlacement, actors: ActorSystem,
                           metrics: ServiceMetrics) -> tuple[ClusterMembership | None, AddressAdmission]:
    if not settings.clustered:
        return None, NodeAddresses(actors)
    keeper = placement.keeper
    membership = ClusterMembership(db, lambda: keeper.node_id or None, within=keeper.ttl)
    return membership, ClusterAddresses(actors, membership, secret=settings.cluster_secret.encode(), metrics=metrics)


def _front_jobs(db: Database) -> dict[str, Job]:
    """Timers of the HTTP front's own data: Idempotency-Keys are forgotten after their 24-hour life."""
    def prune(_actors: object) -> Awaitable[int]:
        return idempotency_keys.prune(db)  # by PostgreSQL's clock, whatever this node's says

    return {"idempotency key retention": Job(IDEMPOTENCY_PRUNE_SECONDS, prune)}


async def serve_app(
    app: QuartTrio, *, shutdown_trigger: Callable[[], Awaitable[None]],
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve HTTP until `shutdown_trigger` returns; reports the bound base URL once listening.

    Shutdown, in order: readiness turns false (GET /health/ready answers 503, responses say Connection: close)
    and, for INBOX_DRAIN_SECONDS, requests are still served; then no new connection is accepted and the
    requests in flight finish; then the actors drain their mailboxes (webhook deliveries under way finish or
    stay in the outbox), each step under the grace period. PostgreSQL stops after this returns.
    """
    state: Dependencies = app.extensions["inbox"]
    settings = state.settings
    config = Config()
    config.bind = _binds(settings)
    config.graceful_timeout = settings.shutdown_grace_seconds
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    # The OAuth connection flow's endpoints are the MCP SDK's Starlette handlers, mounted in front of the app.
    secret = settings.cluster_secret.encode() if settings.clustered else None
    routing = WorkspaceRouting(RequestMetrics(OAuthMount(app), state.metrics), state, secret=secret)
    # A request that meets the database out, in the routing's look-ups or in the app, is answered 503.
    counted = RequestsInFlight(AnsweringOutages(routing), closing=lambda: state.lifecycle.draining)
    served = counted if settings.trusted_proxy_hops == 0 else ProxyFixMiddleware(
        counted, mode="legacy", trusted_hops=settings.trusted_proxy_hops)
    stopping = trio.Event()
    keeper = state.placement.keeper
    outbox = OutboxListener(state.db, state.actors, on_outbox=state.live.ring)
    async with trio.open_nursery() as nursery:
        # A workspace this node takes (another node died, stopped or handed it over) goes on with what was under
        # way: its broadcasts, its pending webhook events, its chats' bot turns.
        keeper.on_taken = partial(_resume_taken, state, outbox, nursery)
        await nursery.start(state.credentials.keep_listening)
        if keeper.liveness is not None:
            nursery.start_soon(keeper.liveness.run, keeper.wait_named)
            nursery.start_soon(CrashWatch(keeper).run)
        await nursery.start(keeper.run)
        if state.membership is not None:
            await nursery.start(state.membership.run)
        # A node of a cluster asked to (INBOX_REBALANCE_SECONDS) hands workspaces to the nodes holding fewer, until
        # shutdown begins.
        rebalancing = trio.CancelScope()
        if settings.rebalances:
            nursery.start_soon(_rebalance, Rebalancer(state.placement, state.actors, routing.requests_under_way,
                                                      period=settings.rebalance_seconds), rebalancing)
        await nursery.start(state.actors.run)
        await start_standing_actors(state.actors, state.actor_deps)
        # After the actors run: on connecting it wakes every workspace with events a crash left pending.
        await nursery.start(outbox.keep_listening)
        simulator_scope = trio.CancelScope()
        simulator = await _connect_platform(nursery, state, simulator_scope)

        async def stop_serving() -> None:
            await shutdown_trigger()
            rebalancing.cancel()
            state.lifecycle.begin_draining()   # readiness first: the load balancer stops sending new traffic
            log.info("draining: /health/ready answers 503; serving %g s more, then finishing the %d requests under "
                     "way", settings.drain_seconds, counted.active)
            if settings.drain_seconds > 0:
                await trio.sleep(settings.drain_seconds)
            stopping.set()
            counted.refuse_new()
            # The in-process simulator holds keep-alive connections to us; it goes first, or Hypercorn would
            # wait the whole grace period for them to close.
            simulator_scope.cancel()

        try:
            async with trio.open_nursery() as http:
                binds = await http.start(partial(serve, served, config, shutdown_trigger=stop_serving))
                if settings.node_url is None:
                    state.placement.keeper.name(settings.node_name(binds[-1] if settings.node_port else binds[0]))
                http.start_soon(_end_when_answered, stopping, counted, settings.shutdown_grace_seconds,
                                http.cancel_scope)
                if simulator is not None:
                    simulator.webhook_url = f"{binds[0]}/webhooks/whatsapp"
                task_status.started(binds[0])
        finally:
            # Hypercorn has returned, so no request can find the actors gone.
            rebalancing.cancel()
            state.lifecycle.begin_draining()
            log.info("drained HTTP: %d requests answered while draining, %d taken and left unanswered, %d refused "
                     "503 once HTTP stopped; stopping the actors", counted.answered_draining, counted.unanswered,
                     counted.refused_stopping)
            with trio.CancelScope(shield=True):
                await state.actors.shutdown(settings.shutdown_grace_seconds)
                await _hand_over(state.placement.keeper)
                await state.platform.aclose()
                await routing.aclose()
                if isinstance(state.addresses, ClusterAddresses):
                    await state.addresses.aclose()
                await state.webhooks.transport.aclose()
                if state.model is not None:
                    await state.model.close()
            nursery.cancel_scope.cancel()


def _binds(settings: Settings) -> list[str]:
    """The service's address and, when the service port is shared by several nodes, this node's own."""
    service = f"{settings.host}:{settings.port}"
    binds = [service]
    if settings.reuse_port:
        # Hypercorn sets SO_REUSEPORT only for its own worker processes: the socket is made here, and handed over.
        family = socket.AF_INET6 if ":" in settings.host else socket.AF_INET
        shared = socket.socket(family, socket.SOCK_STREAM)
        shared.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        shared.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        shared.bind((settings.host.strip("[]"), settings.port))
        binds = [f"fd://{shared.detach()}"]
    if settings.node_port is not None:
        binds.append(f"{settings.host}:{settings.node_port}")
    return binds


def _resume_taken(state: Dependencies, outbox: OutboxListener, nursery: trio.Nursery, workspace_id: int) -> None:
    """(leases.py's `on_taken`, which must not block.)"""
    workspace_taken(state.actors, workspace_id)
    outbox.taken(workspace_id)
    nursery.start_soon(wake_unanswered_chats, state.db, state.actors, workspace_id)


async def _rebalance(rebalancer: Rebalancer, scope: trio.CancelScope) -> None:
    with scope:
        await rebalancer.run()


async def _hand_over(keeper: LeaseKeeper) -> None:
    """The actors have stopped: release the node's workspaces, so another node takes them at once rather than after
    their leases expire."""
    try:
        released = await keeper.release_all()
    except DatabaseUnavailable as err:
        log.warning("leases not released (%s): other nodes take them once they expire", err)
    else:
        log.info("released the leases of %d workspaces", released)


async def _end_when_answered(stopping: trio.Event, counted: RequestsInFlight, grace: float,
                             http: trio.CancelScope) -> None:
    """Once shutdown began, stop serving as soon as no request is under way (within the grace period):
    Hypercorn would otherwise wait out the grace period for idle keep-alive connections (see request_count)."""
    await stopping.wait()
    with trio.move_on_after(grace):
        # Checked again after each wake-up: a request may have begun on an open connection meanwhile, and no
        # checkpoint separates the final check from the cancel.
        while counted.active:
            await counted.wait_none_active()
    http.cancel()


async def _serve_simulator(simulator: Simulator, port: int, scope: trio.CancelScope, model: ModelSimulator | None,
                           *, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
    with scope:
        await serve_simulator(simulator, "127.0.0.1", port, model=model, task_status=task_status)


async def _connect_platform(nursery: trio.Nursery, state: Dependencies, scope: trio.CancelScope) -> Simulator | None:
    """Point the platform link at WHATSAPP_API_URL, opening the connections of its sends ahead (platform/client.py),
    or start the built-in simulator and point it there (its connections are opened as sends need them: the tests
    start a service each, and would pay for them every time)."""
    settings, link = state.settings, state.platform
    if not settings.uses_simulator:
        link.attach(settings.whatsapp_api_url)
        nursery.start_soon(link.open_ahead)
        return None
    sent, delivered, read = settings.simulator_status_delays
    simulator = Simulator(SimulatorConfig(app_secret=link.app_secret, access_token=link.access_token,
                                          delays=StatusDelays(sent=sent, delivered=delivered, read=read),
                                          throughput_per_second=settings.simulator_throughput),
                          catalog=StoredTemplateCatalog(state.db), clock=state.clock)
    # The AI agent's model is played by the same server unless INBOX_MODEL_URL names one (or "none").
    model = None
    if settings.uses_model_simulator and state.model is not None:
        model = ModelSimulator(state.model_simulator_key,
                               settings=ModelSettings(latency_seconds=settings.model_simulator_latency))
    url = await nursery.start(partial(_serve_simulator, simulator, settings.simulator_port, scope, model))
    link.attach(url)
    link.simulator_url = url
    log.info("built-in WhatsApp simulator listening on %s", url)
    if model is not None:
        state.model.attach(f"{url}/model/v1")
        log.info("built-in model simulator listening on %s/model/v1 (model %s)", url, settings.model)
    return simulator


async def run_service(
    settings: Settings, *, demo: bool = False, on_ready: Callable[[dict], None] | None = None,
) -> None:
    """The whole service, as `inbox-actors serve` runs it; SIGINT or SIGTERM shut it down cleanly."""
    stop = trio.Event()
    async with open_database_loop():
        async with open_database(url=settings.database_url, data_dir=settings.data_dir,
                                 pool_size=settings.db_pool_size, application_name=settings.connection_name) as db:
            demo_access: DemoAccess | None = await seed_demo(db) if demo else None
            async with trio.open_nursery() as nursery:
                nursery.start_soon(set_on_stop_signal, stop)
                app = await build_app(db, settings)
                log.debug("%d objects of start-up frozen out of garbage collection", freeze_start_up())
                with GcPauses(app.extensions["inbox"].metrics):
                    url = await nursery.start(partial(serve_app, app, shutdown_trigger=stop.wait))
                    if on_ready is not None:
                        ready: dict = {"status": "ready", "url": url, "inbox": f"{url}/app/inbox",
                                       "database": "external" if settings.database_url else "embedded",
                                       "platform": app.extensions["inbox"].platform.api_url,
                                       "simulator": settings.uses_simulator}
                        if demo_access is not None:
                            ready["demo"] = {"workspace_id": demo_access.workspace_id,
                                             "phone_number_id": demo_access.phone_number_id,
                                             "user_id": demo_access.user_id, "key": demo_access.key,
                                             "email": demo_access.email, "password": demo_access.password}
                        on_ready(ready)
                    await stop.wait()
                    log.info("shutting down: finishing requests, then draining actors")
    log.info("stopped")
