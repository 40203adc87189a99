"""The connectors' triggers: the catalog of events a Zapier or Make user can start from, and an event's latest
items (for polling and for a zap's sample). Which events a plan offers is the catalog's rule
(`connectors/trigger_catalog.py`); the items are the webhook envelopes the workspace's outbox holds."""

from __future__ import annotations

import msgspec

from inbox_actors.connectors import samples, trigger_catalog
from inbox_actors.connectors.model import TriggerList
from inbox_actors.domain import events
from inbox_actors.paging import parameters
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused
from inbox_actors.use_cases.use_case import Kind, UseCase


class NoArguments(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The catalog is the caller's plan's."""


class EventSamples(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    event: str
    limit: str | None = None
    """As the query gives it: 1 to samples.MAX_LIMIT, default samples.DEFAULT_LIMIT."""


async def _triggers(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(TriggerList(trigger_catalog.triggers(caller.plan)))


async def _samples(deps: UseCaseDeps, caller: Caller, a: EventSamples) -> Outcome:
    if not trigger_catalog.is_event(a.event):
        return Refused(Reason.NOT_FOUND, f"No trigger {a.event!r}; valid ones: {', '.join(events.ALL_EVENTS)}.",
                       404, "not_found")
    if a.event not in events.events_in_plan(caller.plan):
        return Refused(Reason.PERMISSION, f"The event {a.event!r} needs the Scale plan.", 403,
                       "event_requires_scale")
    limit = parameters.limit(a.limit, samples.DEFAULT_LIMIT, samples.MAX_LIMIT)
    return Done(await samples.samples(deps.db, caller.workspace_id, a.event, limit))


TRIGGERS = UseCase("list_connector_triggers", NoArguments, permissions.AUTOMATIONS, Kind.READ, _triggers)
SAMPLES = UseCase("connector_trigger_samples", EventSamples, permissions.AUTOMATIONS, Kind.READ, _samples)
