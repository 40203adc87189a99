"""What every action runs with: the database, the actors and the clock of the service it runs in, and the address
rules and connections webhook deliveries use (a settings change checks its URL, a test event is delivered now)."""

from __future__ import annotations

from dataclasses import dataclass

from inbox_actors.runtime.actor import Directory
from inbox_actors.runtime.clock import Clock
from inbox_actors.webhooks.address_guard import AddressGuard
from inbox_actors.webhooks.transport import WebhookTransport
from persistence.database import Database


@dataclass(frozen=True)
class ActionDeps:
    db: Database
    actors: Directory
    clock: Clock
    webhook_guard: AddressGuard
    webhook_transport: WebhookTransport
