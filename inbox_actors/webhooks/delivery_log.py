"""`GET /api/webhook/outbound/deliveries` (and a connector hook's `GET /api/<connector>/hooks/{id}/deliveries`):
what happened to each event, newest first, with every attempt.

Filters: `event` (an event name, or `webhook_test`), `outcome` (pending, delivered, failed); `limit` 1 to 200
(default 50); `cursor`, the previous page's next_cursor (opaque keyset, like the Reporting API's lists).
Events the settings did not want (skipped) are not in the log. Rows are kept 30 days.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import msgspec

from inbox_actors.domain import events
from inbox_actors.paging import cursors, parameters
from inbox_actors.paging.parameter_catalog import CURSOR, LIMIT_50, QueryParameter
from inbox_actors.paging.parameters import InvalidParameter
from inbox_actors.webhooks.ping import AttemptView
from persistence.database import Database
from persistence.queries.webhook_log import read_log

OUTCOMES = ("pending", "delivered", "failed")
DEFAULT_PAGE = 50
_CURSOR_KIND = "webhook_deliveries"

PARAMETERS = (
    QueryParameter("event", "string", "only this event", (*events.ALL_EVENTS, events.WEBHOOK_TEST)),
    QueryParameter("outcome", "string", "only events with this outcome", OUTCOMES),
    LIMIT_50,
    CURSOR,
)


class DeliveryLogEntry(msgspec.Struct, frozen=True):
    id: int
    event: str
    correlation_id: str
    actor: str
    outcome: str
    test: bool
    created_at: datetime
    attempts: list[AttemptView]


class DeliveryLogPage(msgspec.Struct, frozen=True):
    data: list[DeliveryLogEntry]
    next_cursor: str | None


_attempts_decoder = msgspec.json.Decoder(list[AttemptView])


async def delivery_log(db: Database, workspace_id: int, args: Mapping[str, str], *,
                       hook_id: int | None = None) -> DeliveryLogPage:
    """The workspace endpoint's log, or with `hook_id` a connector hook's (the copies of its event it was sent)."""
    event = args.get("event")
    if event is not None and event not in (*events.ALL_EVENTS, events.WEBHOOK_TEST):
        raise InvalidParameter("invalid_event", f"event must be one of: {', '.join(events.ALL_EVENTS)}, "
                                                f"{events.WEBHOOK_TEST}.")
    outcome = args.get("outcome")
    if outcome is not None and outcome not in OUTCOMES:
        raise InvalidParameter("invalid_outcome", f"outcome must be one of: {', '.join(OUTCOMES)}.")
    limit = parameters.limit(args.get("limit"), DEFAULT_PAGE)
    position = cursors.decode(args, _CURSOR_KIND, str, str, int)
    if position is not None:
        # A cursor carries its filters: paging on with other filters would skip or repeat rows.
        if (position[0] or None, position[1] or None) != (event, outcome):
            raise InvalidParameter("invalid_cursor", "cursor belongs to other filters; start again without it.")
    rows = await read_log(db, workspace_id, event=event, outcome=outcome,
                          before_id=position[2] if position is not None else None, limit=limit + 1, hook_id=hook_id)
    entries = [DeliveryLogEntry(id=r["id"], event=r["event"], correlation_id=r["correlation_id"], actor=r["actor"],
                                outcome=r["outcome"], test=r["test"], created_at=r["created_at"],
                                attempts=_attempts_decoder.decode(r["attempts"])) for r in rows[:limit]]
    next_cursor = None
    if len(rows) > limit:
        next_cursor = cursors.encode(_CURSOR_KIND, args, event or "", outcome or "", entries[-1].id)
    return DeliveryLogPage(data=entries, next_cursor=next_cursor)
