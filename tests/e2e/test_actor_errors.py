"""A request whose actor does not answer ends at the ask's deadline with a clear, retryable error in the route's
convention (never a hang, never a traceback's 500); one whose actor crashed of the database's outage is answered
503 with Retry-After."""

from __future__ import annotations

import pytest
import trio
from quart import Blueprint

from inbox_actors.domain.auth_ladder import ErrorStyle
from inbox_actors.domain.plans import ApiTier
from inbox_actors.runtime import Actor, ActorKind
from inbox_http.dependencies import dependencies
from inbox_http.guard import guarded
from persistence.database import DatabaseUnavailable
from tests import builders
from tests.e2e.conftest import bearer


class Stuck(Actor):
    """Answers nothing until the test lets it go (so the service's shutdown is not held up after)."""

    def __init__(self, key: str, release: trio.Event) -> None:
        super().__init__(key)
        self.release = release

    async def receive(self, message: object) -> object:
        await self.release.wait()
        return "late"


class OutOfDatabase(Actor):
    """Every message meets the database out."""

    async def receive(self, message: object) -> object:
        raise DatabaseUnavailable("ConnectionRefusedError: the database restarts")


@pytest.fixture
def release():
    return trio.Event()


@pytest.fixture
def extra_actor_kinds(release):
    return [ActorKind("stuck", lambda key: Stuck(key, release), ask_timeout=0.3),
            ActorKind("out_of_database", OutOfDatabase)]


@pytest.fixture
def extra_blueprints():
    probe = Blueprint("stuck_probe", __name__)

    @probe.get("/test/stuck")
    @guarded(tier=ApiTier.CORE)
    async def stuck():
        return {"reply": await dependencies().actors.ref("stuck", "one").ask("hello")}

    @probe.get("/test/stuck-sentence")
    @guarded(tier=ApiTier.CORE, errors=ErrorStyle.SENTENCE)
    async def stuck_sentence():
        return {"reply": await dependencies().actors.ref("stuck", "two").ask("hello")}

    @probe.get("/test/out-of-database")
    @guarded(tier=ApiTier.CORE)
    async def out_of_database():
        return {"reply": await dependencies().actors.ref("out_of_database", "one").ask("hello")}

    @probe.get("/test/out-of-database-sentence")
    @guarded(tier=ApiTier.CORE, errors=ErrorStyle.SENTENCE)
    async def out_of_database_sentence():
        return {"reply": await dependencies().actors.ref("out_of_database", "two").ask("hello")}

    return [probe]


async def test_a_stuck_actor_ends_the_request_at_the_ask_deadline_with_a_retryable_500(service, release):
    issued = await builders.plaintext_key(service.db)
    started = trio.current_time()
    response = await service.client.get("/test/stuck", headers=bearer(issued.key))
    assert trio.current_time() - started < 5
    assert response.status_code == 500 and response.headers["Retry-After"] == "1"
    body = response.json()
    assert body["error"] == "internal_error" and "read before retrying" in body["message"]
    sentence = await service.client.get("/test/stuck-sentence", headers=bearer(issued.key))
    assert sentence.status_code == 500 and sentence.json() == {"error": "An internal error occurred. Please try again."}
    release.set()


async def test_an_actor_that_crashed_of_the_database_s_outage_is_a_503_with_retry_after(service):
    issued = await builders.plaintext_key(service.db)
    stable = await service.client.get("/test/out-of-database", headers=bearer(issued.key))
    assert stable.status_code == 503 and stable.headers["Retry-After"] == "1"
    assert stable.json()["error"] == "service_unavailable" and "retry" in stable.json()["message"]
    sentence = await service.client.get("/test/out-of-database-sentence", headers=bearer(issued.key))
    assert sentence.status_code == 503 and sentence.headers["Retry-After"] == "1"
    assert sentence.json() == {"error": "The service is unavailable for a moment. Please try again."}
