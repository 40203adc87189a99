"""Make's shapes: an action module's definition with its `parameters` (name, type, label, required, help,
default, `options` as a list or `rpc://<source>` for a dropdown fed by `/api/make/sources/<source>`, `spec` for an
array's items), and a dropdown's items (`{label, value}`), as a Make custom app's modules and RPCs take them."""

from __future__ import annotations

from typing import Any

import msgspec

from inbox_http.connectors.fields import Field, connector_actions, fields

_TYPES = {"string": "text", "text": "text", "integer": "integer", "number": "number", "boolean": "boolean",
          "object": "any"}


class MakeModule(msgspec.Struct, frozen=True):
    name: str
    label: str
    description: str
    typeOfModule: str
    url: str
    """Where the action is performed: POST with the parameters as a JSON object."""
    parameters: list[dict[str, Any]]


class MakeOption(msgspec.Struct, frozen=True):
    """A dynamic dropdown's (RPC's) item: `value` is what the module receives."""

    label: str
    value: str | int


def actions() -> list[MakeModule]:
    return [MakeModule(name=action.name, label=action.title, description=action.description,
                       typeOfModule="action", url=f"/api/make/actions/{action.name}",
                       parameters=[parameter(field) for field in fields(action)])
            for action in connector_actions()]


def parameter(field: Field) -> dict[str, Any]:
    item = _item(field)
    if not field.list:
        shape: dict[str, Any] = {"name": field.key, "label": field.label, **item}
    elif "options" in item:
        shape = {"name": field.key, "label": field.label, **item, "multiple": True}
    else:
        shape = {"name": field.key, "label": field.label, "type": "array", "spec": {"label": field.label, **item}}
    shape["required"] = field.required
    shape["help"] = field.help if field.kind != "object" else (
        f"{field.help} An object of custom keys: map a collection, or write it as JSON.")
    if field.default is not None:
        shape["default"] = field.default
    return shape


def _item(field: Field) -> dict[str, Any]:
    if field.source is not None:
        return {"type": "select", "options": f"rpc://{field.source}"}
    if field.choices:
        return {"type": "select", "options": [{"label": choice, "value": choice} for choice in field.choices]}
    item: dict[str, Any] = {"type": _TYPES[field.kind]}
    if field.kind == "text":
        item["multiline"] = True
    return item
