"""The whole cluster as an operator sees it (GET /ops/cluster, the operator page's Nodes section): every node
PostgreSQL knows of, alive or not, with its state, its liveness lock, since when it runs, when it was last heard
from, the workspaces it holds with their lease epochs and deadlines, and the figures only its memory holds (requests
relayed, live actors per kind, its clock's skew), as it last published them (cluster/node_summary.py). The node
answering reads its own from memory.

A node's state, from what PostgreSQL says now (one statement; the nodes' own clocks play no part):

- `alive`: its liveness lock is held and it was heard from (a lease renewal, a summary) within SILENT_AFTER_SECONDS;
  `draining` the same, once it received SIGTERM.
- `silent`: its lock is held but it has said nothing for SILENT_AFTER_SECONDS: paused, frozen or cut off from the
  database (its leases still govern it; docs/nodes.md).
- `lost`: its lock is free and it did not say it stops: its process died, or its session was ended. PostgreSQL
  frees the lock the moment the process's sessions end, so this shows at the next look, well within 2 s.
- `stopping`, then `stopped`: it said it stops, and its lock is still held (it hands its workspaces over), then free.

A node alone (no INBOX_CLUSTER_SECRET) holds no liveness lock and publishes nothing: its view is itself.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import msgspec

from inbox_actors.monitoring.node_figures import KindActors, NodeFigures, NodeRequests, decode
from persistence.database import Database
from persistence.queries import node_summaries

SILENT_AFTER_SECONDS = 3.0
# How long a node no longer heard from is still shown: one lost, a day (its published row is pruned after a day too,
# cluster/node_summary.py); one that stopped, which said so, an hour.
KNOWN_FOR = timedelta(hours=24)
STOPPED_SHOWN_FOR = timedelta(hours=1)
LEASES_SHOWN = 100
MOST_LEASES_SHOWN = 1000
STATES = ("alive", "draining", "silent", "lost", "stopping", "stopped")


class LeaseView(msgspec.Struct, frozen=True):
    workspace_id: int
    epoch: int
    """Grows by one at each change of the workspace's node."""
    expires_at: datetime
    """PostgreSQL's time when the lease runs out unless renewed (every 1.3 s while the node lives)."""
    expires_in_seconds: float


class NodeWorkspaces(msgspec.Struct, frozen=True):
    held: int
    """Workspaces whose unexpired lease the node holds (PostgreSQL's word)."""
    leases: list[LeaseView]
    """At most `leases` of them (the query parameter), the lowest workspace ids first."""


class NodeActors(msgspec.Struct, frozen=True):
    live: int
    failed: int
    kinds: dict[str, KindActors]
    """The kinds with an actor live or failed."""


class NodeView(msgspec.Struct, frozen=True):
    node: str
    """The node's name in the cluster: the address the other nodes reach it at."""
    this_node: bool
    """The node that answered this call."""
    state: str
    """alive, draining, silent, lost, stopping or stopped."""
    liveness_lock: bool | None
    """Whether PostgreSQL shows its liveness lock held now; null on a node alone."""
    pid: int | None
    started_at: datetime | None
    """When its process started (PostgreSQL's clock less its uptime)."""
    started_seconds_ago: float | None
    last_seen_at: datetime | None
    """The last time it was heard from: a lease renewal or a published summary."""
    last_seen_seconds_ago: float | None
    stopped_at: datetime | None
    """When it said it stops; null while it runs, or if it died without a word."""
    figures_at: datetime | None
    """When the figures below were published (this node's: now)."""
    figures_seconds_ago: float | None
    workspaces: NodeWorkspaces
    requests: NodeRequests | None
    """Since its process started; null when it published none."""
    actors: NodeActors | None
    clock_skew_seconds: float | None
    """How far its clock runs ahead of PostgreSQL's (negative: behind), measured every minute."""
    clock_skew_measured_seconds_ago: float | None


class ClusterView(msgspec.Struct, frozen=True):
    """What GET /ops/cluster answers."""

    as_of: datetime
    """PostgreSQL's time of the look: every time and age here is on its clock."""
    clustered: bool
    """Whether the answering node is a node of a cluster (INBOX_CLUSTER_SECRET); a node alone shows itself."""
    this_node: str
    states: dict[str, int]
    """How many nodes are in each state (every state listed)."""
    nodes: list[NodeView]
    """By name."""


async def cluster_view(db: Database, *, this_node: str, clustered: bool, own: NodeFigures,
                       leases_shown: int = LEASES_SHOWN) -> ClusterView:
    """The cluster now, this node's figures being `own`. Two statements: the nodes, then their leases."""
    rows = await node_summaries.nodes(db, KNOWN_FOR, only=None if clustered else this_node)
    now = rows.now
    if this_node and all(row.node_id != this_node for row in rows.nodes):   # not named yet, or renewed nothing yet
        rows.nodes.append(node_summaries.NodeRow(this_node, None, False, 0, None, None, None, None, None))
    shown = max(0, min(leases_shown, MOST_LEASES_SHOWN))
    leases: dict[str, list[LeaseView]] = {}
    for lease in await node_summaries.leases(db, [row.node_id for row in rows.nodes if row.held], shown):
        leases.setdefault(lease.node_id, []).append(LeaseView(
            lease.workspace_id, lease.epoch, lease.expires_at, _seconds(lease.expires_at - now)))
    nodes = [_node(row, now, this_node=row.node_id == this_node, clustered=clustered, own=own,
                   leases=leases.get(row.node_id, [])) for row in sorted(rows.nodes, key=lambda row: row.node_id)]
    nodes = [node for node in nodes if node.state != "stopped" or node.stopped_at is None
             or now - node.stopped_at < STOPPED_SHOWN_FOR]
    states = dict.fromkeys(STATES, 0)
    for node in nodes:
        states[node.state] += 1
    return ClusterView(as_of=now, clustered=clustered, this_node=this_node, states=states, nodes=nodes)


def _node(row: node_summaries.NodeRow, now: datetime, *, this_node: bool, clustered: bool, own: NodeFigures,
          leases: list[LeaseView]) -> NodeView:
    lock = row.lock_held if clustered else None
    if this_node:
        figures: NodeFigures | None = own
        figures_at: datetime | None = now
        started_at: datetime | None = now - timedelta(seconds=own.uptime_seconds)
        last_seen: datetime | None = now
        state = "draining" if own.draining else "alive"
    else:
        figures = decode(row.figures) if row.figures is not None else None
        figures_at, started_at = row.published_at, row.started_at
        last_seen = max((at for at in (row.seen_at, row.published_at) if at is not None), default=None)
        state = _state(row, figures, last_seen, now)
    actors = None
    if figures is not None:
        actors = NodeActors(live=sum(kind.live for kind in figures.actors.values()),
                            failed=sum(kind.failed for kind in figures.actors.values()),
                            kinds=dict(sorted(figures.actors.items())))     # jsonb keeps keys in an order of its own
    skew_ago = None
    if figures is not None and figures_at is not None and figures.clock_skew_age_seconds is not None:
        skew_ago = round(_seconds(now - figures_at) + figures.clock_skew_age_seconds, 3)
    return NodeView(
        node=row.node_id, this_node=this_node, state=state, liveness_lock=lock,
        pid=figures.pid if figures is not None else row.pid,
        started_at=started_at, started_seconds_ago=_ago(started_at, now),
        last_seen_at=last_seen, last_seen_seconds_ago=_ago(last_seen, now),
        stopped_at=None if this_node else row.stopped_at,
        figures_at=figures_at if figures is not None else None,
        figures_seconds_ago=_ago(figures_at, now) if figures is not None else None,
        workspaces=NodeWorkspaces(held=row.held, leases=leases),
        requests=figures.requests if figures is not None else None, actors=actors,
        clock_skew_seconds=figures.clock_skew_seconds if figures is not None else None,
        clock_skew_measured_seconds_ago=skew_ago)


def _state(row: node_summaries.NodeRow, figures: NodeFigures | None, last_seen: datetime | None,
           now: datetime) -> str:
    said_stop = row.stopped_at is not None
    if not row.lock_held:
        return "stopped" if said_stop else "lost"
    if said_stop:
        return "stopping"
    if last_seen is None or _seconds(now - last_seen) > SILENT_AFTER_SECONDS:
        return "silent"
    return "draining" if figures is not None and figures.draining else "alive"


def _seconds(delta: timedelta) -> float:
    return round(delta.total_seconds(), 3)


def _ago(at: datetime | None, now: datetime) -> float | None:
    return None if at is None else max(0.0, _seconds(now - at))
