"""The node's clock against PostgreSQL's, the one every time rule spanning requests reads (docs/nodes.md#clocks):
measured every SKEW_EVERY seconds with `SELECT now()`, taking the node's reading as of the middle of the round trip,
kept as the gauge `inbox_node_clock_skew_seconds` (positive: the node runs ahead) and warned of past WARN_PAST.

No rule depends on it any more; what a skewed clock still touches is what a node merely records with its own time (a
message's sent_at, an audit entry's time), so a skew worth a warning is one an operator fixes (NTP) before those
records drift from the others'.
"""

from __future__ import annotations

import logging
from datetime import timedelta

import trio

from inbox_actors.monitoring.metrics import ServiceMetrics
from inbox_actors.runtime.clock import Clock
from inbox_actors.runtime.timer import Job
from persistence.database import Database, DatabaseUnavailable
from persistence.queries import database_clock

log = logging.getLogger("inbox_actors.monitoring.clock_skew")

SKEW_EVERY = 60.0
WARN_PAST = 1.0     # seconds, either way


async def measure_skew(db: Database, clock: Clock) -> float:
    """Seconds this node's clock (`clock`, the service's) runs ahead of PostgreSQL's (negative: behind), give or take
    half the round trip of the `SELECT now()` that read it."""
    sent = trio.current_time()
    node_at_send = clock.now()
    database_now = await database_clock.now(db)
    half_trip = (trio.current_time() - sent) / 2
    return (node_at_send + timedelta(seconds=half_trip) - database_now).total_seconds()


def clock_skew_job(db: Database, clock: Clock, metrics: ServiceMetrics | None, *, every: float = SKEW_EVERY) -> Job:
    """A timer's job: measure the skew, set the gauge, warn past WARN_PAST. A database that does not answer leaves
    the last measure standing (the next round measures again); it is not this job's failure."""

    async def measure(_actors: object) -> float | None:
        try:
            skew = await measure_skew(db, clock)
        except DatabaseUnavailable as err:
            log.info("the node's clock skew was not measured: %s", err)
            return None
        if metrics is not None:
            metrics.clock_skew_measured(skew)
        if abs(skew) > WARN_PAST:
            log.warning("this node's clock runs %.3f s %s of PostgreSQL's (bound %g s): set it right (NTP); the "
                        "times it records (messages' sent_at, audit entries) drift from other nodes'", abs(skew),
                        "ahead" if skew > 0 else "behind", WARN_PAST)
        return skew

    return Job(every, measure)
