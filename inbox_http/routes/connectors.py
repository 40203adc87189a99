"""The automation connectors, `/api/zapier/*` and `/api/make/*`: the core API (Growth and Scale; Starter 403
api_not_in_plan), with an API key. Both prefixes are served by the same handlers; what differs is the shape of
the action definitions and dropdown items each platform takes (`inbox_http.connectors.zapier_shapes`,
`make_shapes`).

    GET    …/me                          the authentication test: workspace, key, its creator, plan
    GET    …/triggers                    the trigger catalog (scope automations, reads also automations:read)
    GET    …/triggers/{event}/samples    the latest items of an event, or its example (polling, samples)
    GET    …/hooks                       the platform's REST hooks
    POST   …/hooks                       subscribe {target_url, event}: 201, the hook and its secret (once)
    DELETE …/hooks/{id}                  unsubscribe
    GET    …/hooks/{id}/deliveries       the hook's delivery log: each event sent, every attempt
    GET    …/actions                     the actions and their fields, in the platform's shape
    POST   …/actions/{name}              run one (its catalog permissions; the key's creator acts)
    GET    …/sources/{templates,members,tags}   dynamic dropdowns

The hooks and the dropdowns bind use cases (`inbox_actors.use_cases.connector_hooks`, `.connector_sources`: their
permissions, and the hooks' write with the webhook endpoint's wake-up), the actions run through the action catalog.
Stable-code errors throughout; what each call refuses is in `inbox_actors.connectors.hooks` and
`inbox_http.connectors.action_calls`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from quart import Blueprint, request

from inbox_actors.connectors import hooks, samples
from inbox_actors.connectors.connection import connection
from inbox_actors.connectors.model import (
    Connection,
    ConnectorRefusal,
    HookList,
    HookView,
    IssuedHook,
    Platform,
    TriggerList,
)
from inbox_actors.domain import events
from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging.parameter_catalog import QueryParameter
from inbox_actors.use_cases import (
    connector_hooks,
    connector_sources,
    connector_triggers,
)
from inbox_actors.use_cases.catalog import Action, input_schema
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import run
from inbox_actors.webhooks import delivery_log
from inbox_http.connectors import action_calls, make_shapes, zapier_shapes
from inbox_http.connectors.caller import action_caller
from inbox_http.connectors.fields import connector_actions as catalog_actions
from inbox_http.contract import answers, in_path, takes
from inbox_http.dependencies import dependencies
from inbox_http.encoding import json_response
from inbox_http.errors import ApiError
from inbox_http.guard import (
    accepts,
    current_caller,
    current_credential,
    guarded,
    responds,
)
from inbox_http.json_body import read_json_body
from inbox_http.outcome_answers import answer, run_route

zapier = Blueprint("zapier", __name__, url_prefix="/api/zapier")
make = Blueprint("make", __name__, url_prefix="/api/make")
blueprints = (zapier, make)

_EVENT = {"type": "string", "enum": list(events.ALL_EVENTS), "example": events.MESSAGE_RECEIVED}
_SAMPLE_LIMIT = QueryParameter("limit", "integer", f"1 to {samples.MAX_LIMIT}, default {samples.DEFAULT_LIMIT}",
                               rules={"minimum": 1, "maximum": samples.MAX_LIMIT})


class SampleItem(msgspec.Struct, frozen=True):
    """A trigger's item: the webhook envelope with `id` (the correlation id; `example_<event>` for the
    documented example), as a hook delivery's body carries it."""

    id: str
    event: str
    sent_at: datetime
    correlation_id: str
    actor: str
    data: dict[str, Any]


def _both(rule: str, **options):
    """Serve a handler under both prefixes."""

    def decorate(view):
        for blueprint in blueprints:
            blueprint.add_url_rule(rule, view_func=view, **options)
        return view

    return decorate


def _platform() -> Platform:
    return Platform(request.blueprint)


def _refused_or(answer, status: int = 200):
    if isinstance(answer, ConnectorRefusal):
        extra = {"details": answer.details} if answer.details is not None else {}
        raise ApiError(answer.status, answer.code, answer.message, **extra)
    return json_response(answer, status)


# -- the connection ------------------------------------------------------------------------------------------


@_both("/me", methods=["GET"])
@responds(Connection)
@guarded(tier=ApiTier.CORE)
@answers(404)
async def me():
    """The authentication test: the workspace, the key and the member it acts as, the plan (the connection's
    label)."""
    found = await connection(dependencies().db, current_credential(), _platform())
    if found is None:
        raise ApiError(404, "not_found", "The key is gone.")
    return json_response(found)


# -- triggers ------------------------------------------------------------------------------------------------


@_both("/triggers", methods=["GET"])
@responds(TriggerList)
@guarded(tier=ApiTier.CORE, use_case=connector_triggers.TRIGGERS)
async def list_triggers():
    """The trigger catalog: each event's key, label, plan, whether this plan offers it, and an example item."""
    return await run_route(connector_triggers.TRIGGERS)


@_both("/triggers/<event>/samples", methods=["GET"])
@responds(list[SampleItem])
@guarded(tier=ApiTier.CORE, use_case=connector_triggers.SAMPLES)
@accepts((_SAMPLE_LIMIT,))
@answers(404)
@in_path(event=_EVENT)
async def trigger_samples(event: str):
    """The latest items of a trigger's event, newest first, each with a stable id; the example when none yet."""
    return await run_route(connector_triggers.SAMPLES, event=event, limit=request.args.get("limit"))


# -- REST hooks ----------------------------------------------------------------------------------------------


@_both("/hooks", methods=["GET"])
@responds(HookList)
@guarded(tier=ApiTier.CORE, use_case=connector_hooks.LIST)
async def list_hooks():
    """This platform's hooks in the workspace, newest first (never their secrets)."""
    return await run_route(connector_hooks.LIST, platform=_platform())


@_both("/hooks", methods=["POST"])
@responds(IssuedHook, 201)
@guarded(tier=ApiTier.CORE, use_case=connector_hooks.SUBSCRIBE)
@takes(hooks.Subscribe)
@answers(409)
async def subscribe():
    """Subscribe a target URL to an event: 201 with the hook's id and its signing secret, shown this once."""
    body = await read_json_body(hooks.Subscribe)
    return await run_route(connector_hooks.SUBSCRIBE, 201, platform=_platform(), target_url=body.target_url,
                           event=body.event)


@_both("/hooks/<id:hook_id>", methods=["DELETE"])
@responds(HookView)
@guarded(tier=ApiTier.CORE, use_case=connector_hooks.UNSUBSCRIBE)
@answers(404)
async def unsubscribe(hook_id: int):
    """Unsubscribe: nothing more is sent to the hook, its pending deliveries included."""
    return await run_route(connector_hooks.UNSUBSCRIBE, platform=_platform(), hook_id=hook_id)


@_both("/hooks/<id:hook_id>/deliveries", methods=["GET"])
@responds(delivery_log.DeliveryLogPage)
@guarded(tier=ApiTier.CORE, use_case=connector_hooks.DELIVERIES)
@accepts(delivery_log.PARAMETERS)
@answers(404)
async def hook_deliveries(hook_id: int):
    """The hook's delivery log, newest first: each event sent to it with every attempt (time, status code or error,
    duration); filters `event`, `outcome`, `limit`, `cursor` as for the workspace's webhook deliveries."""
    return await run_route(connector_hooks.DELIVERIES, platform=_platform(), hook_id=hook_id,
                           args=request.args.to_dict())


# -- actions -------------------------------------------------------------------------------------------------


@zapier.get("/actions")
@responds(list[zapier_shapes.ZapierAction])
@guarded(tier=ApiTier.CORE)
async def zapier_actions():
    """The actions with their Zapier inputFields (dynamic dropdowns name `…/sources/<source>`)."""
    return json_response(zapier_shapes.actions())


@make.get("/actions")
@responds(list[make_shapes.MakeModule])
@guarded(tier=ApiTier.CORE)
async def make_actions():
    """The actions as Make modules with their parameters (dropdowns as `rpc://<source>`)."""
    return json_response(make_shapes.actions())


def _action_view(action: Action):
    async def perform():
        state, credential = dependencies(), current_credential()
        caller = action_caller(credential, _platform())
        answer = await action_calls.perform(state.use_case_deps, caller, action, await request.get_data())
        return _refused_or(answer)

    perform.__name__ = f"action_{action.name}"
    perform.__doc__ = f"{action.title}: {action.description}"
    view = guarded(tier=ApiTier.CORE, use_case=action.use_case)(perform)
    view = takes(input_schema(action))(view)
    view = answers(404, 409, 503)(view)
    return responds(dict)(view)


for _action in catalog_actions():
    _both(f"/actions/{_action.name}", methods=["POST"], endpoint=f"action_{_action.name}")(_action_view(_action))


# -- dynamic dropdowns ---------------------------------------------------------------------------------------

def _source_view(name: str, platform: Platform):
    use_case = connector_sources.BY_SOURCE[name]

    async def items():
        outcome = await run(dependencies().use_case_deps, current_caller(), use_case, {})
        if isinstance(outcome, Refused):
            return answer(outcome)
        if platform is Platform.ZAPIER:
            return json_response([zapier_shapes.ZapierChoice(id=c.value, label=c.label) for c in outcome.data])
        return json_response([make_shapes.MakeOption(label=c.label, value=c.value) for c in outcome.data])

    items.__name__ = f"source_{name}"
    items.__doc__ = f"The {name} dropdown: each item's {'id' if platform is Platform.ZAPIER else 'value'} is " \
                    f"what the action's field takes."
    shape = zapier_shapes.ZapierChoice if platform is Platform.ZAPIER else make_shapes.MakeOption
    return responds(list[shape])(guarded(tier=ApiTier.CORE, use_case=use_case)(items))


for _name in connector_sources.BY_SOURCE:
    zapier.add_url_rule(f"/sources/{_name}", view_func=_source_view(_name, Platform.ZAPIER), methods=["GET"])
    make.add_url_rule(f"/sources/{_name}", view_func=_source_view(_name, Platform.MAKE), methods=["GET"])
