"""What the service was built with, reachable from every handler through `dependencies()`: settings, the database,
the actor system, the credential cache, the clock, the platform link, the webhook transport, where addresses are
counted, the metrics and where the service is in its life. Handlers pass the actions their dependencies
(`use_case_deps`) and adapt the outcome."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property

import trio
from quart import current_app

from inbox_actors.access.credentials import CredentialCache
from inbox_actors.access.rate_bucket import AddressAdmission
from inbox_actors.actor_kinds import ServiceDeps
from inbox_actors.ai_agent.agent import AiAgent
from inbox_actors.ai_agent.openai_compatible import OpenAICompatibleModel
from inbox_actors.cluster.membership import ClusterMembership
from inbox_actors.cluster.placement import WorkspacePlacement
from inbox_actors.live.wakeups import WorkspaceWakeups
from inbox_actors.monitoring.metrics import ServiceMetrics
from inbox_actors.platform.link import PlatformLink
from inbox_actors.runtime import ActorSystem
from inbox_actors.runtime.clock import Clock
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.webhooks.address_guard import AddressGuard
from inbox_actors.webhooks.transport import WebhookTransport
from inbox_http.settings import Settings
from persistence.database import Database


@dataclass
class Lifecycle:
    """Where the service is in its life, for GET /health/ready: set draining on SIGTERM, before anything stops."""

    draining: bool = False
    drain_began: trio.Event = field(default_factory=trio.Event)
    """Set with `draining`: what ends the open live streams (`begin_draining`)."""
    started_at: float = field(default_factory=time.monotonic)
    """time.monotonic() when the services were built: the uptime GET /health/live shows."""

    def begin_draining(self) -> None:
        self.draining = True
        self.drain_began.set()


@dataclass(frozen=True)
class WebhookServices:
    """What the webhook settings calls share with the endpoint actors: the address rules and the connections."""

    guard: AddressGuard
    transport: WebhookTransport


@dataclass(frozen=True)
class Dependencies:
    settings: Settings
    db: Database
    actors: ActorSystem
    credentials: CredentialCache
    clock: Clock
    platform: PlatformLink
    webhooks: WebhookServices
    actor_deps: ServiceDeps
    placement: WorkspacePlacement
    addresses: AddressAdmission
    """Where a client address's requests are counted (the per-IP ceiling, sign-in attempts): this node, or in a
    cluster the node that owns the address."""
    metrics: ServiceMetrics = field(default_factory=ServiceMetrics)
    membership: ClusterMembership | None = None
    """In a cluster: the nodes seen alive, which the address's owner is chosen among."""
    lifecycle: Lifecycle = field(default_factory=Lifecycle)
    live: WorkspaceWakeups = field(default_factory=WorkspaceWakeups)
    model: OpenAICompatibleModel | None = None
    """The AI agent's model endpoint; None: no model (the keyword FAQ bot answers)."""
    model_simulator_key: str = ""
    """The key the built-in model simulator expects, made for this process."""

    @cached_property
    def use_case_deps(self) -> UseCaseDeps:
        responder = self.actor_deps.conversations.responder
        forget = getattr(responder, "forget", None)  # a bot of a test's own may keep no cache
        return UseCaseDeps(self.db, self.actors, self.clock, self.webhooks.guard, self.webhooks.transport,
                           **({"forget_bot": forget} if forget is not None else {}),
                           agent=responder if isinstance(responder, AiAgent) else None,
                           media=lambda: self.platform.media)


def dependencies() -> Dependencies:
    return current_app.extensions["inbox"]
