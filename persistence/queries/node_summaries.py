"""What each node publishes about itself for the operators (migration 033), and the one look at the whole cluster
that GET /ops/cluster makes: every node known to PostgreSQL with its last renewal, its liveness lock (pg_locks), its
leases (workspace_leases) and its published figures.

Every time here is PostgreSQL's clock (`now()`): the nodes' own clocks may disagree, which is one of the things
shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

from persistence.database import Database
from persistence.session_lock import LOCK_CLASS

# A node's liveness lock (persistence/session_lock.py) as pg_locks shows it while it is held: (LOCK_CLASS,
# hashtext(node)) as classid and objid, objsubid 2 for the two-key form; in this database (pg_locks shows the
# server's, and another database's service may name its nodes alike).
_LIVENESS_HELD = (f"SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND classid = {LOCK_CLASS}"
                  " AND objsubid = 2 AND granted"
                  " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")


async def publish(db: Database, node_id: str, incarnation: str, pid: int, uptime: float, figures: bytes) -> None:
    """The node's figures (JSON) as of now. A new incarnation (the node started again) starts the row afresh: its
    start is PostgreSQL's now less the process's `uptime` seconds."""
    await db.execute(
        "INSERT INTO node_summaries (node_id, incarnation, pid, started_at, published_at, figures)"
        " VALUES ($1, $2, $3, now() - make_interval(secs => $4), now(), $5::jsonb)"
        " ON CONFLICT (node_id) DO UPDATE SET published_at = now(), figures = EXCLUDED.figures, stopped_at = NULL,"
        "  incarnation = EXCLUDED.incarnation, pid = EXCLUDED.pid,"
        "  started_at = CASE WHEN node_summaries.incarnation = EXCLUDED.incarnation THEN node_summaries.started_at"
        "   ELSE EXCLUDED.started_at END",
        node_id, incarnation, pid, uptime, figures.decode())


async def stopped(db: Database, node_id: str, incarnation: str) -> None:
    """The node stops (it stops publishing): its row says so, unless another incarnation has taken it since."""
    await db.execute("UPDATE node_summaries SET stopped_at = now() WHERE node_id = $1 AND incarnation = $2",
                     node_id, incarnation)


async def prune(db: Database, older_than: timedelta) -> int:
    """Forget the nodes that have published nothing for `older_than`: how many."""
    return int((await db.execute("DELETE FROM node_summaries WHERE published_at < now() - $1::interval",
                                 older_than)).rsplit(" ", 1)[-1])


class NodeRow(NamedTuple):
    node_id: str
    seen_at: datetime | None            # its last lease renewal (cluster_nodes); None once it left
    lock_held: bool                     # its liveness lock, now
    held: int                           # workspaces whose unexpired lease it holds
    pid: int | None                     # from here on, its published row (None: it published none)
    started_at: datetime | None
    published_at: datetime | None
    stopped_at: datetime | None
    figures: str | None                 # JSON


class ClusterRows(NamedTuple):
    now: datetime
    nodes: list[NodeRow]


async def nodes(db: Database, within: timedelta, *, only: str | None = None) -> ClusterRows:
    """Each node heard from within `within` (a renewal, a published summary) or holding a lease, and `only`, when
    given, alone: with its liveness lock, how many workspaces it holds, and its published row. One statement."""
    rows = await db.fetch(
        f"WITH held AS ({_LIVENESS_HELD}),"
        " known AS (SELECT node_id FROM cluster_nodes WHERE seen_at > now() - $1::interval AND $2::text IS NULL"
        "  UNION SELECT node_id FROM node_summaries WHERE published_at > now() - $1::interval AND $2::text IS NULL"
        "  UNION SELECT node_id FROM workspace_leases WHERE expires_at > now() AND $2::text IS NULL"
        "  UNION SELECT $2::text WHERE $2::text IS NOT NULL),"
        " leases AS (SELECT node_id, count(*) AS held FROM workspace_leases WHERE expires_at > now()"
        "  GROUP BY node_id)"
        " SELECT now() AS now, k.node_id, c.seen_at, hashtext(k.node_id)::oid IN (SELECT objid FROM held) AS lock_held,"
        "  coalesce(l.held, 0) AS held, s.pid, s.started_at, s.published_at, s.stopped_at, s.figures::text AS figures"
        " FROM (SELECT 1) AS one LEFT JOIN known k ON true LEFT JOIN cluster_nodes c ON c.node_id = k.node_id"
        " LEFT JOIN leases l ON l.node_id = k.node_id LEFT JOIN node_summaries s ON s.node_id = k.node_id"
        " ORDER BY k.node_id",
        within, only)
    return ClusterRows(rows[0]["now"], [
        NodeRow(row["node_id"], row["seen_at"], row["lock_held"], row["held"], row["pid"], row["started_at"],
                row["published_at"], row["stopped_at"], row["figures"])
        for row in rows if row["node_id"] is not None])


class LeaseRow(NamedTuple):
    node_id: str
    workspace_id: int
    epoch: int
    expires_at: datetime


async def leases(db: Database, nodes: Sequence[str], per_node: int) -> list[LeaseRow]:
    """The unexpired leases the `nodes` hold, at most `per_node` each (the lowest workspace ids)."""
    if not nodes or per_node <= 0:
        return []
    rows = await db.fetch(
        "SELECT node_id, workspace_id, epoch, expires_at FROM ("
        " SELECT *, row_number() OVER (PARTITION BY node_id ORDER BY workspace_id) AS n FROM workspace_leases"
        "  WHERE node_id = ANY($1::text[]) AND expires_at > now()) AS each"
        " WHERE n <= $2 ORDER BY node_id, workspace_id",
        list(nodes), per_node)
    return [LeaseRow(row["node_id"], row["workspace_id"], row["epoch"], row["expires_at"]) for row in rows]
