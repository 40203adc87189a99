"""Outbound webhook settings, `/api/webhook/outbound/*`: the configuration, rotating the signing secret, a test
event, the delivery log.

With a key: Full API (Scale), scope `settings` (reads also `settings:read`). With a member's dashboard session
(the web app's credential): on any plan, for admins and members with the settings permission; so a Growth
workspace sets up its 5 core events there, and a Starter one is told 403 webhooks_not_in_plan. Stable-code
errors. Checks and storage live in `inbox_actors.webhooks`; a change tells the workspace's endpoint actor at
once.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.actions import permissions
from inbox_actors.actions import settings as settings_actions
from inbox_actors.domain.plans import ApiTier
from inbox_actors.webhooks import delivery_log, settings, ping
from inbox_http.contract import answers, takes
from inbox_http.encoding import json_response
from inbox_http.guard import accepts, current_caller, guarded, responds
from inbox_http.json_body import read_json_body
from inbox_http.outcome_answers import answer
from inbox_http.services import services

blueprint = Blueprint("webhooks", __name__, url_prefix="/api/webhook/outbound")


@blueprint.get("/config")
@responds(settings.WebhookConfig)
@guarded(tier=ApiTier.FULL, scopes=permissions.SETTINGS, dashboard=True)
async def read_config():
    """The workspace's webhook settings, the events its plan offers and the event catalog."""
    caller = current_caller()
    return json_response(await settings.read_config(services().db, caller.workspace_id, caller.plan))


@blueprint.put("/config")
@responds(settings.WebhookConfig)
@guarded(tier=ApiTier.FULL, scopes=permissions.SETTINGS, dashboard=True)
@takes(settings.SaveSettings)
async def save_config():
    """Save `{endpoint_url, events, enabled, credit_alert_levels}`; the first save answers the signing secret
    (`secret`), shown this once."""
    body = await read_json_body(settings.SaveSettings)
    return answer(await settings_actions.save_webhook_settings(services().action_deps, current_caller(), body))


@blueprint.post("/rotate-secret")
@responds(settings.NewSecret)
@guarded(tier=ApiTier.FULL, scopes=permissions.SETTINGS, dashboard=True)
@answers(404)
async def rotate_secret():
    """Replace the signing secret; the new one is in this answer only and signs every event from now on."""
    return answer(await settings_actions.rotate_webhook_secret(services().action_deps, current_caller()))


@blueprint.post("/test")
@responds(ping.SentTestEvent)
@guarded(tier=ApiTier.FULL, scopes=permissions.SETTINGS, dashboard=True)
@answers(400, 404)
async def send_test():
    """Send a signed `webhook_test` event to the endpoint now, under the delivery rules; the answer carries
    each attempt (at most 3, so at most about 29 s)."""
    return answer(await settings_actions.send_webhook_test(services().action_deps, current_caller()))


@blueprint.get("/deliveries")
@responds(delivery_log.DeliveryLogPage)
@guarded(tier=ApiTier.FULL, scopes=permissions.SETTINGS, dashboard=True)
@accepts(delivery_log.PARAMETERS)
async def deliveries():
    """The delivery log, newest first: each event with its attempts (time, status code or error, duration)."""
    state, caller = services(), current_caller()
    return json_response(await delivery_log.delivery_log(state.db, caller.workspace_id, request.args))
