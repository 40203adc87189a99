"""The service's metrics without I/O: each service keeps its own counts, labels stay bounded, the overview's totals
are the counters' own, and a send's outcome is named from the client's answer."""

from prometheus_client.parser import text_string_to_metric_families

from inbox_actors.monitoring.metrics import MAX_ERROR_CODES, OTHER, BoundedLabel, ServiceMetrics
from inbox_actors.platform.client import TITLE_TIMEOUT, TITLE_UNREACHABLE, UNREACHABLE_CODE, UNREACHABLE_MESSAGE
from inbox_actors.platform.link import send_outcome
from inbox_actors.platform.payloads import SendAccepted, SendRefused


def samples(metrics: ServiceMetrics) -> dict[tuple[str, tuple], float]:
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(metrics.exposition().decode())
            for sample in family.samples}


def test_two_services_in_one_process_keep_their_own_counts():
    first, second = ServiceMetrics(), ServiceMetrics()
    first.request_answered("/api/reporting/v1/whoami", "GET", 200, 0.002)
    first.request_answered("/api/reporting/v1/whoami", "GET", 200, 0.003)
    second.request_answered("/api/reporting/v1/whoami", "GET", 429, 0.001)
    key = ("inbox_http_requests_total", (("method", "GET"), ("route", "/api/reporting/v1/whoami"), ("status", "200")))
    assert samples(first)[key] == 2
    assert key not in samples(second)


def test_an_unknown_method_shares_one_series():
    metrics = ServiceMetrics()
    for method in ("BREW", "WHEN", "GET"):
        metrics.request_answered("unmatched", method, 405 if method != "GET" else 404, 0.001)
    methods = {dict(labels)["method"] for (name, labels) in samples(metrics) if name == "inbox_http_requests_total"}
    assert methods == {"GET", OTHER}


def test_error_codes_beyond_the_bound_are_counted_as_other():
    label = BoundedLabel(2)
    assert [label.value(code) for code in ("131047", "132001", "131026", "131047")] == \
        ["131047", "132001", OTHER, "131047"]
    metrics = ServiceMetrics()
    for code in range(MAX_ERROR_CODES + 10):
        metrics.send_answered("refused", 100_000 + code, 0.01)
    codes = {dict(labels)["code"] for (name, labels) in samples(metrics) if name == "inbox_platform_sends_total"}
    assert len(codes) == MAX_ERROR_CODES + 1 and OTHER in codes


def test_totals_are_read_from_the_counters():
    metrics = ServiceMetrics()
    for status in (200, 200, 404, 429, 500):
        metrics.request_answered("/x", "GET", status, 0.001)
    metrics.send_answered("accepted", None, 0.01)
    metrics.send_answered("refused", 131047, 0.01)
    metrics.send_answered("refused", 131026, 0.01)
    metrics.webhook_attempted("delivered", 0.02)
    metrics.request_rate_limited("key")
    metrics.request_rate_limited("ip")
    metrics.activity_record_dropped()
    totals = metrics.totals()
    assert (totals.requests, totals.client_errors, totals.server_errors) == (5, 2, 1)
    assert totals.sends == {"accepted": 1, "refused": 2}
    assert totals.deliveries == {"delivered": 1}
    assert totals.rate_limited == 2 and totals.activity_log_dropped == 1


def test_a_send_s_outcome_tells_the_platform_s_refusal_from_no_answer():
    assert send_outcome(SendAccepted(message_id="wamid.1")) == "accepted"
    assert send_outcome(SendRefused(message="Re-engagement message", code=131047, title="x")) == "refused"
    assert send_outcome(SendRefused(message=UNREACHABLE_MESSAGE, code=UNREACHABLE_CODE, title=TITLE_TIMEOUT,
                                    http_status=0)) == "timeout"
    assert send_outcome(SendRefused(message=UNREACHABLE_MESSAGE, code=UNREACHABLE_CODE, title=TITLE_UNREACHABLE,
                                    http_status=0)) == "unreachable"
    # Meta's own "Something went wrong" is the platform's refusal.
    assert send_outcome(SendRefused(message=UNREACHABLE_MESSAGE, code=UNREACHABLE_CODE, title="Something went wrong",
                                    http_status=500)) == "refused"
