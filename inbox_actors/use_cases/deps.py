"""What every action runs with: the database, the actors and the clock of the service it runs in, and the address
rules and connections webhook deliveries use (a settings change checks its URL, a test event is delivered now), and
the platform's media, which a chat's customer files are read from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from inbox_actors.ai_agent.agent import AiAgent
from inbox_actors.platform.media import MediaFetcher
from inbox_actors.runtime.actor import Directory
from inbox_actors.runtime.clock import Clock
from inbox_actors.webhooks.address_guard import AddressGuard
from inbox_actors.webhooks.transport import WebhookTransport
from persistence.database import Database


@dataclass(frozen=True)
class UseCaseDeps:
    db: Database
    actors: Directory
    clock: Clock
    webhook_guard: AddressGuard
    webhook_transport: WebhookTransport
    forget_bot: Callable[[int], None] = lambda workspace_id: None
    """Drop this process's cached copy of a workspace's bot (its answers and settings changed)."""
    agent: AiAgent | None = None
    """The AI agent, when the service has a model: the "try it" use case runs a turn with it."""
    media: Callable[[], MediaFetcher | None] = lambda: None
    """Where customers' media is fetched from the platform (None until the platform is connected)."""
