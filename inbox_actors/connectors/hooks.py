"""REST hook subscriptions (Zapier's performSubscribe/performUnsubscribe, Make's attach/detach): one hook per
subscribe call, wanting one event, delivered to its target URL.

Delivery rides on the outbound webhooks: every event appended to the outbox is copied, in the same transaction,
once per hook of the workspace that wants it (migration 014), and the workspace's webhook endpoint actor delivers
each copy to its hook's target under the outbound webhooks' rules: the same envelope (with the item's `id`
first), the same two signatures keyed with the hook's own secret (made at subscribe, shown in that answer only),
the same attempt schedule, every attempt in the outbox's attempt log. A hook stops receiving when it is
unsubscribed (its pending copies are skipped at once), when the key that made it is revoked, expires or loses
its creator, or when the plan no longer offers its event.

Rules checked at subscribe (nothing is stored otherwise): a known event (400 invalid_event), one the plan offers
(403 event_requires_scale), a target the address guard allows (400 invalid_target_url, the webhook endpoint's
rules), at most MAX_HOOKS per workspace (409 too_many_hooks).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

import msgspec

from inbox_actors.connectors import trigger_catalog
from inbox_actors.connectors.model import ConnectorRefusal, HookView, IssuedHook, Platform
from inbox_actors.domain import events
from inbox_actors.domain.plans import Plan
from inbox_actors.webhooks import delivery_log
from inbox_actors.webhooks.address_guard import MAX_URL_LENGTH, URL_PATTERN, AddressGuard, InvalidEndpointUrl
from inbox_actors.webhooks.settings import new_secret
from persistence.database import Database, Record
from persistence.queries import connectors as queries

MAX_HOOKS = 100


class Subscribe(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    # Also judged where it leads: a name must resolve, and only to addresses webhooks may go to.
    target_url: Annotated[str, msgspec.Meta(extra_json_schema={"maxLength": MAX_URL_LENGTH, "pattern": URL_PATTERN})]
    event: Annotated[str, msgspec.Meta(extra_json_schema={"enum": list(events.ALL_EVENTS)})]


async def subscribe(db: Database, guard: AddressGuard, *, platform: Platform, workspace_id: int, plan: Plan,
                    key_id: int, request: Subscribe) -> IssuedHook | ConnectorRefusal:
    if not trigger_catalog.is_event(request.event):
        return ConnectorRefusal(400, "invalid_event", f"Unknown event {request.event!r}; valid events: "
                                                      f"{', '.join(events.ALL_EVENTS)}.")
    if request.event not in events.events_in_plan(plan):
        return ConnectorRefusal(403, "event_requires_scale", f"The event {request.event!r} needs the Scale plan; "
                                                             f"this workspace is on {plan.value.capitalize()}.")
    try:
        await guard.check_url_resolving(request.target_url)
    except InvalidEndpointUrl as err:
        return ConnectorRefusal(400, "invalid_target_url", str(err))
    secret = new_secret()
    async with db.transaction() as tx:
        if await queries.count_hooks_locked(tx, workspace_id) >= MAX_HOOKS:
            return ConnectorRefusal(409, "too_many_hooks", f"This workspace has {MAX_HOOKS} hooks, the most it may "
                                                           "have; unsubscribe one first.")
        row = await queries.insert_hook(tx, workspace_id=workspace_id, platform=platform.value, event=request.event,
                                        target_url=request.target_url, signing_secret=secret, key_id=key_id)
    return IssuedHook(**msgspec.structs.asdict(hook_view(row)), secret=secret)


async def unsubscribe(db: Database, *, platform: Platform, workspace_id: int, hook_id: int
                      ) -> HookView | ConnectorRefusal:
    async with db.transaction() as tx:
        row = await queries.delete_hook(tx, workspace_id, platform.value, hook_id)
    if row is None:
        return ConnectorRefusal(404, "not_found", f"No {platform.title} hook {hook_id} in this workspace.")
    return hook_view(row)


async def list_hooks(db: Database, *, platform: Platform, workspace_id: int) -> list[HookView]:
    return [hook_view(row) for row in await queries.list_hooks(db, workspace_id, platform.value)]


async def hook_deliveries(db: Database, *, platform: Platform, workspace_id: int, hook_id: int,
                          args: Mapping[str, str]) -> delivery_log.DeliveryLogPage | ConnectorRefusal:
    """What became of each copy of its event the hook was sent, newest first, every attempt with its status code
    or error: the same log, filters and paging as the workspace endpoint's (`GET /api/webhook/outbound/deliveries`).
    Copies skipped because the hook was unsubscribed are not shown; the log is gone with the hook."""
    if not await queries.hook_exists(db, workspace_id, platform.value, hook_id):
        return ConnectorRefusal(404, "not_found", f"No {platform.title} hook {hook_id} in this workspace.")
    return await delivery_log.delivery_log(db, workspace_id, args, hook_id=hook_id)


def hook_view(row: Record) -> HookView:
    return HookView(id=row["id"], event=row["event"], target_url=row["target_url"], key_id=row["key_id"],
                    key_name=row["key_name"], created_at=row["created_at"])
