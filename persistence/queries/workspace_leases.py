"""Workspace leases (migration 024): which node owns a workspace's actors, until when, and under which epoch.

Every expiry is PostgreSQL's clock (`now()`), so nodes need not agree on the time: a node measures its own hold
from before the statement that granted or renewed it (inbox_actors/cluster/leases.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

from persistence.database import Database, UnitOfWork
from persistence.session_lock import LOCK_CLASS

# The granted liveness locks (session_lock.py) in pg_locks: a lock (LOCK_CLASS, key) shows there as classid and objid,
# objsubid 2 for the two-key form.
_LIVENESS_LOCKS = f"locktype = 'advisory' AND classid = {LOCK_CLASS} AND objsubid = 2 AND granted"
# The first key of the workspaces' fence locks (migration 037: inbox_lease_fence takes it shared, a change of epoch
# exclusive); the second is the workspace's id.
FENCE_LOCK_CLASS = 461_369_855


class Owner(NamedTuple):
    node_id: str
    epoch: int


async def take(db: Database, workspace_id: int, node_id: str, ttl: timedelta, *, dead: Sequence[str] = (),
               server_started: datetime | None = None) -> int | None:
    """The workspace's lease for `node_id` for `ttl`, unless another node holds it unexpired: the new epoch (one
    more than the last owner's; 1 for a workspace never leased), or None.

    A lease `node_id` itself holds is taken again at once, under a new epoch: a node's id is the address it serves
    on, which one process at a time can listen on, so the holder is this node's earlier process (it crashed and was
    restarted) or this process after a stall, which has told its actors the old epoch is over. Its workspaces then
    wait for no expiry after a restart.

    So is one whose holder is among `dead` (nodes the caller saw die: their liveness lock, session_lock.py, held
    and then free since PostgreSQL started at `server_started`) while that lock is still free and the server the
    same, both checked in this statement: a node whose sessions ended cannot be writing or sending any more (a
    paused one keeps its sessions, and so its lock), and one that came back holds its lock again."""
    # Only a take that will happen waits for the fence (the CASE orders it): a node asking for a workspace another
    # holds must not hold that node's writes back.
    return await db.fetchval(
        "INSERT INTO workspace_leases (workspace_id, node_id, epoch, expires_at) VALUES ($1, $2, 1, now() + $3)"
        " ON CONFLICT (workspace_id) DO UPDATE SET node_id = EXCLUDED.node_id, epoch = workspace_leases.epoch + 1,"
        "  expires_at = EXCLUDED.expires_at"
        " WHERE CASE WHEN workspace_leases.expires_at <= now() OR workspace_leases.node_id = EXCLUDED.node_id"
        "  OR (workspace_leases.node_id = ANY($4::text[]) AND pg_postmaster_start_time() = $5"
        f"   AND NOT EXISTS (SELECT 1 FROM pg_locks WHERE {_LIVENESS_LOCKS}"
        "    AND objid = hashtext(workspace_leases.node_id)::oid))"
        "  THEN inbox_lease_takeover_lock(workspace_leases.workspace_id) ELSE false END"
        " RETURNING epoch",
        workspace_id, node_id, ttl, list(dead) if server_started is not None else [], server_started)


async def fence_out(db: Database, workspace_id: int) -> int:
    """End the sessions that hold a takeover of the workspace back although its lease has expired: the ones a take
    waiting for the workspace's fence lock waits for, whose transactions began before the lease ran out and which
    wait on no lock themselves. They are the old holder's fenced writes (inbox_lease_fence holds the lock shared until
    their transaction ends), left open by a node that stopped in the middle: paused, or frozen, or cut off. A session
    stopped between two protocol messages counts as active, so the server's idle-in-transaction timeout does not end
    it. Ending a session rolls its transaction back: nothing of it is written. How many were ended."""
    return await db.fetchval(
        "WITH lease AS (SELECT expires_at FROM workspace_leases WHERE workspace_id = $1 AND expires_at <= now()),"
        " waiting AS (SELECT l.pid FROM pg_locks l, lease WHERE l.locktype = 'advisory'"
        f"  AND l.classid = {FENCE_LOCK_CLASS} AND l.objid = ($1 % 2147483648)::oid AND l.objsubid = 2"
        "  AND l.mode = 'ExclusiveLock' AND NOT l.granted),"
        " blocking AS (SELECT DISTINCT unnest(pg_blocking_pids(pid)) AS pid FROM waiting)"
        " SELECT count(*) FILTER (WHERE pg_terminate_backend(a.pid))"
        " FROM blocking b JOIN pg_stat_activity a ON a.pid = b.pid, lease"
        " WHERE a.xact_start < lease.expires_at AND a.wait_event_type IS DISTINCT FROM 'Lock'",
        workspace_id)


async def renew(db: Database, node_id: str, held: dict[int, int], ttl: timedelta) -> set[int]:
    """Extend by `ttl` (from now) each lease in `held` (workspace id -> epoch) that `node_id` still holds under
    that epoch, expired or not: the workspaces renewed. One statement for all of them. An expired lease still this
    node's under its epoch was taken by nobody (every take, hand-over and takeover writes a new epoch), so nothing
    was written under another node's hold meanwhile and it may be renewed as it is."""
    if not held:
        return set()
    rows = await db.fetch(
        "UPDATE workspace_leases l SET expires_at = now() + $4"
        " FROM unnest($2::bigint[], $3::bigint[]) AS h(workspace_id, epoch)"
        " WHERE l.workspace_id = h.workspace_id AND l.epoch = h.epoch AND l.node_id = $1"
        " RETURNING l.workspace_id",
        node_id, list(held), list(held.values()), ttl)
    return {row["workspace_id"] for row in rows}


async def hand_to(db: Database, workspace_id: int, node_id: str, epoch: int, target: str, ttl: timedelta) -> bool:
    """Hand the workspace, still `node_id`'s under `epoch`, to the node `target` for `ttl`, under the next epoch:
    `target` takes it at its next need at once (a node's own lease is taken again at once), and no other node may
    before the lease expires. Whether it was still `node_id`'s to hand."""
    return await db.fetchval(
        "UPDATE workspace_leases SET node_id = $4, epoch = epoch + 1, expires_at = now() + $5"
        " WHERE workspace_id = $1 AND CASE WHEN node_id = $2 AND epoch = $3"
        "  THEN inbox_lease_takeover_lock(workspace_id) ELSE false END RETURNING true",
        workspace_id, node_id, epoch, target, ttl) is not None


async def seen(db: Database, node_id: str) -> None:
    """The node is alive (cluster_nodes, migration 025)."""
    await db.execute("INSERT INTO cluster_nodes (node_id, seen_at) VALUES ($1, now())"
                     " ON CONFLICT (node_id) DO UPDATE SET seen_at = now()", node_id)


async def leaving(db: Database, node_id: str) -> None:
    """The node is leaving: no other node counts it any more."""
    await db.execute("DELETE FROM cluster_nodes WHERE node_id = $1", node_id)


async def live_nodes(db: Database, within: timedelta) -> list[str]:
    """The nodes seen within `within`."""
    rows = await db.fetch("SELECT node_id FROM cluster_nodes WHERE seen_at > now() - $1::interval", within)
    return [row["node_id"] for row in rows]


class Liveness(NamedTuple):
    server_started: datetime            # pg_postmaster_start_time(): a restart frees every lock at once
    alive: dict[str, bool]              # each node seen lately: whether its liveness lock is held now


async def liveness(db: Database, within: timedelta) -> Liveness:
    """Each node seen within `within`, and whether its liveness lock is held: one look at pg_locks."""
    rows = await db.fetch(
        f"WITH held AS (SELECT objid FROM pg_locks WHERE {_LIVENESS_LOCKS})"
        " SELECT pg_postmaster_start_time() AS started, n.node_id,"
        "  hashtext(n.node_id)::oid IN (SELECT objid FROM held) AS alive"
        " FROM (SELECT 1) AS one LEFT JOIN cluster_nodes n ON n.seen_at > now() - $1::interval", within)
    return Liveness(rows[0]["started"], {row["node_id"]: row["alive"] for row in rows if row["node_id"] is not None})


async def held_by(db: Database, node_id: str, limit: int) -> list[int]:
    """The workspaces whose unexpired lease `node_id` holds, at most `limit`."""
    rows = await db.fetch("SELECT workspace_id FROM workspace_leases WHERE node_id = $1 AND expires_at > now()"
                          " ORDER BY workspace_id LIMIT $2", node_id, limit)
    return [row["workspace_id"] for row in rows]


async def shares(db: Database, within: timedelta) -> dict[str, int]:
    """Each node seen within `within`, with how many workspaces it holds now (zero included)."""
    rows = await db.fetch(
        "SELECT n.node_id, count(l.workspace_id) AS held FROM cluster_nodes n"
        " LEFT JOIN workspace_leases l ON l.node_id = n.node_id AND l.expires_at > now()"
        " WHERE n.seen_at > now() - $1::interval GROUP BY n.node_id", within)
    return {row["node_id"]: row["held"] for row in rows}


async def release(db: Database, node_id: str, workspace_id: int, epoch: int) -> bool:
    """End the lease now (a node handing a workspace over), so another node may take it at once; whether it was
    still this node's under `epoch`."""
    return await db.fetchval(
        "UPDATE workspace_leases SET expires_at = least(expires_at, now())"
        " WHERE workspace_id = $1 AND node_id = $2 AND epoch = $3 RETURNING true",
        workspace_id, node_id, epoch) is not None


async def owner(db: Database, workspace_id: int) -> Owner | None:
    """Who holds the workspace's lease now (None: nobody, or it expired)."""
    row = await db.fetchrow("SELECT node_id, epoch FROM workspace_leases WHERE workspace_id = $1"
                            " AND expires_at > now()", workspace_id)
    return Owner(row["node_id"], row["epoch"]) if row is not None else None


async def fence(tx: UnitOfWork, workspace_id: int, epoch: int) -> None:
    """In a transaction: raise LeaseLost (persistence.statement_fence) unless `epoch` is the workspace's unexpired
    lease, and hold the workspace's fence lock (shared) until the transaction ends, so no other node takes the
    workspace over while its writes are under way. (A workspace's actors have this done for them:
    persistence/statement_fence.py.)"""
    await tx.fetchval("SELECT inbox_lease_fence($1, $2)", workspace_id, epoch)
