"""The connectors' hook and dropdown use cases at their own level: the runner's permission and argument checks,
then subscribing, listing, reading the log of and unsubscribing a platform's hook as an API key's caller (the
endpoint actor woken after each stored change, never after a refusal), and the dropdowns' choices (each platform
shapes them at its door). The routes' tests (e2e/test_connectors.py) check how they answer."""

from __future__ import annotations

import dataclasses

import pytest

from inbox_actors.access.credentials import CredentialCache
from inbox_actors.connectors.model import IssuedHook, Platform
from inbox_actors.platform import templates
from inbox_actors.use_cases import connector_hooks, connector_sources
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.outcomes import Done, Reason, Refused
from inbox_actors.use_cases.use_case import run
from inbox_actors.webhooks import endpoint
from inbox_actors.webhooks.address_guard import AddressGuard, parse_networks
from inbox_http.connectors.caller import action_caller
from tests import builders

TARGET = "http://127.0.0.1:9/hook"


class WakeRecorder:
    """The actors as the hooks' use cases reach them: only the webhook endpoint, told to wake."""

    def __init__(self) -> None:
        self.woken: list[tuple[str, object]] = []

    def ref(self, kind: str, key: str):
        assert kind == endpoint.KIND
        recorder = self

        class Handle:
            def tell_nowait(self, message: object) -> None:
                recorder.woken.append((key, message))

        return Handle()


@pytest.fixture
def hooks_deps(use_cases):
    """The harness's deps with loopback targets allowed and the endpoint's wake-ups recorded."""
    return dataclasses.replace(use_cases.deps, actors=WakeRecorder(),
                               webhook_guard=AddressGuard(parse_networks("127.0.0.0/8")))


async def key_caller(use_cases, scopes: tuple[str, ...] = ("all",), workspace_id: int | None = None) -> Caller:
    """An API key's caller, as the connector routes make it (the key's creator, an admin)."""
    workspace = use_cases.workspace_id if workspace_id is None else workspace_id
    admin = await builders.member(use_cases.db, workspace, "admin")
    issued = await builders.key(use_cases.db, workspace, admin, scopes)
    credential = await CredentialCache(use_cases.db).lookup(issued.key)
    assert credential is not None
    return action_caller(credential, Platform.ZAPIER)


async def test_a_caller_without_automations_is_refused_before_anything_happens(use_cases, hooks_deps):
    reader = await use_cases.member(permissions=["contacts"])
    contacts_key = await key_caller(use_cases, ("contacts",))
    for caller in (reader, contacts_key):
        for use_case, arguments in ((connector_hooks.LIST, {"platform": "zapier"}),
                                    (connector_hooks.SUBSCRIBE, {"platform": "zapier", "target_url": TARGET,
                                                                 "event": "handoff"}),
                                    (connector_hooks.UNSUBSCRIBE, {"platform": "make", "hook_id": 1})):
            outcome = await run(hooks_deps, caller, use_case, arguments)
            assert isinstance(outcome, Refused) and (outcome.status, outcome.code) == (403, "permission_denied")
            assert f"{use_case.name} needs the automations" in outcome.message
            assert not use_case.allows(caller)
    assert hooks_deps.actors.woken == []
    assert await use_cases.db.fetchval("SELECT count(*) FROM connector_hooks") == 0


async def test_arguments_are_checked_by_the_declared_structs(use_cases, hooks_deps):
    caller = await key_caller(use_cases)
    zero = await run(hooks_deps, caller, connector_hooks.UNSUBSCRIBE, {"platform": "zapier", "hook_id": 0})
    assert isinstance(zero, Refused) and (zero.status, zero.code) == (404, "not_found")  # an id no hook has
    platform = await run(hooks_deps, caller, connector_hooks.LIST, {"platform": "ifttt"})
    assert isinstance(platform, Refused) and (platform.code, platform.reason) == ("invalid_arguments", Reason.INVALID)
    missing = await run(hooks_deps, caller, connector_hooks.SUBSCRIBE, {"platform": "zapier", "event": "handoff"})
    assert isinstance(missing, Refused) and missing.code == "invalid_arguments"
    # The rules the hooks themselves state, in their words, with nothing stored or woken.
    for arguments, code in (({"target_url": TARGET, "event": "nope"}, "invalid_event"),
                            ({"target_url": "http://10.0.0.1/hook", "event": "handoff"}, "invalid_target_url")):
        outcome = await run(hooks_deps, caller, connector_hooks.SUBSCRIBE, {"platform": "make", **arguments})
        assert isinstance(outcome, Refused) and (outcome.status, outcome.code) == (400, code), outcome
    growth = await key_caller(use_cases, workspace_id=await builders.workspace(use_cases.db, "growth"))
    scale_only = await run(hooks_deps, growth, connector_hooks.SUBSCRIBE,
                           {"platform": "zapier", "target_url": TARGET, "event": "conversation_resolved"})
    assert isinstance(scale_only, Refused) and (scale_only.status, scale_only.code) == (403, "event_requires_scale")
    assert hooks_deps.actors.woken == []
    assert await use_cases.db.fetchval("SELECT count(*) FROM connector_hooks") == 0


async def test_a_key_subscribes_lists_reads_the_log_of_and_unsubscribes_its_platform_s_hook(use_cases, hooks_deps):
    caller = await key_caller(use_cases)
    made = await run(hooks_deps, caller, connector_hooks.SUBSCRIBE,
                     {"platform": Platform.MAKE, "target_url": TARGET, "event": "message_received"})
    assert isinstance(made, Done) and isinstance(made.data, IssuedHook)
    hook = made.data
    assert hook.secret.startswith("whsec_") and hook.key_id == int(caller.author.removeprefix("api_key:"))
    assert hooks_deps.actors.woken == [(str(caller.workspace_id), endpoint.Wake(settings_changed=True))]

    listed = await run(hooks_deps, caller, connector_hooks.LIST, {"platform": "make"})
    other = await run(hooks_deps, caller, connector_hooks.LIST, {"platform": "zapier"})
    assert isinstance(listed, Done) and [h.id for h in listed.data.data] == [hook.id]
    assert isinstance(other, Done) and other.data.data == []
    log = await run(hooks_deps, caller, connector_hooks.DELIVERIES, {"platform": "make", "hook_id": hook.id})
    assert isinstance(log, Done) and log.data.data == [] and log.data.next_cursor is None
    bad = await run(hooks_deps, caller, connector_hooks.DELIVERIES,
                    {"platform": "make", "hook_id": hook.id, "args": {"outcome": "lost"}})
    assert isinstance(bad, Refused) and (bad.status, bad.code) == (400, "invalid_outcome")
    elsewhere = await run(hooks_deps, caller, connector_hooks.DELIVERIES, {"platform": "zapier", "hook_id": hook.id})
    assert isinstance(elsewhere, Refused) and (elsewhere.status, elsewhere.code) == (404, "not_found")

    gone = await run(hooks_deps, caller, connector_hooks.UNSUBSCRIBE, {"platform": "make", "hook_id": hook.id})
    assert isinstance(gone, Done) and gone.data.id == hook.id and len(hooks_deps.actors.woken) == 2
    again = await run(hooks_deps, caller, connector_hooks.UNSUBSCRIBE, {"platform": "make", "hook_id": hook.id})
    assert isinstance(again, Refused) and (again.status, again.code, again.reason) == (404, "not_found",
                                                                                     Reason.NOT_FOUND)
    assert len(hooks_deps.actors.woken) == 2, "a refusal wakes nothing"


async def test_only_an_api_key_subscribes_a_hook(use_cases, hooks_deps):
    admin = await use_cases.member(role="admin")
    assert connector_hooks.SUBSCRIBE.allows(admin)
    outcome = await run(hooks_deps, admin, connector_hooks.SUBSCRIBE,
                        {"platform": "zapier", "target_url": TARGET, "event": "handoff"})
    assert isinstance(outcome, Refused) and (outcome.status, outcome.code) == (409, "api_key_required")
    assert await use_cases.db.fetchval("SELECT count(*) FROM connector_hooks") == 0


async def test_the_dropdowns_need_their_data_s_permission_and_answer_choices(use_cases):
    await templates.add_template(use_cases.db, workspace_id=use_cases.workspace_id, name="order_update",
                                 language="en", body="Hi {{1}}")
    tagger = await use_cases.member(permissions=["contacts"])
    assert connector_sources.TAG_CHOICES.allows(tagger)
    for use_case in (connector_sources.TEMPLATE_CHOICES, connector_sources.MEMBER_CHOICES):
        refused = await use_cases.run(tagger, use_case, {})
        assert isinstance(refused, Refused) and refused.code == "permission_denied", use_case.name
    bad = await use_cases.run(tagger, connector_sources.TAG_CHOICES, {"extra": 1})
    assert isinstance(bad, Refused) and bad.code == "invalid_arguments"

    admin = await use_cases.member(role="admin")
    template_choices = await use_cases.run(admin, connector_sources.TEMPLATE_CHOICES, {})
    member_choices = await use_cases.run(admin, connector_sources.MEMBER_CHOICES, {})
    assert isinstance(template_choices, Done) and [c.value for c in template_choices.data] == ["order_update"]
    assert isinstance(member_choices, Done) and admin.member_id in [c.value for c in member_choices.data]
    assert set(connector_sources.BY_SOURCE) == {"templates", "members", "tags"}
