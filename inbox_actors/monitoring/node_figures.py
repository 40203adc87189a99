"""A node's own figures, as the operator page shows them for every node of a cluster (GET /ops/cluster): its live
actors per kind, the requests it relayed and was relayed, the workspaces it counts on, its clock's skew from
PostgreSQL, whether it is draining. Only the node's memory holds them: a node of a cluster publishes them every
second (cluster/node_summary.py), and the node answering the page reads its own from here.

Reading them visits no actor and makes no statement (the counters are kept as actors live), so a round costs a few
microseconds per kind.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import msgspec

from inbox_actors.monitoring.metrics import ServiceMetrics
from inbox_actors.runtime import ActorSystem


class KindActors(msgspec.Struct, frozen=True):
    live: int
    """Actors of the kind in memory that have not failed."""
    failed: int
    """Actors of the kind that escalated and refuse work until their cooldown ends."""


class NodeRequests(msgspec.Struct, frozen=True):
    """Requests of a workspace another node holds, since the node started (`inbox_node_requests_total`)."""

    relayed: int
    """Sent on by this node to the node holding the workspace."""
    taken: int
    """Relayed here by another node."""
    unreachable: int
    """Relays whose node did not answer."""


class NodeFigures(msgspec.Struct, frozen=True):
    """What a node tells of itself."""

    pid: int
    uptime_seconds: float
    draining: bool
    """SIGTERM was received: it finishes what is under way and hands its workspaces over."""
    workspaces_held: int
    """The leases the node counts on now, by its own deadlines."""
    requests: NodeRequests
    actors: dict[str, KindActors]
    """The kinds with an actor live or failed."""
    clock_skew_seconds: float | None
    """How far its clock runs ahead of PostgreSQL's (negative: behind); null until first measured."""
    clock_skew_age_seconds: float | None
    """How long before these figures it was measured (every minute)."""


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(NodeFigures)


def encode(figures: NodeFigures) -> bytes:
    return _encoder.encode(figures)


def decode(text: str | bytes) -> NodeFigures | None:
    """Figures another node published; None if they cannot be read (a node of another version, say)."""
    try:
        return _decoder.decode(text)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


@dataclass(frozen=True)
class FigureSource:
    """Where a node's figures are read: its actors, its metrics, its leases (`workspaces_held()`), its life
    (`draining()`), and when the process started (`started`, time.monotonic())."""

    actors: ActorSystem
    metrics: ServiceMetrics
    workspaces_held: Callable[[], int]
    draining: Callable[[], bool]
    started: float

    def figures(self) -> NodeFigures:
        kinds = {name: KindActors(counters.live, counters.failed)
                 for name, counters in self.actors.kind_counters().items() if counters.live or counters.failed}
        skew = self.metrics.clock_skew_reading()
        return NodeFigures(
            pid=os.getpid(), uptime_seconds=round(time.monotonic() - self.started, 3), draining=self.draining(),
            workspaces_held=self.workspaces_held(), requests=NodeRequests(**self.metrics.node_request_counts()),
            actors=dict(sorted(kinds.items())),
            clock_skew_seconds=None if skew is None else round(skew[0], 6),
            clock_skew_age_seconds=None if skew is None else round(skew[1], 3))
