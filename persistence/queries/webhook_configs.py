"""A workspace's outbound webhook settings (`webhook_configs`): one row per workspace, made on the first save."""

from __future__ import annotations

from persistence.database import Database, Record, UnitOfWork

_COLUMNS = ("c.workspace_id, c.endpoint_url, c.events, c.enabled, c.signing_secret, c.credit_alert_levels,"
            " c.updated_at, c.updated_by, m.name AS updated_by_name, c.secret_created_at")


async def find_config(db: Database | UnitOfWork, workspace_id: int) -> Record | None:
    return await db.fetchrow(
        f"SELECT {_COLUMNS} FROM webhook_configs c LEFT JOIN members m ON m.id = c.updated_by"
        " WHERE c.workspace_id = $1", workspace_id)


async def save_config(tx: UnitOfWork, *, workspace_id: int, endpoint_url: str, events: list[str], enabled: bool,
                      credit_alert_levels: list[int], updated_by: int, new_secret: str) -> tuple[Record, bool]:
    """Insert or replace the settings; `new_secret` is stored only when the row is new. True when it was."""
    row = await tx.fetchrow(
        "WITH c AS ("
        " INSERT INTO webhook_configs AS c (workspace_id, endpoint_url, events, enabled, signing_secret,"
        "  credit_alert_levels, updated_at, updated_by)"
        " VALUES ($1, $2, $3, $4, $5, $6, now(), $7)"
        " ON CONFLICT (workspace_id) DO UPDATE SET endpoint_url = EXCLUDED.endpoint_url, events = EXCLUDED.events,"
        "  enabled = EXCLUDED.enabled, credit_alert_levels = EXCLUDED.credit_alert_levels, updated_at = now(),"
        "  updated_by = EXCLUDED.updated_by"
        " RETURNING *, (xmax = 0) AS created)"
        f" SELECT {_COLUMNS}, c.created FROM c LEFT JOIN members m ON m.id = c.updated_by",
        workspace_id, endpoint_url, events, enabled, new_secret, credit_alert_levels, updated_by)
    assert row is not None
    return row, row["created"]


async def replace_secret(tx: UnitOfWork, workspace_id: int, new_secret: str, updated_by: int) -> bool:
    """Give the settings a new signing secret; False when the workspace has none to rotate."""
    changed = await tx.fetchval(
        "UPDATE webhook_configs SET signing_secret = $2, secret_created_at = now(), updated_at = now(),"
        " updated_by = $3 WHERE workspace_id = $1 RETURNING workspace_id", workspace_id, new_secret, updated_by)
    return changed is not None


async def delivery_target(db: Database, workspace_id: int) -> Record | None:
    """What delivery needs, read afresh each round: the workspace's plan and its settings (None: no settings)."""
    return await db.fetchrow(
        "SELECT w.plan, c.endpoint_url, c.events, c.enabled, c.signing_secret"
        " FROM workspaces w JOIN webhook_configs c ON c.workspace_id = w.id WHERE w.id = $1", workspace_id)
