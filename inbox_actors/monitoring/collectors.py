"""Metrics read at scrape time from what already keeps them: the actor system's counts per kind, the database
pool. Registered with `ServiceMetrics.watch`; prometheus_client calls `collect()` on each scrape."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from inbox_actors.runtime import ActorSystem
from persistence.database import Database

# (metric, type, help, the KindCounters field it reads)
_KIND_FIGURES = (
    ("inbox_actors_live", "gauge", "Actors in memory that have not failed, by kind.", "live"),
    ("inbox_actors_failed", "gauge", "Actors that escalated and refuse work until their cooldown ends, by kind.",
     "failed"),
    ("inbox_actors_activated", "counter", "Activations since the service started, by kind.", "activated_total"),
    ("inbox_actors_passivated", "counter", "Actors that left memory after their idle timeout, by kind.",
     "passivated_total"),
    ("inbox_actors_restarted", "counter", "Restarts after a crash, by kind.", "restarted_total"),
    ("inbox_actors_escalated", "counter", "Escalations (restart intensity exceeded: the actor failed), by kind.",
     "failed_total"),
    ("inbox_actors_messages_handled", "counter", "Messages handled, by kind.", "messages_handled_total"),
    ("inbox_actors_mailbox_depth", "gauge", "Messages waiting in the kind's mailboxes, summed.", "mailbox_used"),
    ("inbox_actors_mailbox_depth_max", "gauge", "Messages waiting in the kind's deepest mailbox.", "mailbox_max"),
)


class ActorKindCollector:
    """Actors per kind, from the counters the actor system keeps as actors live (a scrape visits no actor)."""

    def __init__(self, actors: ActorSystem) -> None:
        self._actors = actors

    def collect(self) -> Iterator[Metric]:
        kinds = self._actors.kind_counters()
        for name, kind, help_text, field in _KIND_FIGURES:
            family = (GaugeMetricFamily if kind == "gauge" else CounterMetricFamily)(name, help_text, labels=("kind",))
            for kind_name, counters in kinds.items():
                family.add_metric((kind_name,), getattr(counters, field))
            yield family


class DatabasePoolCollector:
    """The PostgreSQL pool's connections: in use, idle, and the most it opens."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def collect(self) -> Iterator[Metric]:
        pool = self._db.pool_statistics()
        connections = GaugeMetricFamily("inbox_db_pool_connections", "Connections of the PostgreSQL pool, by state "
                                        "(in_use: lent to a statement or a transaction; idle).", labels=("state",))
        connections.add_metric(("in_use",), pool.in_use)
        connections.add_metric(("idle",), pool.idle)
        yield connections
        yield GaugeMetricFamily("inbox_db_pool_max_connections", "The most connections the pool opens.",
                                value=pool.max_size)
