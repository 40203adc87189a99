"""The webhook settings' use cases at their own level: the runner's permission and argument checks, then saving
(the secret shown once, the endpoint actor woken after a stored change and never after a refusal), rotating the
secret, a test event through a transport of the test's own, and the delivery log, on a real PostgreSQL with no
HTTP. The routes' and page's tests (e2e) check how they answer."""

from __future__ import annotations

import dataclasses

import pytest

from inbox_actors.domain import events
from inbox_actors.use_cases import webhook_settings
from inbox_actors.use_cases.outcomes import Done, Reason, Refused
from inbox_actors.use_cases.use_case import run
from inbox_actors.webhooks import endpoint, settings
from inbox_actors.webhooks.address_guard import AddressGuard, parse_networks
from inbox_actors.webhooks.transport import AttemptResult
from tests import builders

RECEIVER = "http://127.0.0.1:9/hook"


class WakeRecorder:
    """The actors as these use cases reach them: only the workspace's webhook endpoint, told to wake."""

    def __init__(self) -> None:
        self.woken: list[str] = []

    def ref(self, kind: str, key: str):
        assert kind == endpoint.KIND
        woken = self.woken

        class Handle:
            def tell_nowait(self, message: object) -> None:
                woken.append(key)

        return Handle()


class AcceptingTransport:
    """A receiver that answers 200 to every POST at once, keeping what it was sent."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, bytes]] = []

    async def post(self, destination, headers, body, *, timeout: float, before_write=None) -> AttemptResult:
        self.posts.append((destination.host, body))
        return AttemptResult(status_code=200, error=None, duration_ms=1)


@pytest.fixture
def webhook_deps(use_cases):
    """The harness's deps with loopback endpoints allowed, a transport of the test's own and wake-ups recorded."""
    return dataclasses.replace(use_cases.deps, actors=WakeRecorder(), webhook_transport=AcceptingTransport(),
                               webhook_guard=AddressGuard(parse_networks("127.0.0.0/8")))


def refused(outcome, status: int, code: str) -> Refused:
    assert isinstance(outcome, Refused) and (outcome.status, outcome.code) == (status, code), outcome
    return outcome


async def test_a_caller_without_settings_is_refused_before_anything_happens(use_cases, webhook_deps):
    agent = await use_cases.member(permissions=["inbox", "contacts"])
    for use_case, arguments in ((webhook_settings.READ, {}), (webhook_settings.DELIVERIES, {}),
                                (webhook_settings.SAVE, {"endpoint_url": RECEIVER, "events": []}),
                                (webhook_settings.ROTATE_SECRET, {}), (webhook_settings.SEND_TEST, {})):
        outcome = refused(await run(webhook_deps, agent, use_case, arguments), 403, "permission_denied")
        assert outcome.reason is Reason.PERMISSION and f"{use_case.name} needs the settings" in outcome.message
        assert not use_case.allows(agent)
    assert webhook_deps.actors.woken == [] and webhook_deps.webhook_transport.posts == []
    assert await use_cases.db.fetchval("SELECT count(*) FROM webhook_configs WHERE workspace_id = $1",
                                       use_cases.workspace_id) == 0


async def test_arguments_are_checked_by_the_declared_structs_and_the_settings_rules(use_cases, webhook_deps):
    admin = await use_cases.member(role="admin")
    for arguments, code in (({"endpoint_url": RECEIVER, "events": "handoff"}, "invalid_arguments"),
                            ({"events": []}, "invalid_arguments"),
                            ({"endpoint_url": RECEIVER, "events": [], "secret": "mine"}, "invalid_arguments"),
                            ({"endpoint_url": RECEIVER, "events": ["message_recieved"]}, "invalid_event"),
                            ({"endpoint_url": "ftp://example.com/hook", "events": []}, "invalid_endpoint_url"),
                            ({"endpoint_url": RECEIVER, "events": [], "credit_alert_levels": [0]},
                             "invalid_credit_alert_levels")):
        refused(await run(webhook_deps, admin, webhook_settings.SAVE, arguments), 400, code)
    for arguments, code in (({"event": "lunch"}, "invalid_event"), ({"outcome": "lost"}, "invalid_outcome"),
                            ({"limit": 0}, "invalid_limit"), ({"limit": "many"}, "invalid_limit"),
                            ({"cursor": "not-a-cursor"}, "invalid_cursor")):
        refused(await run(webhook_deps, admin, webhook_settings.DELIVERIES, arguments, strict=False), 400, code)
    assert webhook_deps.actors.woken == []


async def test_the_plan_decides_what_a_workspace_may_subscribe_to(use_cases, webhook_deps):
    starter = await use_cases.member(role="admin", workspace_id=await builders.workspace(use_cases.db, "starter"))
    growth = await use_cases.member(role="admin", workspace_id=await builders.workspace(use_cases.db, "growth"))
    for use_case, arguments in ((webhook_settings.SAVE, {"endpoint_url": RECEIVER, "events": []}),
                                (webhook_settings.ROTATE_SECRET, {}), (webhook_settings.SEND_TEST, {})):
        refused(await run(webhook_deps, starter, use_case, arguments), 403, "webhooks_not_in_plan")
    refused(await run(webhook_deps, growth, webhook_settings.SAVE,
                      {"endpoint_url": RECEIVER, "events": ["message_status"]}), 403, "event_requires_scale")
    read = await run(webhook_deps, starter, webhook_settings.READ, {})
    assert isinstance(read, Done) and not read.data.webhooks_available
    assert webhook_deps.actors.woken == []


async def test_saving_rotating_and_a_test_event_wake_the_endpoint_and_land_in_the_log(use_cases, webhook_deps):
    admin = await use_cases.member(role="admin")
    workspace = str(use_cases.workspace_id)
    refused(await run(webhook_deps, admin, webhook_settings.ROTATE_SECRET, {}), 404, "not_found")
    refused(await run(webhook_deps, admin, webhook_settings.SEND_TEST, {}), 404, "not_found")

    first = await run(webhook_deps, admin, webhook_settings.SAVE,
                      {"endpoint_url": RECEIVER, "events": ["handoff", "message_received"]})
    assert isinstance(first, Done) and isinstance(first.data, settings.WebhookConfigWithSecret)
    assert first.data.events == [name for name in events.ALL_EVENTS if name in {"handoff", "message_received"}]
    again = await run(webhook_deps, admin, webhook_settings.SAVE, {"endpoint_url": RECEIVER, "events": []})
    assert isinstance(again, Done) and not isinstance(again.data, settings.WebhookConfigWithSecret)
    rotated = await run(webhook_deps, admin, webhook_settings.ROTATE_SECRET, {})
    assert isinstance(rotated, Done) and rotated.data.secret != first.data.secret
    assert webhook_deps.actors.woken == [workspace] * 3

    sent = await run(webhook_deps, admin, webhook_settings.SEND_TEST, {})
    assert isinstance(sent, Done) and sent.data.outcome == "delivered" and len(sent.data.attempts) == 1
    assert [host for host, _ in webhook_deps.webhook_transport.posts] == ["127.0.0.1"]
    log = await run(webhook_deps, admin, webhook_settings.DELIVERIES, {"event": "webhook_test", "limit": 10})
    assert isinstance(log, Done) and [(entry.event, entry.outcome) for entry in log.data.data] == [
        ("webhook_test", "delivered")]
    read = await run(webhook_deps, admin, webhook_settings.READ, {})
    assert isinstance(read, Done) and read.data.configured and read.data.endpoint_url == RECEIVER
