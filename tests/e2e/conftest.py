"""The real service on a real socket (Hypercorn on 127.0.0.1, an ephemeral port), driven over HTTP."""

from __future__ import annotations

import fcntl
import hashlib
import ipaddress
import tempfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import httpx
import msgspec
import pytest
import trio
from quart_trio import QuartTrio

from inbox_actors.runtime import ActorSystem
from inbox_http.server import build_app, serve_app
from inbox_http.settings import Settings
from persistence.database import Database
from tests.browser import artifacts, chromium  # noqa: F401 (fixtures of the web pages' tests)


@dataclass
class RunningService:
    url: str
    app: QuartTrio
    actors: ActorSystem
    db: Database
    client: httpx.AsyncClient
    # The built-in WhatsApp simulator the service sends through (None with WHATSAPP_API_URL set).
    simulator_url: str | None = None


@pytest.fixture
def service_settings(database_url: str) -> Settings:
    # Webhook receivers in tests listen on this machine, which only an allowed network may be.
    return Settings(database_url=database_url, port=0, shutdown_grace_seconds=2.0,
                    simulator_status_delays=(0.01, 0.02, 0.03),
                    webhook_allowed_networks=(ipaddress.ip_network("127.0.0.0/8"),))


@pytest.fixture
def extra_actor_kinds() -> list:
    """Overridden by tests that need actor kinds of their own on the running server."""
    return []


@pytest.fixture
def extra_blueprints() -> list:
    """Overridden by tests that mount routes of their own next to the real ones."""
    return []


@pytest.fixture
async def service(db: Database, service_settings: Settings, extra_actor_kinds, extra_blueprints):
    app = await build_app(db, service_settings, extra_kinds=extra_actor_kinds)
    for blueprint in extra_blueprints:
        app.register_blueprint(blueprint)
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve_app, app, shutdown_trigger=stop.wait))
        async with httpx.AsyncClient(base_url=url, timeout=10) as client:
            state = app.extensions["inbox"]
            yield RunningService(url=url, app=app, actors=state.actors, db=db, client=client,
                                 simulator_url=state.platform.simulator_url)
        stop.set()


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


def with_settings(settings: Settings, **changes) -> Settings:
    return msgspec.structs.replace(settings, **changes)
