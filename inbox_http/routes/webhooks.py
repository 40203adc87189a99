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

from inbox_actors.domain.plans import ApiTier
from inbox_actors.webhooks import delivery_log, settings, ping
from inbox_actors.webhooks.endpoint import wake_endpoint
from inbox_http.contract import answers, takes
from inbox_http.encoding import json_response
from inbox_http.errors import ApiError
from inbox_http.guard import accepts, current_principal, guarded, responds
from inbox_http.json_body import read_json_body
from inbox_http.services import services

blueprint = Blueprint("webhooks", __name__, url_prefix="/api/webhook/outbound")

SETTINGS = ("settings",)


@blueprint.get("/config")
@responds(settings.WebhookConfig)
@guarded(tier=ApiTier.FULL, scopes=SETTINGS, dashboard=True)
async def read_config():
    """The workspace's webhook settings, the events its plan offers and the event catalog."""
    caller = current_principal()
    return json_response(await settings.read_config(services().db, caller.workspace_id, caller.plan))


@blueprint.put("/config")
@responds(settings.WebhookConfig)
@guarded(tier=ApiTier.FULL, scopes=SETTINGS, dashboard=True)
@takes(settings.SaveSettings)
async def save_config():
    """Save `{endpoint_url, events, enabled, credit_alert_levels}`; the first save answers the signing secret
    (`secret`), shown this once."""
    state, caller = services(), current_principal()
    body = await read_json_body(settings.SaveSettings)
    return _settings_changed(await settings.save_settings(
        state.db, state.webhooks.guard, workspace_id=caller.workspace_id, plan=caller.plan,
        member_id=caller.member_id, request=body))


@blueprint.post("/rotate-secret")
@responds(settings.NewSecret)
@guarded(tier=ApiTier.FULL, scopes=SETTINGS, dashboard=True)
@answers(404)
async def rotate_secret():
    """Replace the signing secret; the new one is in this answer only and signs every event from now on."""
    state, caller = services(), current_principal()
    return _settings_changed(await settings.rotate_secret(
        state.db, workspace_id=caller.workspace_id, plan=caller.plan, member_id=caller.member_id))


@blueprint.post("/test")
@responds(ping.SentTestEvent)
@guarded(tier=ApiTier.FULL, scopes=SETTINGS, dashboard=True)
@answers(400, 404)
async def send_test():
    """Send a signed `webhook_test` event to the endpoint now, under the delivery rules; the answer carries
    each attempt (at most 3, so at most about 29 s)."""
    state, caller = services(), current_principal()
    reply = await ping.send_test_event(
        state.db, state.webhooks.guard, state.webhooks.transport, state.clock, workspace_id=caller.workspace_id,
        plan=caller.plan, actor=caller.author)
    return json_response(_refused_or(reply))


@blueprint.get("/deliveries")
@responds(delivery_log.DeliveryLogPage)
@guarded(tier=ApiTier.FULL, scopes=SETTINGS, dashboard=True)
@accepts(delivery_log.PARAMETERS)
async def deliveries():
    """The delivery log, newest first: each event with its attempts (time, status code or error, duration)."""
    state, caller = services(), current_principal()
    return json_response(await delivery_log.delivery_log(state.db, caller.workspace_id, request.args))


def _refused_or(reply: object) -> object:
    """The reply, unless it is a refusal: that is answered in the stable-code convention."""
    if isinstance(reply, settings.SettingsRefusal):
        raise ApiError(reply.status, reply.code, reply.message)
    return reply


def _settings_changed(reply: object):
    """Answer a settings change, telling the workspace's endpoint actor at once when it was made."""
    answer = json_response(_refused_or(reply))
    wake_endpoint(services().actors, current_principal().workspace_id, settings_changed=True)
    return answer
