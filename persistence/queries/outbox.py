"""The webhook outbox: events appended in the transaction of the change they describe.

An event only people's screens read (SCREEN_ONLY_EVENTS, `inbox_actors/domain/events.py`'s) is written already
finished, outcome "skipped": no endpoint picks it up, the delivery log and the backlog leave it out, and retention
prunes it with the other finished events; the insert's notification still wakes the screens' streams.
"""

from __future__ import annotations

from typing import Any

import msgspec

from persistence.database import UnitOfWork


async def append_event(tx: UnitOfWork, *, workspace_id: int, event: str, actor: str, data: dict[str, Any],
                       correlation_id: str) -> None:
    """Queue one event for delivery; commits or rolls back with `tx`, so an event exists exactly when its
    change does."""
    await tx.execute(
        "INSERT INTO webhook_outbox (workspace_id, event, correlation_id, actor, data, outcome)"
        f" VALUES ($1, $2, $3, $4, $5::jsonb, {_OUTCOME.format(event='$2')})",
        workspace_id, event, correlation_id, actor, msgspec.json.encode(data).decode(),
    )


Event = tuple[str, str, dict[str, Any], str]
"""(event, actor, data, correlation_id)"""

SCREEN_ONLY_EVENTS = ("chat_changed",)
# The outcome an event is written with, by its name (a constant list: no parameter of the statement).
_OUTCOME = ("CASE WHEN {event} IN (" + ", ".join(f"'{name}'" for name in SCREEN_ONLY_EVENTS)
            + ") THEN 'skipped' ELSE 'pending' END")


async def append_events(tx: UnitOfWork, *, workspace_id: int, events: list[Event]) -> None:
    """Queue several events in one statement, in the order given (which is the order they are delivered in)."""
    if len(events) == 1:
        event, actor, data, correlation_id = events[0]
        await append_event(tx, workspace_id=workspace_id, event=event, actor=actor, data=data,
                           correlation_id=correlation_id)
        return
    if not events:
        return
    sql, args = events_insert(workspace_id, events, first=1)
    await tx.execute(sql, *args)


def events_insert(workspace_id: int, events: list[Event], *, first: int, when: str = "",
                  first_when: str = "", message_id_from: str = "") -> tuple[str, list[Any]]:
    """The INSERT that queues `events` in the order given, as SQL whose parameters are numbered from $`first`,
    and its arguments: a part of a larger statement (a data-modifying CTE), which appends the events in the
    same statement as the change they describe. `when`: a condition that must hold for any to be queued;
    `first_when`: one the first event alone needs besides. `message_id_from`: a CTE of the statement that stores
    a message, whose id an event with a null "id" in its data gets (the id is the database's, known only as the
    statement runs)."""
    n = first
    data = "e.data"
    if message_id_from:
        data = (f"CASE WHEN e.data -> 'id' = 'null'::jsonb THEN jsonb_set(e.data, '{{id}}',"
                f" to_jsonb((SELECT id FROM {message_id_from}))) ELSE e.data END")
    conditions = [when] if when else []
    if first_when:
        conditions.append(f"(e.n > 1 OR {first_when})")
    sql = ("INSERT INTO webhook_outbox (workspace_id, event, correlation_id, actor, data, outcome)"
           f" SELECT ${n}, e.event, e.correlation_id, e.actor, {data}, {_OUTCOME.format(event='e.event')}"
           f" FROM unnest(${n + 1}::text[], ${n + 2}::text[], ${n + 3}::text[], ${n + 4}::jsonb[]) WITH ORDINALITY"
           f" AS e(event, correlation_id, actor, data, n)"
           f"{' WHERE ' + ' AND '.join(conditions) if conditions else ''} ORDER BY e.n")
    return sql, [workspace_id, [e[0] for e in events], [e[3] for e in events], [e[1] for e in events],
                 [msgspec.json.encode(e[2]).decode() for e in events]]

