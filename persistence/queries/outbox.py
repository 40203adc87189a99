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


async def append_events(tx: UnitOfWork, *, workspace_id: int,
                        events: list[tuple[str, str, dict[str, Any], str]]) -> None:
    """Queue several (event, actor, data, correlation_id) in one statement, in the order given (which is the
    order they are delivered in)."""
    if len(events) == 1:
        event, actor, data, correlation_id = events[0]
        await append_event(tx, workspace_id=workspace_id, event=event, actor=actor, data=data,
                           correlation_id=correlation_id)
        return
    if not events:
        return
    await tx.execute(
        "INSERT INTO webhook_outbox (workspace_id, event, correlation_id, actor, data)"
        " SELECT $1, e.event, e.correlation_id, e.actor, e.data"
        " FROM unnest($2::text[], $3::text[], $4::text[], $5::jsonb[]) WITH ORDINALITY"
        " AS e(event, correlation_id, actor, data, n) ORDER BY e.n",
        workspace_id, [e[0] for e in events], [e[3] for e in events], [e[1] for e in events],
        [msgspec.json.encode(e[2]).decode() for e in events],
    )
