"""The connectors' pure parts: a key's effective permissions, the fields read from the catalog's JSON Schema and
each platform's shape of them, the trigger catalog and the refusals' codes."""

from __future__ import annotations

import itertools

import msgspec
import pytest

from inbox_actors.connectors import trigger_catalog
from inbox_actors.domain import events
from inbox_actors.domain import scopes as scope_rules
from inbox_actors.domain.plans import Plan
from inbox_actors.use_cases import catalog, contacts
from inbox_actors.use_cases.caller import effective_permissions
from inbox_actors.use_cases.outcomes import Reason as Failure
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.outcomes import reason_of_status as failure_of_status
from inbox_http.connectors import action_calls, fields, make_shapes, zapier_shapes

SAMPLES = (("all",), ("inbox",), ("inbox:read",), ("contacts", "templates:read"), ("whatsapp_api",),
           ("inbox", "inbox_assigned_only"), ("analytics:read", "contacts:read"))


@pytest.mark.parametrize("key,member", list(itertools.product(SAMPLES, SAMPLES)))
def test_effective_permissions_cover_exactly_what_both_sides_cover(key, member):
    granted = effective_permissions(key, member)
    for base in scope_rules.SCOPES:
        if base == "inbox_assigned_only":
            continue
        for method in ("GET", "POST"):
            both = scope_rules.covers(key, (base,), method) and scope_rules.covers(member, (base,), method)
            assert scope_rules.covers(granted, (base,), method) == both, (base, method, granted)
    assert ("inbox_assigned_only" in granted) == ("inbox_assigned_only" in key + member)


def test_every_connector_action_is_in_the_catalog_with_fields_and_no_schema_references():
    offered = fields.connector_actions()
    assert [a.name for a in offered] == [n for n in fields.ACTION_NAMES if n in catalog.BY_NAME]
    for action in offered:
        assert "$defs" not in catalog.input_schema(action), "a request body schema cannot point at $defs"
        assert fields.fields(action)
    assert fields.find_action("list_conversations") is None, "reads are not connector actions"


def test_zapier_input_fields_follow_the_schema():
    by_key = {a.key: a for a in zapier_shapes.actions()}
    template = {f["key"]: f for f in by_key["send_template"].operation.inputFields}
    assert template["to"]["required"] and template["to"]["type"] == "string" and template["to"]["placeholder"]
    assert template["template"]["dynamic"] == "templates.id.label"
    assert template["parameters"]["list"] and not template["parameters"]["required"]
    assert template["language"]["default"] == "en"
    text = {f["key"]: f for f in by_key["send_text"].operation.inputFields}["text"]
    assert text["type"] == "text", "free text with line breaks is a multi-line box"
    attributes = {f["key"]: f for f in by_key["create_contact"].operation.inputFields}["attributes"]
    assert attributes["dict"] is True and "type" not in attributes


def test_make_parameters_follow_the_schema():
    by_name = {m.name: m for m in make_shapes.actions()}
    transfer = {p["name"]: p for p in by_name["transfer_conversation"].parameters}
    assert transfer["to_user_id"] == {"name": "to_user_id", "label": "Team member", "type": "select",
                                      "options": "rpc://members", "required": True,
                                      "help": transfer["to_user_id"]["help"]}
    template = {p["name"]: p for p in by_name["send_template"].parameters}
    assert template["parameters"]["type"] == "array" and template["parameters"]["spec"]["type"] == "text"
    assert template["language"]["default"] == "en" and template["to"]["type"] == "text"
    assert {p["name"]: p for p in by_name["send_text"].parameters}["text"]["multiline"] is True


def test_every_event_is_a_trigger_with_an_example_and_the_plan_decides_availability():
    growth = {t.key: t for t in trigger_catalog.triggers(Plan.GROWTH)}
    assert list(growth) == list(events.ALL_EVENTS)
    assert [k for k, t in growth.items() if t.available] == list(events.CORE_EVENTS)
    assert all(t.available for t in trigger_catalog.triggers(Plan.SCALE))
    for trigger in growth.values():
        assert trigger.sample["id"] == f"example_{trigger.key}" and trigger.sample["event"] == trigger.key
        assert "at" in trigger.sample["data"]


@pytest.mark.parametrize("failure,status,code", [
    (Failure.INVALID, 400, "invalid_arguments"),
    (Failure.PERMISSION, 403, "permission_denied"),
    (Failure.NOT_FOUND, 404, "not_found"),
    (Failure.REFUSED, 409, "action_refused"),
    (Failure.UNAVAILABLE, 503, "service_unavailable"),
])
def test_a_failed_action_s_kind_becomes_a_stable_code(failure, status, code):
    refusal = action_calls.refusal_of(Refused(failure, "Permission denied: the member this key acts as lacks it.",
                                              data={"errorCode": 131047}))
    assert (refusal.status, refusal.code) == (status, code)
    assert refusal.message == "Permission denied: the member this key acts as lacks it."
    # Only a refusal carries the platform's error as details.
    assert refusal.details == ({"errorCode": 131047} if status == 409 else None)


@pytest.mark.parametrize("status,failure", [
    (400, Failure.INVALID), (403, Failure.PERMISSION), (404, Failure.NOT_FOUND), (409, Failure.REFUSED),
    (412, Failure.REFUSED), (503, Failure.UNAVAILABLE),
])
def test_a_refusal_s_http_status_says_its_failure_kind(status, failure):
    assert failure_of_status(status) is failure


def test_the_catalog_schema_states_the_contact_card_s_rules():
    update = catalog.input_schema(catalog.BY_NAME["update_contact"])
    assert {"required": ["email"], "properties": {"email": {"not": {"type": "null"}}}} in update["anyOf"]
    attributes = update["properties"]["attributes"]["anyOf"][0]
    assert attributes["minProperties"] == 1 and attributes["propertyNames"]["maxLength"] == 64
    assert {"type": "null"} in attributes["additionalProperties"]["anyOf"], "null removes an attribute"
    create = catalog.input_schema(catalog.BY_NAME["create_contact"])
    assert {"type": "null"} not in create["properties"]["attributes"]["anyOf"][0]["additionalProperties"]["anyOf"]
    assert create["properties"]["name"]["pattern"].startswith("^[^")
    assert "anyOf" not in catalog.input_schema(catalog.BY_NAME["add_tag"])
    # What the schema refuses, decoding refuses too.
    for bad in ({"phone": "919876543210", "name": "   "}, {"phone": "919876543210", "name": "A", "attributes": {"": 1}},
                {"phone": "919876543210", "name": "A", "attributes": {"n": 2**60}}):
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert(bad, contacts.CreateContactArgs)
