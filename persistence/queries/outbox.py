"""The webhook outbox: events appended in the transaction of the change they describe."""

from __future__ import annotations

from typing import Any

import msgspec

from persistence.database import UnitOfWork


async def append_event(tx: UnitOfWork, *, workspace_id: int, event: str, actor: str, data: dict[str, Any],
                       correlation_id: str) -> None:
    """Queue one event for delivery; commits or rolls back with `tx`, so an event exists exactly when its
    change does."""
    await tx.execute(
        "INSERT INTO webhook_outbox (workspace_id, event, correlation_id, actor, data)"
        " VALUES ($1, $2, $3, $4, $5::jsonb)",
        workspace_id, event, correlation_id, actor, msgspec.json.encode(data).decode(),
    )
