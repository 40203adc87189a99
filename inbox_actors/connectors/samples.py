"""A trigger's polling list (Zapier's performList, a Make polling trigger, the sample a platform shows while a
user sets a trigger up): the workspace's latest events of that kind, newest first, each an item as a hook delivery
carries it, with the event's correlation id as its stable `id`; read from the outbox, which keeps every event 30
days whatever became of its delivery. With none yet, the trigger's documented example, its id `example_<event>`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from inbox_actors.connectors import trigger_catalog
from inbox_actors.domain.events import iso
from persistence.database import Database
from persistence.queries import connectors as queries

DEFAULT_LIMIT = 10
MAX_LIMIT = 100


async def samples(db: Database, workspace_id: int, event: str, limit: int = DEFAULT_LIMIT) -> list[dict[str, Any]]:
    rows = await queries.latest_events(db, workspace_id, event, limit)
    if not rows:
        return [trigger_catalog.example_item(event)]
    return [{"id": row["correlation_id"], "event": row["event"], "sent_at": iso(row["created_at"]),
             "correlation_id": row["correlation_id"], "actor": row["actor"],
             "data": msgspec.json.decode(row["data"])} for row in rows]
