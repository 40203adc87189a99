"""What the HTTP handlers reach: the database (reads), the actor system (writes), the credential cache."""

from __future__ import annotations

from dataclasses import dataclass, field

from quart import current_app

from inbox_actors.access.credentials import CredentialCache
from inbox_actors.actor_kinds import ServiceDeps
from inbox_actors.platform.link import PlatformLink
from inbox_actors.runtime import ActorSystem
from inbox_actors.runtime.clock import Clock
from inbox_actors.webhooks.address_guard import AddressGuard
from inbox_actors.webhooks.transport import WebhookTransport
from inbox_http.settings import Settings
from persistence.database import Database


@dataclass
class ServiceStatistics:
    """Counters of the HTTP front that operators read at GET /health."""

    activity_records_dropped: int = 0


@dataclass(frozen=True)
class WebhookServices:
    """What the webhook settings calls share with the endpoint actors: the address rules and the connections."""

    guard: AddressGuard
    transport: WebhookTransport


@dataclass(frozen=True)
class Services:
    settings: Settings
    db: Database
    actors: ActorSystem
    credentials: CredentialCache
    clock: Clock
    platform: PlatformLink
    webhooks: WebhookServices
    actor_deps: ServiceDeps
    statistics: ServiceStatistics = field(default_factory=ServiceStatistics)


def services() -> Services:
    return current_app.extensions["inbox"]
