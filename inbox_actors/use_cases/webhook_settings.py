"""The workspace's webhook settings as use cases: reading them, saving them, rotating the signing secret, sending a
test event, reading the delivery log. Each needs the `settings` permission (a read also takes `settings:read`).

Settings are a per-workspace row written in one transaction (`webhooks/settings.py` holds the rules: the plan's
events, the endpoint address rules, the credit alert levels); the workspace's endpoint actor only reads them. So a
change that was stored wakes that actor at once, here, for every front door, instead of waiting for its next
recheck.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from inbox_actors.domain import events
from inbox_actors.paging.parameters import MAX_PAGE
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.chat_reads import NoArguments, query
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import Cursor
from inbox_actors.use_cases.outcomes import Done, Outcome, Refused, reason_of_status
from inbox_actors.use_cases.use_case import Kind, UseCase, rule
from inbox_actors.webhooks import delivery_log, ping, settings
from inbox_actors.webhooks.endpoint import wake_endpoint

LOG_EVENTS = (*events.ALL_EVENTS, events.WEBHOOK_TEST)


class DeliveryLogQuery(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The log's filters and page, as `GET /api/webhook/outbound/deliveries` takes them."""

    event: Annotated[Literal[LOG_EVENTS], msgspec.Meta(  # type: ignore[valid-type]
        description="Only this event.", extra=rule("invalid_event", f"event must be one of: {', '.join(LOG_EVENTS)}."),
    )] | None = None
    outcome: Annotated[Literal[delivery_log.OUTCOMES], msgspec.Meta(  # type: ignore[valid-type]
        description="Only events with this outcome.",
        extra=rule("invalid_outcome", f"outcome must be one of: {', '.join(delivery_log.OUTCOMES)}."),
    )] | None = None
    limit: Annotated[int, msgspec.Meta(
        ge=1, le=MAX_PAGE, description=f"How many events, 1 to {MAX_PAGE}.",
        extra=rule("invalid_limit", f"limit must be a whole number from 1 to {MAX_PAGE}."),
    )] = delivery_log.DEFAULT_PAGE
    cursor: Cursor | None = None


async def _read(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    """The settings, the events the plan offers and the event catalog."""
    return Done(await settings.read_config(deps.db, caller.workspace_id, caller.plan))


async def _save(deps: UseCaseDeps, caller: Caller, a: settings.SaveSettings) -> Outcome:
    """Store `{endpoint_url, events, enabled, credit_alert_levels}`; the first save shows the signing secret."""
    return woken(deps, caller, _outcome(await settings.save_settings(
        deps.db, deps.webhook_guard, workspace_id=caller.workspace_id, plan=caller.plan,
        member_id=caller.member_id, request=a)))


async def _rotate_secret(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    """A new signing secret, shown in this answer only; every event from now on is signed with it."""
    return woken(deps, caller, _outcome(await settings.rotate_secret(
        deps.db, workspace_id=caller.workspace_id, plan=caller.plan, member_id=caller.member_id)))


async def _send_test(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    """A signed `webhook_test` event delivered now under the delivery rules, with each attempt."""
    return _outcome(await ping.send_test_event(
        deps.db, deps.webhook_guard, deps.webhook_transport, deps.clock, workspace_id=caller.workspace_id,
        plan=caller.plan, actor=caller.author))


async def _deliveries(deps: UseCaseDeps, caller: Caller, a: DeliveryLogQuery) -> Outcome:
    """Newest first, each event with its attempts; a cursor pages on under the filters that made it."""
    return Done(await delivery_log.delivery_log(deps.db, caller.workspace_id, query(
        event=a.event, outcome=a.outcome, limit=a.limit, cursor=a.cursor)))


def woken(deps: UseCaseDeps, caller: Caller, outcome: Outcome) -> Outcome:
    """The outcome of a change to what the workspace's webhook endpoint delivers (its settings, a connector's
    hooks), the endpoint woken when it was stored: the endpoint reads them only when it looks at its outbox."""
    if isinstance(outcome, Done):
        wake_endpoint(deps.actors, caller.workspace_id, settings_changed=True)
    return outcome


def _outcome(reply: object) -> Outcome:
    if isinstance(reply, settings.SettingsRefusal):
        return Refused(reason_of_status(reply.status), reply.message, reply.status, reply.code)
    return Done(reply)


# -- the declarations ----------------------------------------------------------------------------------------

READ = UseCase("read_webhook_settings", NoArguments, permissions.SETTINGS, Kind.READ, _read)
SAVE = UseCase("save_webhook_settings", settings.SaveSettings, permissions.SETTINGS, Kind.WRITE, _save)
ROTATE_SECRET = UseCase("rotate_webhook_secret", NoArguments, permissions.SETTINGS, Kind.WRITE, _rotate_secret)
SEND_TEST = UseCase("send_webhook_test", NoArguments, permissions.SETTINGS, Kind.WRITE, _send_test)
DELIVERIES = UseCase("list_webhook_deliveries", DeliveryLogQuery, permissions.SETTINGS, Kind.READ, _deliveries)
