"""A connector's REST hooks as use cases: subscribing and unsubscribing (Zapier's performSubscribe and
performUnsubscribe, Make's attach and detach), the platform's hooks, a hook's delivery log.

The rules are `connectors/hooks.py`'s; a hook is delivered by the workspace's webhook endpoint actor, which reads
the hooks only when it looks at its outbox, so a stored change wakes it here, for every front door, instead of
waiting for its next recheck (as a webhook settings change does, `webhook_settings.py`). The hook's `platform`
is an argument: each platform sees and removes only its own hooks.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from inbox_actors.connectors import hooks
from inbox_actors.connectors.model import ConnectorRefusal, HookList, Platform
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import BIGINT_MAX
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused, reason_of_status
from inbox_actors.use_cases.use_case import Kind, UseCase, rule
from inbox_actors.use_cases.webhook_settings import woken

# An id no hook can have (0: the URL's digits beyond any row, `IdConverter`) names no hook.
HookId = Annotated[int, msgspec.Meta(ge=1, le=BIGINT_MAX, extra=rule("not_found", "No such hook in this "
                                                                                  "workspace.", 404))]


class PlatformHooks(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    platform: Platform


class SubscribeHook(hooks.Subscribe, frozen=True, forbid_unknown_fields=True):
    """The subscription as the routes' body gives it (its rules are judged by `hooks.subscribe`, in its words),
    for the platform whose hook it is."""

    platform: Platform


class OneHook(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    platform: Platform
    hook_id: HookId


class HookDeliveries(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    platform: Platform
    hook_id: HookId
    args: dict[str, str] = {}
    """The log's filters and paging as query parameters (`event`, `outcome`, `limit`, `cursor`), judged by the
    delivery log as the workspace endpoint's log judges them."""


async def _list(deps: UseCaseDeps, caller: Caller, a: PlatformHooks) -> Outcome:
    return Done(HookList(await hooks.list_hooks(deps.db, platform=a.platform, workspace_id=caller.workspace_id)))


async def _subscribe(deps: UseCaseDeps, caller: Caller, a: SubscribeHook) -> Outcome:
    key_id = _key_of(caller)
    if key_id is None:
        return Refused(Reason.REFUSED, "Only an API key subscribes a hook: a hook lives as long as the key that "
                       "made it.", 409, "api_key_required")
    issued = await hooks.subscribe(deps.db, deps.webhook_guard, platform=a.platform,
                                   workspace_id=caller.workspace_id, plan=caller.plan, key_id=key_id, request=a)
    return woken(deps, caller, _outcome(issued))


async def _unsubscribe(deps: UseCaseDeps, caller: Caller, a: OneHook) -> Outcome:
    removed = await hooks.unsubscribe(deps.db, platform=a.platform, workspace_id=caller.workspace_id,
                                      hook_id=a.hook_id)
    return woken(deps, caller, _outcome(removed))


async def _deliveries(deps: UseCaseDeps, caller: Caller, a: HookDeliveries) -> Outcome:
    return _outcome(await hooks.hook_deliveries(deps.db, platform=a.platform, workspace_id=caller.workspace_id,
                                                hook_id=a.hook_id, args=a.args))


def _outcome(reply: object) -> Outcome:
    if isinstance(reply, ConnectorRefusal):
        return Refused(reason_of_status(reply.status), reply.message, reply.status, reply.code,
                       data={"details": reply.details} if reply.details is not None else None)
    return Done(reply)


def _key_of(caller: Caller) -> int | None:
    """The id of the API key the caller acts through (its author, `api_key:<id>`); None for any other caller."""
    kind, _, key_id = caller.author.partition(":")
    return int(key_id) if kind == "api_key" and key_id.isascii() and key_id.isdigit() else None


# -- the declarations ----------------------------------------------------------------------------------------

LIST = UseCase("list_connector_hooks", PlatformHooks, permissions.AUTOMATIONS, Kind.READ, _list)
DELIVERIES = UseCase("connector_hook_deliveries", HookDeliveries, permissions.AUTOMATIONS, Kind.READ, _deliveries)
SUBSCRIBE = UseCase("subscribe_connector_hook", SubscribeHook, permissions.AUTOMATIONS, Kind.WRITE, _subscribe)
UNSUBSCRIBE = UseCase("unsubscribe_connector_hook", OneHook, permissions.AUTOMATIONS, Kind.WRITE, _unsubscribe)
