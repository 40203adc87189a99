"""Workspace leases (migration 024): which node owns a workspace's actors, until when, and under which epoch.

Every expiry is PostgreSQL's clock (`now()`), so nodes need not agree on the time: a node measures its own hold
from before the statement that granted or renewed it (inbox_actors/cluster/leases.py).
"""

from __future__ import annotations

from datetime import timedelta
from typing import NamedTuple

import asyncpg

from persistence.database import Database, UnitOfWork

# The SQLSTATE of inbox_lease_fence() (migration 024).
_LEASE_LOST = "IA410"


class LeaseLost(RuntimeError):
    """A write fenced by a lease found the workspace under another epoch, or the lease expired: nothing of the
    statement was written."""


class Owner(NamedTuple):
    node_id: str
    epoch: int


async def take(db: Database, workspace_id: int, node_id: str, ttl: timedelta) -> int | None:
    """The workspace's lease for `node_id` for `ttl`, unless another node holds it unexpired: the new epoch (one
    more than the last owner's; 1 for a workspace never leased), or None.

    A lease `node_id` itself holds is taken again at once, under a new epoch: a node's id is the address it serves
    on, which one process at a time can listen on, so the holder is this node's earlier process (it crashed and was
    restarted) or this process after a stall, which has told its actors the old epoch is over. Its workspaces then
    wait for no expiry after a restart."""
    return await db.fetchval(
        "INSERT INTO workspace_leases (workspace_id, node_id, epoch, expires_at) VALUES ($1, $2, 1, now() + $3)"
        " ON CONFLICT (workspace_id) DO UPDATE SET node_id = EXCLUDED.node_id, epoch = workspace_leases.epoch + 1,"
        "  expires_at = EXCLUDED.expires_at"
        " WHERE workspace_leases.expires_at <= now() OR workspace_leases.node_id = EXCLUDED.node_id"
        " RETURNING epoch",
        workspace_id, node_id, ttl)


async def renew(db: Database, node_id: str, held: dict[int, int], ttl: timedelta) -> set[int]:
    """Extend by `ttl` (from now) each lease in `held` (workspace id -> epoch) that `node_id` still holds under
    that epoch, unexpired: the workspaces renewed. One statement for all of them."""
    if not held:
        return set()
    rows = await db.fetch(
        "UPDATE workspace_leases l SET expires_at = now() + $4"
        " FROM unnest($2::bigint[], $3::bigint[]) AS h(workspace_id, epoch)"
        " WHERE l.workspace_id = h.workspace_id AND l.epoch = h.epoch AND l.node_id = $1 AND l.expires_at > now()"
        " RETURNING l.workspace_id",
        node_id, list(held), list(held.values()), ttl)
    return {row["workspace_id"] for row in rows}


async def release(db: Database, node_id: str, workspace_id: int, epoch: int) -> bool:
    """End the lease now (a node handing a workspace over), so another node may take it at once; whether it was
    still this node's under `epoch`."""
    return await db.fetchval(
        "UPDATE workspace_leases SET expires_at = now() WHERE workspace_id = $1 AND node_id = $2 AND epoch = $3"
        " AND expires_at > now() RETURNING true",
        workspace_id, node_id, epoch) is not None


async def owner(db: Database, workspace_id: int) -> Owner | None:
    """Who holds the workspace's lease now (None: nobody, or it expired)."""
    row = await db.fetchrow("SELECT node_id, epoch FROM workspace_leases WHERE workspace_id = $1"
                            " AND expires_at > now()", workspace_id)
    return Owner(row["node_id"], row["epoch"]) if row is not None else None


async def fence(tx: UnitOfWork, workspace_id: int, epoch: int) -> None:
    """In a transaction: raise LeaseLost unless `epoch` is the workspace's unexpired lease, and hold the lease row
    until the transaction ends, so no other node takes the workspace over while its writes are under way."""
    try:
        await tx.fetchval("SELECT inbox_lease_fence($1, $2)", workspace_id, epoch)
    except asyncpg.PostgresError as err:
        if err.sqlstate == _LEASE_LOST:
            raise LeaseLost(f"workspace {workspace_id} is no longer leased at epoch {epoch}") from None
        raise
