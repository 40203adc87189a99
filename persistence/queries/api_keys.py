"""API keys: stored by SHA-256 hash only."""

from __future__ import annotations

from datetime import datetime, timedelta

from persistence.database import Database, Record, UnitOfWork

_CREDENTIAL = """
    SELECT k.id AS key_id, k.workspace_id, k.name AS key_name, k.scopes, k.read_only, k.rate_limit_per_minute,
           k.limits_exempt, k.expires_at, k.revoked_at, k.grace_until,
           m.id AS member_id, m.role AS member_role, m.permissions AS member_permissions,
           m.status AS member_status, m.assigned_only AS member_assigned_only,
           w.plan, w.cloud_api_enabled
    FROM api_keys k
    JOIN members m ON m.id = k.created_by
    JOIN workspaces w ON w.id = k.workspace_id
    WHERE k.key_hash = $1
"""


async def find_credential(db: Database | UnitOfWork, key_hash: bytes) -> Record | None:
    """The key with everything the auth ladder needs, in one indexed lookup."""
    return await db.fetchrow(_CREDENTIAL, key_hash)


async def insert_key(
    tx: UnitOfWork, *, workspace_id: int, created_by: int, name: str, key_hash: bytes, scopes: list[str],
    read_only: bool, rate_limit_per_minute: int | None, expires_at: datetime | None,
) -> Record:
    return await tx.fetchrow(
        """
        INSERT INTO api_keys (workspace_id, created_by, name, key_hash, scopes, read_only,
                              rate_limit_per_minute, expires_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
        RETURNING id, name, scopes, read_only, rate_limit_per_minute, expires_at, created_at
        """,
        workspace_id, created_by, name, key_hash, scopes, read_only, rate_limit_per_minute, expires_at,
    )


async def revoke_keys_named(tx: UnitOfWork, workspace_id: int, name: str) -> int:
    status = await tx.execute(
        "UPDATE api_keys SET revoked_at = now(), updated_at = now()"
        " WHERE workspace_id = $1 AND name = $2 AND revoked_at IS NULL",
        workspace_id, name,
    )
    return int(status.split()[-1])


_KEY_COLUMNS = """
    k.id, k.workspace_id, k.name, k.scopes, k.read_only, k.rate_limit_per_minute, k.expires_at, k.revoked_at,
    k.replaced_by, k.grace_until, k.last_used_at, k.created_at, k.created_by, m.name AS created_by_name,
    k.limits_exempt
"""


async def count_active_keys(tx: UnitOfWork, workspace_id: int, now: datetime) -> int:
    """Keys that work and are not on their way out: not revoked, not expired, not replaced by a rotation."""
    return await tx.fetchval(
        "SELECT count(*) FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NULL AND replaced_by IS NULL"
        " AND (expires_at IS NULL OR expires_at > $2)",
        workspace_id, now,
    )


async def find_key(db: Database | UnitOfWork, workspace_id: int, key_id: int, *, for_update: bool = False
                   ) -> Record | None:
    lock = " FOR UPDATE OF k" if for_update else ""
    return await db.fetchrow(
        f"SELECT {_KEY_COLUMNS} FROM api_keys k JOIN members m ON m.id = k.created_by"
        f" WHERE k.workspace_id = $1 AND k.id = $2{lock}",
        workspace_id, key_id,
    )


async def list_keys(db: Database, workspace_id: int) -> list[Record]:
    return await db.fetch(
        f"SELECT {_KEY_COLUMNS} FROM api_keys k JOIN members m ON m.id = k.created_by"
        " WHERE k.workspace_id = $1 ORDER BY k.id DESC",
        workspace_id,
    )


async def update_key(tx: UnitOfWork, key_id: int, *, name: str, expires_at: datetime | None,
                     rate_limit_per_minute: int | None, limits_exempt: bool) -> None:
    await tx.execute(
        "UPDATE api_keys SET name = $2, expires_at = $3, rate_limit_per_minute = $4, limits_exempt = $5,"
        " updated_at = now() WHERE id = $1",
        key_id, name, expires_at, rate_limit_per_minute, limits_exempt,
    )


async def exempt_key_hashes(db: Database) -> list[bytes]:
    """The hashes of the keys exempt from the default limits that still work (not revoked)."""
    rows = await db.fetch("SELECT key_hash FROM api_keys WHERE limits_exempt AND revoked_at IS NULL")
    return [row["key_hash"] for row in rows]


async def mark_rotated(tx: UnitOfWork, key_id: int, *, replaced_by: int, grace_until: datetime) -> None:
    await tx.execute(
        "UPDATE api_keys SET replaced_by = $2, grace_until = $3, updated_at = now() WHERE id = $1",
        key_id, replaced_by, grace_until,
    )


async def revoke_key(tx: UnitOfWork, key_id: int, at: datetime) -> None:
    await tx.execute("UPDATE api_keys SET revoked_at = $2, updated_at = now() WHERE id = $1", key_id, at)


async def record_activity(db: Database | UnitOfWork, rows: list[tuple]) -> None:
    """rows: (key_id, workspace_id, key_hash, method, path, status, ip, at); a row with no key id names its key by
    hash, resolved here (a hash of no key is left out). One statement, so one round trip and atomic on its own:
    the rows go in and each key's last-used time moves forward together."""
    key_ids, workspace_ids, hashes, methods, paths, statuses, ips, times = (
        list(column) for column in zip(*rows, strict=True))
    await db.execute(
        """
        WITH incoming AS (
            SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::text[], $5::text[], $6::smallint[],
                                 $7::text[], $8::timestamptz[]) WITH ORDINALITY
                AS r(key_id, workspace_id, key_hash, method, path, status, ip, at, position)
        ), recorded AS (
            INSERT INTO key_activity (key_id, workspace_id, method, path, status, ip, at)
            SELECT coalesce(r.key_id, k.id), coalesce(r.workspace_id, k.workspace_id), r.method, r.path, r.status,
                   r.ip, r.at
            FROM incoming r LEFT JOIN api_keys k ON r.key_id IS NULL AND k.key_hash = r.key_hash
            WHERE r.key_id IS NOT NULL OR k.id IS NOT NULL
            ORDER BY r.position  -- ids in the order the calls were recorded
            RETURNING key_id, at
        )
        UPDATE api_keys k SET last_used_at = greatest(k.last_used_at, latest.at)
        FROM (SELECT key_id, max(at) AS at FROM recorded GROUP BY key_id) AS latest
        WHERE k.id = latest.key_id
        """,
        key_ids, workspace_ids, hashes, methods, paths, statuses, ips, times,
    )


async def read_activity(db: Database, key_id: int, *, since: datetime, before_id: int | None, limit: int
                        ) -> list[Record]:
    """Newest first; `before_id` continues a previous page."""
    return await db.fetch(
        "SELECT id, method, path, status, ip, at FROM key_activity"
        " WHERE key_id = $1 AND at >= $2 AND ($3::bigint IS NULL OR id < $3)"
        " ORDER BY id DESC LIMIT $4",
        key_id, since, before_id, limit,
    )


async def prune_activity(db: Database, retention: timedelta, batch: int = 10_000) -> int:
    """Delete activity older than `retention` by PostgreSQL's clock, in bounded batches (no long lock on a busy
    table)."""
    deleted = 0
    while True:
        status = await db.execute(
            "DELETE FROM key_activity WHERE id IN"
            " (SELECT id FROM key_activity WHERE at < now() - $1::interval ORDER BY id LIMIT $2)",
            retention, batch,
        )
        count = int(status.split()[-1])
        deleted += count
        if count < batch:
            return deleted
