"""What operators read: database readiness and each actor's health, over HTTP."""

import os
from datetime import datetime, timezone
from functools import partial

import httpx
import pytest
import trio

from inbox_actors.access.activity_log import wait_recorded
from inbox_actors.runtime import Actor, ActorCrashed, ActorFailed, ActorKind
from inbox_http.server import build_app, serve_app
from persistence.database import Database
from tests import builders
from tests.conftest import admin_execute
from tests.e2e.conftest import bearer, with_settings
from tests.waiting import eventually

# With several nodes (--nodes 2), `service.actors` of a kind of the test's own is the first node's, and /health/actors
# reports the node a request lands on.
first_nodes_actors = pytest.mark.single_node("drives the first node's actors, reads them through /health/actors")

GATE: list[trio.Event] = []
HOLDING: list[trio.Event] = []


class Counter(Actor):
    """Counts; "crash" raises (a bug in one chat's handling, say); "hold" sets HOLDING[0] and waits for GATE[0]."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.count = 0

    async def receive(self, message: object) -> object:
        if message == "crash":
            raise ValueError(f"cannot handle {self.key}")
        if message == "hold":
            HOLDING[0].set()
            await GATE[0].wait()
        self.count += 1
        return self.count


@pytest.fixture
def extra_actor_kinds():
    return [ActorKind(name="counter", factory=Counter, max_restarts=2, restart_window=60)]


async def test_health_says_the_database_answers(service):
    response = await service.client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "accepting": True, "failing_kinds": [],
                               "activity_records_dropped": 0}


@first_nodes_actors
async def test_actor_summary_and_details(service):
    for key in ("a", "b", "c"):
        await service.actors.ref("counter", key).ask("tick")
    await service.actors.ref("counter", "a").ask("tick")
    summary = (await service.client.get("/health/actors")).json()
    assert summary["accepting"] is True
    assert summary["kinds"]["counter"]["live"] == 3
    assert summary["kinds"]["counter"]["messages_handled"] == 4
    assert summary["busiest"][0]["key"] == "a"

    detail = await service.client.get("/health/actors/counter/a")
    assert detail.status_code == 200
    body = detail.json()
    assert (body["kind"], body["key"], body["status"], body["messages_handled"]) == ("counter", "a", "running", 2)
    assert body["mailbox_capacity"] == 64 and body["mailbox_used"] == 0
    missing = await service.client.get("/health/actors/counter/nobody")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"


@first_nodes_actors
async def test_a_crashing_actor_touches_nothing_else(service):
    healthy = service.actors.ref("counter", "healthy")
    assert await healthy.ask("tick") == 1
    broken = service.actors.ref("counter", "broken")
    for _ in range(3):
        with pytest.raises(ActorCrashed):
            await broken.ask("crash")
    with pytest.raises(ActorFailed):
        await broken.ask("tick")
    assert await healthy.ask("tick") == 2  # its state survived the neighbour's crash loop

    summary = (await service.client.get("/health/actors")).json()
    failing = {entry["key"]: entry for entry in summary["failing"]}
    assert failing["broken"]["status"] == "failed"
    assert failing["broken"]["last_error"] == "ValueError: cannot handle broken"
    assert summary["kinds"]["counter"]["failed"] == 1
    # The server still answers API calls.
    issued = await builders.plaintext_key(service.db)
    assert (await service.client.get("/api/reporting/v1/whoami", headers=bearer(issued.key))).status_code == 200


@pytest.mark.single_node("/health/actors reports the node it lands on; the call's actors are on the workspace's node")
async def test_request_actors_show_up_per_kind(service):
    issued = await builders.plaintext_key(service.db)
    await service.client.get("/api/reporting/v1/whoami", headers=bearer(issued.key))
    kinds = (await service.client.get("/health/actors")).json()["kinds"]
    assert kinds["ip_rate_bucket"]["live"] == 1
    assert kinds["key_rate_bucket"]["live"] == 1
    assert kinds["activity_log"]["live"] == 1


class TestHealthToken:
    @pytest.fixture
    def service_settings(self, service_settings):
        return with_settings(service_settings, health_token="operator-secret")

    async def test_actor_health_needs_the_operator_token_when_one_is_set(self, service):
        assert (await service.client.get("/health")).status_code == 200  # readiness stays open for probes
        refused = await service.client.get("/health/actors")
        assert refused.status_code == 401 and refused.json()["error"] == "invalid_token"
        assert (await service.client.get("/health/actors", headers=bearer("wrong"))).status_code == 401
        assert (await service.client.get("/health/actors", headers=bearer("operator-secret"))).status_code == 200


async def test_health_is_503_when_the_database_does_not_answer(postgres_server, service_settings, asyncio_loop):
    # The service's database is dropped under it (its connections terminated): as good as a database that went
    # away, without closing a pool the service is still using.
    name = f"inbox_test_gone_{os.getpid()}"
    await admin_execute(postgres_server, f'CREATE DATABASE "{name}" TEMPLATE "{postgres_server.template}"')
    gone = await Database.connect(postgres_server.url(name), min_size=1, max_size=1)
    try:
        app = await build_app(gone, service_settings)
        stop = trio.Event()
        async with trio.open_nursery() as nursery:
            url = await nursery.start(partial(serve_app, app, shutdown_trigger=stop.wait))
            async with httpx.AsyncClient(base_url=url) as client:
                assert (await client.get("/health")).status_code == 200
                await admin_execute(postgres_server, f'DROP DATABASE "{name}" WITH (FORCE)')
                response = await client.get("/health")
            stop.set()
    finally:
        await gone.close()
        await admin_execute(postgres_server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"


class TestBehindAProxy:
    @pytest.fixture
    def service_settings(self, service_settings):
        return with_settings(service_settings, trusted_proxy_hops=1)

    async def test_without_a_token_actor_health_is_for_this_machine_only(self, service):
        remote = {"X-Forwarded-For": "203.0.113.9"}
        refused = await service.client.get("/health/actors", headers=remote)
        assert refused.status_code == 403 and refused.json()["error"] == "operator_only"
        assert (await service.client.get("/health/actors")).status_code == 200
        assert (await service.client.get("/health", headers=remote)).status_code == 200

    async def test_the_forwarded_client_address_is_what_the_activity_log_records(self, service):
        issued = await builders.plaintext_key(service.db)
        await service.client.get("/api/reporting/v1/whoami", headers={**bearer(issued.key),
                                                                        "X-Forwarded-For": "203.0.113.9"})
        await wait_recorded(service.actors)
        assert await service.db.fetchval("SELECT ip FROM key_activity WHERE key_id = $1", issued.id) == "203.0.113.9"


async def test_the_standing_actors_timers_and_sla_clock_are_visible_to_operators(service):
    kinds = (await service.client.get("/health/actors")).json()["kinds"]
    assert kinds["timer"]["live"] == 7, (
        "activity, idempotency, delivery log and team audit retention; in-doubt sends; "
        "the node's clock skew; waking the assignment desks")
    assert kinds["sla_clock"]["live"] == 1
    timer = await service.client.get("/health/actors/timer/activity retention")
    assert timer.status_code == 200 and timer.json()["tasks_running"] == 1


class TestVitalKind:
    @pytest.fixture
    def extra_actor_kinds(self):
        return [ActorKind(name="fragile", factory=Counter, max_restarts=0, circuit_failures=2, vital=True,
                          failed_cooldown=60)]

    @pytest.mark.single_node("fails a kind on the first node; /health and /health/actors report the node they land on")
    async def test_readiness_is_false_while_a_vital_kind_is_failing_and_its_calls_fail_fast(self, service):
        for key in ("a", "b"):
            with pytest.raises(ActorCrashed):
                await service.actors.ref("fragile", key).ask("crash")
        health = await service.client.get("/health")
        assert health.status_code == 503
        assert health.json()["status"] == "degraded" and health.json()["failing_kinds"] == ["fragile"]
        kinds = (await service.client.get("/health/actors")).json()["kinds"]
        assert kinds["fragile"]["circuit_open"] is True and kinds["fragile"]["recent_failures"] == 2
        assert kinds["conversation"]["circuit_open"] is False


def parse_utc(text: str) -> datetime:
    assert text.endswith("Z"), text
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def test_ready_and_live_probes_answer_while_the_service_serves(service):
    ready = await service.client.get("/health/ready")
    assert ready.status_code == 200
    assert ready.json() == {"ready": True, "draining": False, "database": "ok", "accepting": True,
                            "failing_kinds": []}
    live = await service.client.get("/health/live")
    assert live.status_code == 200
    assert live.json()["live"] is True and live.json()["draining"] is False
    assert live.json()["uptime_seconds"] >= 0


async def test_while_draining_readiness_is_503_and_liveness_stays_200(service):
    for node in service.nodes:  # every node of the service (SIGTERM to `serve --nodes N` reaches each)
        node.app.extensions["inbox"].lifecycle.draining = True  # what SIGTERM sets first
    ready = await service.client.get("/health/ready")
    assert ready.status_code == 503
    assert ready.json()["ready"] is False and ready.json()["draining"] is True
    assert ready.json()["database"] == "ok"
    live = await service.client.get("/health/live")
    assert live.status_code == 200 and live.json()["draining"] is True
    assert (await service.client.get("/health")).status_code == 200, "/health reports database and actors only"


class TestProbesWithAToken:
    @pytest.fixture
    def service_settings(self, service_settings):
        return with_settings(service_settings, health_token="operator-secret", trusted_proxy_hops=1)

    async def test_ready_and_live_are_open_to_probes_from_anywhere(self, service):
        remote = {"X-Forwarded-For": "203.0.113.9"}
        assert (await service.client.get("/health/ready", headers=remote)).status_code == 200
        assert (await service.client.get("/health/live", headers=remote)).status_code == 200
        assert (await service.client.get("/health/actors", headers=remote)).status_code == 401


@first_nodes_actors
async def test_actor_times_are_utc_iso_and_seconds_ago_and_the_oldest_message_has_an_age(service):
    GATE[:], HOLDING[:] = [trio.Event()], [trio.Event()]
    ref = service.actors.ref("counter", "slow")
    await ref.ask("tick")
    before = datetime.now(timezone.utc)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(ref.ask, "hold")
        await HOLDING[0].wait()
        nursery.start_soon(ref.ask, "tick")
        await eventually(lambda: service.actors.statistics("counter", "slow").mailbox_used == 1)
        await trio.sleep(0.3)  # the point: the message waits, and the actor has been busy, this long at least

        detail = (await service.client.get("/health/actors/counter/slow")).json()
        assert detail["mailbox_used"] == 1
        assert 0.25 <= detail["oldest_message_seconds"] < 30
        started = parse_utc(detail["started_at"])
        assert abs((started - before).total_seconds()) < 30
        assert 0 <= detail["started_seconds_ago"] < 30
        last = parse_utc(detail["last_activity_at"])
        assert abs((last - before).total_seconds()) < 30
        assert 0.3 <= detail["last_activity_seconds_ago"] < 30
        assert detail["last_error_at"] is None and detail["last_error_seconds_ago"] is None

        summary = (await service.client.get("/health/actors")).json()
        assert abs((parse_utc(summary["as_of"]) - datetime.now(timezone.utc)).total_seconds()) < 30
        busiest = summary["busiest"][0]
        assert (busiest["key"], busiest["mailbox_used"]) == ("slow", 1)
        assert busiest["oldest_message_seconds"] >= 0.25 and "last_activity_seconds_ago" in busiest
        assert summary["kinds"]["counter"]["mailbox_max"] == 1
        GATE[0].set()
    detail = (await service.client.get("/health/actors/counter/slow")).json()
    assert detail["mailbox_used"] == 0 and detail["oldest_message_seconds"] is None
    assert detail["messages_handled"] == 3 and detail["last_activity_seconds_ago"] < 5


@first_nodes_actors
async def test_a_crash_shows_when_it_happened(service):
    with pytest.raises(ActorCrashed):
        await service.actors.ref("counter", "c").ask("crash")
    await service.actors.ref("counter", "c").ask("tick")
    failing = (await service.client.get("/health/actors")).json()["failing"]
    entry = next(item for item in failing if item["key"] == "c")
    assert abs((parse_utc(entry["last_error_at"]) - datetime.now(timezone.utc)).total_seconds()) < 30
    assert 0 <= entry["last_error_seconds_ago"] < 30 and entry["restarts"] == 1
