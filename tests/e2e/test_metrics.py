"""`GET /metrics` and `GET /metrics/overview` over real sockets: a scrape parsed with prometheus_client's own parser
counts the requests, sends, platform webhooks, webhook deliveries and refusals the test made; no label carries a
phone, key or id; operators only; the overview's shape."""

from __future__ import annotations

import re
from collections import deque
from datetime import datetime

import pytest
from prometheus_client.parser import text_string_to_metric_families

from inbox_actors.access.activity_log import wait_recorded
from inbox_actors.domain import events
from tests import builders
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer, with_settings
from tests.waiting import eventually
from tests.webhook_receiver import webhook_receiver

PHONE = "919812345679"
WHOAMI = "/api/reporting/v1/whoami"


async def scrape(service) -> dict[str, list]:
    """{sample name: [(labels, value), ...]} of one scrape."""
    response = await service.client.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=")
    samples: dict[str, list] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append((sample.labels, sample.value))
    return samples


def value(samples: dict, name: str, **labels: str) -> float:
    """The sum of `name`'s samples whose labels include `labels` (0 when there is none)."""
    return sum(v for sample_labels, v in samples.get(name, []) if labels.items() <= sample_labels.items())


@pytest.mark.single_node("a scrape counts one process's requests, sends and deliveries; each node counts its own")
async def test_a_scrape_counts_what_the_service_did(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    limited = await builders.plaintext_key(service.db, rate_limit_per_minute=10)
    async with webhook_receiver() as receiver:
        receiver.answers = deque([404])  # the first delivery is refused by the receiver, the rest delivered
        configured = await service.client.put("/api/webhook/outbound/config", headers=bearer(key),
                                              json={"endpoint_url": receiver.url, "events": [events.MESSAGE_SENT]})
        assert configured.status_code == 200, configured.text
        await customer_writes(service, number, PHONE, "hello")  # an inbound webhook from the simulator
        sent = await service.client.post("/api/send-message", headers=bearer(key),
                                         json={"to": PHONE, "message": "Your order shipped."})
        assert sent.status_code == 200, sent.text
        await receiver.wait_for(1)
    answers = [(await service.client.get(WHOAMI, headers=bearer(limited.key))).status_code for _ in range(11)]
    assert answers == [200] * 10 + [429]
    assert (await service.client.get(f"/api/reporting/v1/conversations/{PHONE}", headers=bearer(key))).status_code \
        == 200
    assert (await service.client.get("/no/such/route")).status_code == 404
    await wait_recorded(service.actors)

    samples = await eventually(lambda: _scraped_with_attempt(service))
    http = "inbox_http_requests_total"
    assert value(samples, http, route=WHOAMI, method="GET", status="200") == 10
    assert value(samples, http, route=WHOAMI, method="GET", status="429") == 1
    assert value(samples, http, route="/api/send-message", method="POST", status="200") == 1
    assert value(samples, http, route="/api/reporting/v1/conversations/<phone>", method="GET", status="200") == 1
    assert value(samples, http, route="unmatched", method="GET", status="404") == 1
    assert value(samples, "inbox_http_request_duration_seconds_count", route=WHOAMI, method="GET") == 11
    assert value(samples, "inbox_http_request_duration_seconds_bucket", route=WHOAMI, method="GET", le="+Inf") == 11
    assert value(samples, "inbox_rate_limited_total", limiter="key") == 1
    assert value(samples, "inbox_rate_limited_total", limiter="ip") == 0

    accepted = await service.db.fetchval(
        "SELECT count(*) FROM messages WHERE platform_message_id IS NOT NULL AND direction = 'outbound'")
    assert accepted >= 1
    assert value(samples, "inbox_platform_sends_total", outcome="accepted") == accepted
    assert value(samples, "inbox_platform_send_duration_seconds_count", outcome="accepted") == accepted
    assert value(samples, "inbox_platform_webhook_envelopes_total", outcome="stored") >= 1
    assert value(samples, "inbox_platform_webhook_items_total", type="message") == 1
    assert value(samples, "inbox_webhook_delivery_attempts_total", outcome="rejected") == 1
    assert value(samples, "inbox_webhook_delivery_attempt_duration_seconds_count", outcome="rejected") == 1
    assert "inbox_webhook_outbox_backlog" in samples

    assert value(samples, "inbox_actors_live", kind="conversation") >= 1
    assert value(samples, "inbox_actors_activated_total", kind="activity_log") == 1
    assert value(samples, "inbox_actors_messages_handled_total", kind="conversation") >= 2
    assert "inbox_actors_mailbox_depth_max" in samples and "inbox_actors_escalated_total" in samples
    assert value(samples, "inbox_activity_log_batch_records_count") >= 1
    assert value(samples, "inbox_activity_log_batch_records_sum") >= 11
    assert value(samples, "inbox_activity_log_dropped_total") == 0
    assert value(samples, "inbox_db_query_duration_seconds_count") > 10
    assert value(samples, "inbox_db_pool_max_connections") >= 1
    assert {labels["state"] for labels, _ in samples["inbox_db_pool_connections"]} == {"in_use", "idle"}

    # Bounded labels: templates, never a phone, a key, a workspace or message id.
    routes = {labels["route"] for labels, _ in samples[http]}
    assert all(route == "unmatched" or route.startswith("/") for route in routes)
    assert all("<" in route for route in routes if "conversations/" in route)
    every_label_value = {v for series in samples.values() for labels, _ in series for v in labels.values()}
    for forbidden in (PHONE, key, limited.key, str(workspace_id)):
        assert forbidden not in every_label_value
    assert not [v for v in every_label_value if re.search(r"\d{6,}", v)]


async def _scraped_with_attempt(service):
    """A scrape once the receiver's refusal has been counted (the attempt is counted as its answer arrives)."""
    samples = await scrape(service)
    return samples if value(samples, "inbox_webhook_delivery_attempts_total", outcome="rejected") else None


@pytest.mark.single_node("the overview reads one process's counters; each node counts its own")
async def test_the_overview_reads_the_same_counters_and_names_the_failing_endpoint(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    async with webhook_receiver() as receiver:
        receiver.answers = deque([503, 503, 503])  # the event fails after its three attempts
        configured = await service.client.put("/api/webhook/outbound/config", headers=bearer(key),
                                              json={"endpoint_url": receiver.url, "events": [events.MESSAGE_RECEIVED]})
        assert configured.status_code == 200, configured.text
        await customer_writes(service, number, PHONE, "hello")
        await receiver.wait_for(3, timeout=20)
        await eventually(lambda: service.db.fetchval(
            "SELECT count(*) FROM webhook_outbox WHERE workspace_id = $1 AND outcome = 'failed'", workspace_id))

    response = await service.client.get("/metrics/overview")
    assert response.status_code == 200, response.text
    overview = response.json()
    assert set(overview) == {"generated_at", "requests", "sends", "webhooks", "rate_limited", "activity_log"}
    assert datetime.fromisoformat(overview["generated_at"].replace("Z", "+00:00")).utcoffset().total_seconds() == 0
    assert set(overview["requests"]) == {"total", "client_errors", "server_errors"}
    assert overview["requests"]["total"] >= 2 and overview["requests"]["server_errors"] == 0
    assert overview["sends"] == {} or set(overview["sends"]) <= {"accepted", "refused", "timeout", "unreachable",
                                                                 "unexpected_answer"}
    assert overview["rate_limited"] == 0 and overview["activity_log"] == {"dropped": 0}
    webhooks = overview["webhooks"]
    assert webhooks["backlog"] == 0
    assert webhooks["deliveries"] == {"server_error": 3}
    [failing] = webhooks["failing_endpoints"]
    assert failing["workspace_id"] == workspace_id and failing["url"] == receiver.url
    assert failing["consecutive_failures"] == 1
    assert failing["last_error"] == "HTTP 503" and failing["last_status_code"] == 503
    assert datetime.fromisoformat(failing["last_attempt_at"].replace("Z", "+00:00")).tzinfo is not None

    # The same counters as the scrape: the overview's request total is the sum of the series before it.
    samples = await scrape(service)
    assert value(samples, "inbox_http_requests_total") == overview["requests"]["total"] + 1  # + that overview call
    assert value(samples, "inbox_webhook_delivery_attempts_total", outcome="server_error") == 3


class TestBehindAProxy:
    @pytest.fixture
    def service_settings(self, service_settings):
        return with_settings(service_settings, trusted_proxy_hops=1)

    async def test_without_a_token_metrics_are_for_this_machine_only(self, service):
        remote = {"X-Forwarded-For": "203.0.113.9"}
        for path in ("/metrics", "/metrics/overview"):
            refused = await service.client.get(path, headers=remote)
            assert refused.status_code == 403 and refused.json()["error"] == "operator_only"
            assert (await service.client.get(path)).status_code == 200


class TestOperatorToken:
    @pytest.fixture
    def service_settings(self, service_settings):
        return with_settings(service_settings, health_token="operator-secret")

    async def test_metrics_need_the_operator_token_when_one_is_set(self, service):
        for path in ("/metrics", "/metrics/overview"):
            assert (await service.client.get(path)).json()["error"] == "invalid_token"
            assert (await service.client.get(path, headers=bearer("wrong"))).status_code == 401
            assert (await service.client.get(path, headers=bearer("operator-secret"))).status_code == 200
