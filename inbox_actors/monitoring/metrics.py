"""The service's Prometheus metrics (`GET /metrics`): what the code counts as it runs, kept in a registry owned by
the service instance, never prometheus_client's global one, so several services in one process (the tests) each
keep their own counts.

The code records through the methods of `ServiceMetrics` (`request_answered`, `send_answered`, ...), which name
what happened; levels that exist elsewhere (actors per kind, the database pool) are read at scrape time by the
collectors in `collectors.py`. `totals()` reads the same counters back for `GET /metrics/overview`.

Labels stay few: route templates (never a raw path), methods, statuses, outcomes, limiter and actor kinds, and
the platform's error codes (at most MAX_ERROR_CODES distinct ones, later ones counted as "other"). No phone, key,
workspace or message id is ever a label value. Which node a scrape reached is one series of its own,
`inbox_node_info{node}`, not a label on every series (docs/operating.md#metrics says why).
"""

from __future__ import annotations

import time

import msgspec
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.registry import Collector

# Seconds: from a cached answer (a millisecond) to a platform or receiver that runs out its timeout (8-10 s).
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# A statement: most take well under a millisecond.
QUERY_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0)
# Records per activity-log write (the actor takes at most 1,000 at once).
BATCH_BUCKETS = (1, 2, 5, 10, 25, 50, 100, 250, 500, 1000)
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED_ROUTE = "unmatched"
"""The route label of a request no route took (404, 405)."""
MAX_ERROR_CODES = 32
OTHER = "other"


class BoundedLabel:
    """A label whose values come from outside (the platform's error codes): the first `limit` distinct values are
    kept as they are, later newcomers are counted as "other", so a misbehaving peer cannot grow the series."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._seen: set[str] = set()

    def value(self, raw: str) -> str:
        if raw in self._seen:
            return raw
        if len(self._seen) >= self._limit:
            return OTHER
        self._seen.add(raw)
        return raw


class MetricTotals(msgspec.Struct, frozen=True):
    """Counts since the service started, read from the metrics themselves (for GET /metrics/overview)."""

    requests: int
    client_errors: int
    """Answered 4xx."""
    server_errors: int
    """Answered 5xx."""
    sends: dict[str, int]
    """Platform sends by outcome."""
    deliveries: dict[str, int]
    """Webhook delivery attempts by outcome."""
    rate_limited: int
    activity_log_dropped: int


class ServiceMetrics:
    """Every metric of one service instance, in its own registry (`registry`)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        registry = self.registry
        self.http_requests = Counter(
            "inbox_http_requests", "HTTP requests answered, by route template, method and status.",
            ("route", "method", "status"), registry=registry)
        self.http_request_seconds = Histogram(
            "inbox_http_request_duration_seconds",
            "Time from a request's arrival until its response was sent, by route template and method.",
            ("route", "method"), buckets=LATENCY_BUCKETS, registry=registry)
        self.platform_sends = Counter(
            "inbox_platform_sends", "Sends to the messaging platform, by outcome (accepted, refused, timeout, "
            "unreachable, unexpected_answer) and the platform's error code of a refusal.",
            ("outcome", "code"), registry=registry)
        self.platform_send_seconds = Histogram(
            "inbox_platform_send_duration_seconds", "Time a send took at the platform, waiting for a slot included, "
            "by outcome.", ("outcome",), buckets=LATENCY_BUCKETS, registry=registry)
        self.platform_envelopes = Counter(
            "inbox_platform_webhook_envelopes", "Webhook deliveries received from the platform, by outcome (stored, "
            "invalid_signature, invalid_envelope, not_stored).", ("outcome",), registry=registry)
        self.platform_items = Counter(
            "inbox_platform_webhook_items", "Customer messages and delivery statuses the platform's webhook "
            "deliveries carried, by type (message, status).", ("type",), registry=registry)
        self.webhook_attempts = Counter(
            "inbox_webhook_delivery_attempts", "Outbound webhook delivery attempts, by outcome (delivered, rejected: "
            "3xx/4xx, server_error: 5xx, timeout, unreachable, refused: the address rules said no).",
            ("outcome",), registry=registry)
        self.webhook_attempt_seconds = Histogram(
            "inbox_webhook_delivery_attempt_duration_seconds", "Time one webhook delivery attempt took, by outcome.",
            ("outcome",), buckets=LATENCY_BUCKETS, registry=registry)
        self.webhook_backlog = Gauge(
            "inbox_webhook_outbox_backlog", "Webhook events pending in the outbox, read from PostgreSQL at the scrape.",
            registry=registry)
        self.rate_limited = Counter(
            "inbox_rate_limited", "Requests refused with 429, by limiter (ip: the per-IP ceiling, key: the key's "
            "limit).", ("limiter",), registry=registry)
        self.activity_batch_records = Histogram(
            "inbox_activity_log_batch_records", "Call records written to the activity log per transaction.",
            buckets=BATCH_BUCKETS, registry=registry)
        self.activity_dropped = Counter(
            "inbox_activity_log_dropped", "Call records dropped because the activity log had no room in time.",
            registry=registry)
        self.node_requests = Counter(
            "inbox_node_requests", "Requests of a workspace another node holds, by way (relayed: sent on to that node; "
            "taken: relayed here by another node; unreachable: the holding node did not answer).", ("way",),
            registry=registry)
        self._node_children = {way: self.node_requests.labels(way) for way in ("relayed", "taken", "unreachable")}
        self.address_admissions = Counter(
            "inbox_address_admissions", "Requests admitted against a client address's bucket (the per-IP ceiling, "
            "sign-in attempts) in a cluster, by where they were counted (here: this node owns the address; owner: "
            "asked of the node that does; unanswered: that node did not answer, counted here).", ("way",),
            registry=registry)
        self._admission_children = {way: self.address_admissions.labels(way)
                                     for way in ("here", "owner", "unanswered")}
        self.address_admission_batch = Histogram(
            "inbox_address_admission_batch_asks", "Asks sent to an address's owner in one exchange: those that "
            "arrived while the one before was under way go together.", buckets=BATCH_BUCKETS, registry=registry)
        self.workspaces_held = Gauge(
            "inbox_node_workspaces_held", "Workspaces whose lease this node holds, read at the scrape.",
            registry=registry)
        self.clock_skew = Gauge(
            "inbox_node_clock_skew_seconds", "How far this node's clock runs ahead of PostgreSQL's (negative: behind), "
            "measured every minute with SELECT now() and half its round trip (monitoring/clock_skew.py).",
            registry=registry)
        self._clock_skew_at: float | None = None     # time.monotonic() of the last measure
        # Which node a scrape reached: Prometheus tells targets apart by `instance` (the address it scraped); the
        # node's own name, its start and its liveness lock are what differs per node beyond it (docs/operating.md).
        self.node_info = Gauge(
            "inbox_node_info", "Always 1: the node this scrape reached, by its name in the cluster (`node`: its "
            "INBOX_NODE_URL, or the address it serves on), to join onto its other series by `instance`.",
            ("node",), registry=registry)
        self._node_named: str | None = None
        self.node_start_time = Gauge(
            "inbox_node_start_time_seconds", "When this node's process started, in seconds since the Unix epoch "
            "(its own clock).", registry=registry)
        self.liveness_lock_held: Gauge | None = None   # made at the first scrape of a node of a cluster
        self.db_query_seconds = Histogram(
            "inbox_db_query_duration_seconds", "Time one SQL statement took, from the Trio side.",
            buckets=QUERY_BUCKETS, registry=registry)
        self.gc_pause_seconds = Histogram(
            "inbox_gc_pause_seconds", "Time one garbage collection stopped the process, by generation (gen0, gen1; "
            "gen2: a full collection). Recorded by a serving process (monitoring/gc_pauses.py).",
            ("generation",), buckets=LATENCY_BUCKETS, registry=registry)
        self._gc_children = tuple(self.gc_pause_seconds.labels(f"gen{generation}") for generation in range(3))
        self._http_children: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}
        self._codes = BoundedLabel(MAX_ERROR_CODES)

    def watch(self, collector: Collector) -> None:
        """Read `collector` at every scrape (levels kept elsewhere: see collectors.py)."""
        self.registry.register(collector)

    def exposition(self) -> bytes:
        """Every metric in Prometheus' text format (CONTENT_TYPE_LATEST)."""
        return generate_latest(self.registry)

    # -- recording ----------------------------------------------------------------------------------------------

    def request_answered(self, route: str, method: str, status: int, seconds: float) -> None:
        """`route`: the route's template (`/api/contacts/<phone>`) or UNMATCHED_ROUTE; `status` 0: none was sent."""
        key = (route, method if method in HTTP_METHODS else OTHER, status)
        children = self._http_children.get(key)
        if children is None:  # bounded like the series: routes x methods above x HTTP's statuses
            children = (self.http_requests.labels(key[0], key[1], str(status)),
                        self.http_request_seconds.labels(key[0], key[1]))
            self._http_children[key] = children
        children[0].inc()
        children[1].observe(seconds)

    def send_answered(self, outcome: str, code: int | None, seconds: float) -> None:
        """A send the platform answered (or did not): `code` is the platform's error code of a refusal."""
        label = "" if code is None else self._codes.value(str(code))
        self.platform_sends.labels(outcome, label).inc()
        self.platform_send_seconds.labels(outcome).observe(seconds)

    def platform_webhook_received(self, outcome: str, *, messages: int = 0, statuses: int = 0) -> None:
        self.platform_envelopes.labels(outcome).inc()
        if messages:
            self.platform_items.labels("message").inc(messages)
        if statuses:
            self.platform_items.labels("status").inc(statuses)

    def webhook_attempted(self, outcome: str, seconds: float) -> None:
        self.webhook_attempts.labels(outcome).inc()
        self.webhook_attempt_seconds.labels(outcome).observe(seconds)

    def request_rate_limited(self, limiter: str) -> None:
        """`limiter`: "ip" or "key"."""
        self.rate_limited.labels(limiter).inc()

    def node_request(self, way: str) -> None:
        """`way`: "relayed", "taken" or "unreachable" (inbox_http/cluster/routing.py)."""
        self._node_children[way].inc()

    def address_admissions_sent(self, asks: int) -> None:
        self.address_admission_batch.observe(asks)

    def address_admitted(self, way: str) -> None:
        """`way`: "here", "owner" or "unanswered" (inbox_http/cluster/address_admission.py)."""
        self._admission_children[way].inc()

    def activity_batch_written(self, records: int) -> None:
        self.activity_batch_records.observe(records)

    def activity_record_dropped(self) -> None:
        self.activity_dropped.inc()

    def gc_paused(self, generation: int, seconds: float) -> None:
        self._gc_children[generation].observe(seconds)

    def clock_skew_measured(self, seconds: float) -> None:
        self.clock_skew.set(seconds)
        self._clock_skew_at = time.monotonic()

    def node_identified(self, node: str, started_at: float, liveness_lock: bool | None) -> None:
        """What differs per node, set at each scrape: its name (once named), its start (Unix seconds), and whether
        it holds its liveness lock (None: a node alone, which holds none)."""
        if node and node != self._node_named:
            if self._node_named is not None:
                self.node_info.remove(self._node_named)
            self.node_info.labels(node).set(1)
            self._node_named = node
        self.node_start_time.set(started_at)
        if liveness_lock is None:
            return
        if self.liveness_lock_held is None:
            self.liveness_lock_held = Gauge(
                "inbox_node_liveness_lock_held", "1 while this node of a cluster holds its liveness lock (the other "
                "nodes see it alive by it), 0 while it does not (it holds no lease meanwhile). Not on a node alone.",
                registry=self.registry)
        self.liveness_lock_held.set(1 if liveness_lock else 0)

    def query_finished(self, seconds: float) -> None:
        """The database's observer (persistence.database.Database.observe_queries)."""
        self.db_query_seconds.observe(seconds)

    # -- reading ------------------------------------------------------------------------------------------------

    def activity_records_dropped(self) -> int:
        return int(_total(self.activity_dropped))

    def node_request_counts(self) -> dict[str, int]:
        """`inbox_node_requests_total` by way (relayed, taken, unreachable), every way included."""
        return {**dict.fromkeys(self._node_children, 0), **_by(self.node_requests, "way")}

    def clock_skew_reading(self) -> tuple[float, float] | None:
        """The last skew measured and how many seconds ago; None before the first measure."""
        if self._clock_skew_at is None:
            return None
        (sample,) = next(iter(self.clock_skew.collect())).samples
        return sample.value, time.monotonic() - self._clock_skew_at

    def totals(self) -> MetricTotals:
        requests = client_errors = server_errors = 0
        for labels, value in _counts(self.http_requests):
            requests += int(value)
            if labels["status"].startswith("4"):
                client_errors += int(value)
            elif labels["status"].startswith("5"):
                server_errors += int(value)
        return MetricTotals(
            requests=requests, client_errors=client_errors, server_errors=server_errors,
            sends=_by(self.platform_sends, "outcome"), deliveries=_by(self.webhook_attempts, "outcome"),
            rate_limited=int(_total(self.rate_limited)), activity_log_dropped=self.activity_records_dropped())


def _counts(counter: Counter) -> list[tuple[dict[str, str], float]]:
    return [(sample.labels, sample.value) for family in counter.collect() for sample in family.samples
            if sample.name.endswith("_total")]


def _total(counter: Counter) -> float:
    return sum(value for _, value in _counts(counter))


def _by(counter: Counter, label: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for labels, value in _counts(counter):
        counts[labels[label]] = counts.get(labels[label], 0) + int(value)
    return dict(sorted(counts.items()))
