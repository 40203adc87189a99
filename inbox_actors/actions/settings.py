"""The workspace's webhook settings: saving them, rotating the signing secret, sending a test event.

Settings are a per-workspace row written in one transaction (`webhooks/settings.py` holds the rules: the plan's
events, the endpoint address rules); the workspace's endpoint actor only reads them. So a change that was stored
wakes that actor at once, here, for every front door, instead of waiting for its next recheck.
"""

from __future__ import annotations

from inbox_actors.actions.caller import Caller
from inbox_actors.actions.deps import ActionDeps
from inbox_actors.actions.outcomes import Refused, reason_of_status
from inbox_actors.webhooks import ping, settings
from inbox_actors.webhooks.endpoint import wake_endpoint


async def save_webhook_settings(deps: ActionDeps, caller: Caller, request: settings.SaveSettings
                                ) -> settings.WebhookConfig | settings.WebhookConfigWithSecret | Refused:
    """Store `{endpoint_url, events, enabled, credit_alert_levels}`; the first save shows the signing secret."""
    return _changed(deps, caller, await settings.save_settings(
        deps.db, deps.webhook_guard, workspace_id=caller.workspace_id, plan=caller.plan,
        member_id=caller.member_id, request=request))


async def rotate_webhook_secret(deps: ActionDeps, caller: Caller) -> settings.NewSecret | Refused:
    """A new signing secret, shown in this answer only; every event from now on is signed with it."""
    return _changed(deps, caller, await settings.rotate_secret(
        deps.db, workspace_id=caller.workspace_id, plan=caller.plan, member_id=caller.member_id))


async def send_webhook_test(deps: ActionDeps, caller: Caller) -> ping.SentTestEvent | Refused:
    """A signed `webhook_test` event delivered now under the delivery rules, with each attempt."""
    return _refused_or(await ping.send_test_event(
        deps.db, deps.webhook_guard, deps.webhook_transport, deps.clock, workspace_id=caller.workspace_id,
        plan=caller.plan, actor=caller.author))


def _changed(deps: ActionDeps, caller: Caller, reply):
    answer = _refused_or(reply)
    if not isinstance(answer, Refused):
        wake_endpoint(deps.actors, caller.workspace_id, settings_changed=True)
    return answer


def _refused_or(reply):
    if isinstance(reply, settings.SettingsRefusal):
        return Refused(reason_of_status(reply.status), reply.message, reply.status, reply.code)
    return reply
