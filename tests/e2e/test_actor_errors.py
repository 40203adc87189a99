"""A request whose actor does not answer ends at the ask's deadline with a clear, retryable error in the route's
convention (never a hang, never a traceback's 500)."""

from __future__ import annotations

import pytest
import trio
from quart import Blueprint

from inbox_actors.domain.auth_ladder import ErrorStyle
from inbox_actors.domain.plans import ApiTier
from inbox_actors.runtime import Actor, ActorKind
from inbox_http.dependencies import dependencies
from inbox_http.guard import guarded
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


@pytest.fixture
def release():
    return trio.Event()


@pytest.fixture
def extra_actor_kinds(release):
    return [ActorKind("stuck", lambda key: Stuck(key, release), ask_timeout=0.3)]


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
