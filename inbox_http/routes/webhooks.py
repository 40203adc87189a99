"""Outbound webhook settings, `/api/webhook/outbound/*`: the configuration, rotating the signing secret, a test
event, the delivery log.

With a key: Full API (Scale), scope `settings` (reads also `settings:read`). With a member's dashboard session
(the web app's credential): on any plan, for admins and members with the settings permission; so a Growth
workspace sets up its 5 core events there, and a Starter one is told 403 webhooks_not_in_plan. Stable-code
errors. Each call binds one of the webhook settings' use cases (`use_cases/webhook_settings.py`, which wakes the
workspace's endpoint actor after a change); checks and storage live in `inbox_actors.webhooks`.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.domain.plans import ApiTier
from inbox_actors.use_cases import webhook_settings
from inbox_actors.webhooks import delivery_log, ping, settings
from inbox_http.contract import answers, takes
from inbox_http.dependencies import dependencies
from inbox_http.encoding import json_response
from inbox_http.guard import accepts, current_caller, guarded, responds
from inbox_http.outcome_answers import run_route

blueprint = Blueprint("webhooks", __name__, url_prefix="/api/webhook/outbound")


@blueprint.get("/config")
@responds(settings.WebhookConfig)
@guarded(tier=ApiTier.FULL, use_case=webhook_settings.READ, dashboard=True)
async def read_config():
    """The workspace's webhook settings, the events its plan offers and the event catalog."""
    return await run_route(webhook_settings.READ)


@blueprint.put("/config")
@responds(settings.WebhookConfig)
@guarded(tier=ApiTier.FULL, use_case=webhook_settings.SAVE, dashboard=True)
@takes(settings.SaveSettings)
async def save_config():
    """Save `{endpoint_url, events, enabled, credit_alert_levels}`; the first save answers the signing secret
    (`secret`), shown this once."""
    return await run_route(webhook_settings.SAVE, body=True)


@blueprint.post("/rotate-secret")
@responds(settings.NewSecret)
@guarded(tier=ApiTier.FULL, use_case=webhook_settings.ROTATE_SECRET, dashboard=True)
@answers(404)
async def rotate_secret():
    """Replace the signing secret; the new one is in this answer only and signs every event from now on."""
    return await run_route(webhook_settings.ROTATE_SECRET)


@blueprint.post("/test")
@responds(ping.SentTestEvent)
@guarded(tier=ApiTier.FULL, use_case=webhook_settings.SEND_TEST, dashboard=True)
@answers(400, 404)
async def send_test():
    """Send a signed `webhook_test` event to the endpoint now, under the delivery rules; the answer carries
    each attempt (at most 3, so at most about 29 s)."""
    return await run_route(webhook_settings.SEND_TEST)


@blueprint.get("/deliveries")
@responds(delivery_log.DeliveryLogPage)
@guarded(tier=ApiTier.FULL, use_case=webhook_settings.DELIVERIES, dashboard=True)
@accepts(delivery_log.PARAMETERS)
async def deliveries():
    """The delivery log, newest first: each event with its attempts (time, status code or error, duration)."""
    # The query string as it came, as every list of the API reads its own: its cursor is tied to every parameter
    # given (`paging/cursors.py`), which the use case's typed arguments would not keep.
    state, caller = dependencies(), current_caller()
    return json_response(await delivery_log.delivery_log(state.db, caller.workspace_id, request.args))
