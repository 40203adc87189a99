"""A workspace's outbound webhook settings: the spec's WebhookConfig, saving it, rotating the signing secret.

The settings call is the single writer of the `webhook_configs` row; the endpoint actor reads it afresh each
time it takes events, so a change (a new URL, an event unsubscribed, a rotated secret) applies from the next
event on. Refusals are values (`SettingsRefusal`), answered by the route in the stable-code convention.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated

import msgspec

from inbox_actors.domain import events
from inbox_actors.domain.plans import Plan
from inbox_actors.webhooks.address_guard import MAX_URL_LENGTH, URL_PATTERN, AddressGuard, InvalidEndpointUrl
from persistence.database import Database, Record
from persistence.queries import webhook_configs as config_queries

SECRET_PREFIX = "whsec_"
MAX_CREDIT_ALERT_LEVELS = 10
MAX_CREDIT_ALERT_LEVEL = 1_000_000_000


class CatalogRow(msgspec.Struct, frozen=True):
    event: str
    group: str
    plan: str
    description: str
    available: bool


class WebhookConfig(msgspec.Struct, frozen=True):
    configured: bool
    endpoint_url: str
    events: list[str]
    enabled: bool
    updated_at: datetime | None
    updated_by_name: str | None
    valid_events: list[str]
    api_tier: str
    webhooks_available: bool
    event_catalog: list[CatalogRow]
    credit_alert_levels: list[int]


class WebhookConfigWithSecret(WebhookConfig, frozen=True):
    """The answer to the first save: the signing secret, shown this once."""

    secret: str


class NewSecret(msgspec.Struct, frozen=True):
    secret: str


class SettingsRefusal(msgspec.Struct, frozen=True):
    status: int
    code: str
    message: str


def _described(**json_schema: object) -> msgspec.Meta:
    """JSON Schema, for the published contract, of what `save_settings` checks after decoding."""
    return msgspec.Meta(extra_json_schema=json_schema)


class SaveSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    # Also judged where it leads: a name must resolve, and only to addresses webhooks may go to.
    endpoint_url: Annotated[str, _described(maxLength=MAX_URL_LENGTH, pattern=URL_PATTERN)]
    events: list[Annotated[str, _described(enum=list(events.ALL_EVENTS))]]
    enabled: bool = True
    credit_alert_levels: Annotated[list[Annotated[int, _described(minimum=1, maximum=MAX_CREDIT_ALERT_LEVEL)]],
                                   _described(maxItems=MAX_CREDIT_ALERT_LEVELS)] = []


NOT_IN_PLAN = SettingsRefusal(403, "webhooks_not_in_plan",
                              "Outbound webhooks are not part of the Starter plan; upgrade to Growth or Scale.")


def new_secret() -> str:
    """`whsec_` and 32 random bytes in base64: the Standard Webhooks secret format, so its libraries take it
    as it is."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


async def read_config(db: Database, workspace_id: int, plan: Plan) -> WebhookConfig:
    return config_view(await config_queries.find_config(db, workspace_id), plan)


def config_view(row: Record | None, plan: Plan) -> WebhookConfig:
    allowed = events.events_in_plan(plan)
    return WebhookConfig(
        configured=row is not None,
        endpoint_url=row["endpoint_url"] if row is not None else "",
        events=list(row["events"]) if row is not None else [],
        enabled=row["enabled"] if row is not None else False,
        updated_at=row["updated_at"] if row is not None else None,
        updated_by_name=row["updated_by_name"] if row is not None else None,
        valid_events=list(allowed),
        api_tier=plan.api_tier.value,
        webhooks_available=bool(allowed),
        event_catalog=[CatalogRow(event=entry.event, group=entry.group, plan=entry.plan,
                                  description=entry.description, available=entry.event in allowed)
                       for entry in events.CATALOG],
        credit_alert_levels=list(row["credit_alert_levels"]) if row is not None else [],
    )


async def save_settings(db: Database, guard: AddressGuard, *, workspace_id: int, plan: Plan, member_id: int,
                        request: SaveSettings) -> WebhookConfig | WebhookConfigWithSecret | SettingsRefusal:
    """Check and store the settings; the first save also makes the signing secret and shows it."""
    if plan is Plan.STARTER:
        return NOT_IN_PLAN
    chosen = _chosen_events(request.events, plan)
    if isinstance(chosen, SettingsRefusal):
        return chosen
    levels = _credit_alert_levels(request.credit_alert_levels)
    if isinstance(levels, SettingsRefusal):
        return levels
    try:
        await guard.check_url_resolving(request.endpoint_url)
    except InvalidEndpointUrl as err:
        return SettingsRefusal(400, "invalid_endpoint_url", str(err))
    secret = new_secret()
    async with db.transaction() as tx:
        row, created = await config_queries.save_config(
            tx, workspace_id=workspace_id, endpoint_url=request.endpoint_url, events=chosen, enabled=request.enabled,
            credit_alert_levels=levels, updated_by=member_id, new_secret=secret)
    view = config_view(row, plan)
    if created:
        return WebhookConfigWithSecret(**msgspec.structs.asdict(view), secret=secret)
    return view


async def rotate_secret(db: Database, *, workspace_id: int, plan: Plan, member_id: int) -> NewSecret | SettingsRefusal:
    """Replace the signing secret; events from now on are signed with the new one only."""
    if plan is Plan.STARTER:
        return NOT_IN_PLAN
    secret = new_secret()
    async with db.transaction() as tx:
        rotated = await config_queries.replace_secret(tx, workspace_id, secret, member_id)
    if not rotated:
        return SettingsRefusal(404, "not_found", "No webhook endpoint is configured; save the settings first.")
    return NewSecret(secret=secret)


def _chosen_events(names: Sequence[str], plan: Plan) -> list[str] | SettingsRefusal:
    """The subscribed events in catalog order, without repeats; unknown names and events above the plan are
    refused."""
    unknown = [name for name in names if name not in events.ALL_EVENTS]
    if unknown:
        return SettingsRefusal(400, "invalid_event", f"Unknown event {unknown[0]!r}; valid events: "
                                                     f"{', '.join(events.ALL_EVENTS)}.")
    allowed = events.events_in_plan(plan)
    above = [name for name in names if name not in allowed]
    if above:
        return SettingsRefusal(403, "event_requires_scale",
                               f"The event {above[0]!r} needs the Scale plan; this workspace is on "
                               f"{plan.value.capitalize()}.")
    wanted = set(names)
    return [name for name in events.ALL_EVENTS if name in wanted]


def _credit_alert_levels(levels: Sequence[int]) -> list[int] | SettingsRefusal:
    """Distinct levels, highest first (a falling balance crosses them in that order)."""
    if len(levels) > MAX_CREDIT_ALERT_LEVELS or any(not 1 <= level <= MAX_CREDIT_ALERT_LEVEL for level in levels):
        return SettingsRefusal(400, "invalid_credit_alert_levels",
                               f"credit_alert_levels takes at most {MAX_CREDIT_ALERT_LEVELS} whole numbers from 1 "
                               f"to {MAX_CREDIT_ALERT_LEVEL:,}.")
    return sorted(set(levels), reverse=True)
