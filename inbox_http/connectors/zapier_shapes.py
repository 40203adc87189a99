"""Zapier's shapes: an action's definition with its `inputFields` (key, label, type, required, helpText,
choices, list, dict, default, and `dynamic: "<source>.id.label"` for a dropdown fed by `/api/zapier/sources/
<source>`), and a dropdown's items (`{id, label}`), as a Zapier integration's triggers and actions take them."""

from __future__ import annotations

from typing import Any

import msgspec

from inbox_actors.use_cases.catalog import Action
from inbox_http.connectors.fields import Field, connector_actions, fields

_TYPES = {"string": "string", "text": "text", "integer": "integer", "number": "number", "boolean": "boolean"}


class ZapierDisplay(msgspec.Struct, frozen=True):
    label: str
    description: str


class ZapierOperation(msgspec.Struct, frozen=True):
    url: str
    """Where the action is performed: POST with the input fields as a JSON object."""
    inputFields: list[dict[str, Any]]


class ZapierAction(msgspec.Struct, frozen=True):
    key: str
    noun: str
    display: ZapierDisplay
    operation: ZapierOperation


class ZapierChoice(msgspec.Struct, frozen=True):
    """A dynamic dropdown's item: `id` is the value the action receives."""

    id: str | int
    label: str


def actions() -> list[ZapierAction]:
    return [ZapierAction(key=action.name, noun=_noun(action), display=ZapierDisplay(label=action.title,
                                                                                    description=action.description),
                         operation=ZapierOperation(url=f"/api/zapier/actions/{action.name}",
                                                   inputFields=[input_field(field) for field in fields(action)]))
            for action in connector_actions()]


def input_field(field: Field) -> dict[str, Any]:
    shape: dict[str, Any] = {"key": field.key, "label": field.label, "required": field.required,
                             "helpText": field.help}
    if field.kind == "object":
        shape["dict"] = True  # key/value pairs: the custom keys of an object
    else:
        shape["type"] = _TYPES[field.kind]
    if field.list:
        shape["list"] = True
    if field.choices:
        shape["choices"] = [{"value": choice, "label": choice, "sample": choice} for choice in field.choices]
    if field.source is not None:
        shape["dynamic"] = f"{field.source}.id.label"
        shape["altersDynamicFields"] = False
    if field.default is not None:
        shape["default"] = str(field.default)
    if field.example is not None:
        shape["placeholder"] = str(field.example)
    return shape


def _noun(action: Action) -> str:
    if "contact" in action.name or "tag" in action.name:
        return "Contact"
    if "conversation" in action.name:
        return "Chat"
    return "Message"
