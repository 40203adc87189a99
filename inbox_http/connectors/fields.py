"""The connectors' actions and their fields, read from the action catalog MCP also runs
(`inbox_actors.use_cases.catalog`): which catalog actions a Zapier or Make user gets, and each argument of their JSON
Schema `inputSchema` as a platform-neutral `Field` (kind, required, help, choices, list, dropdown source) that
`zapier_shapes` and `make_shapes` turn into each platform's field definitions."""

from __future__ import annotations

from typing import Any

import msgspec

from inbox_actors.use_cases import catalog
from inbox_actors.use_cases.catalog import Action

# What a no-code user does with the inbox: send, keep contacts, tag, and move chats through the team.
ACTION_NAMES = ("send_text", "send_template", "create_contact", "update_contact", "add_tag", "remove_tag",
                "claim_conversation", "release_conversation", "transfer_conversation", "resolve_conversation")

# Arguments whose values come from a dynamic dropdown: the source (`…/sources/{name}`) that lists them.
SOURCES = ("templates", "members", "tags")
_SOURCE_OF = {"template": "templates", "tag": "tags", "tags": "tags", "to_user_id": "members"}
_LABELS = {"to": "Phone", "phone": "Phone", "to_user_id": "Team member", "template": "Template",
           "parameters": "Template parameters", "attributes": "Custom attributes"}
# Longer than this, or taking line breaks: a multi-line text box.
_ONE_LINE_LIMIT = 1024


class Field(msgspec.Struct, frozen=True):
    key: str
    label: str
    kind: str
    """string, text (multi-line), integer, number, boolean, object (a dict of custom keys)."""
    required: bool
    help: str
    list: bool = False
    """An array of `kind`."""
    choices: tuple[str, ...] = ()
    source: str | None = None
    """The dropdown source of its values (templates, members, tags)."""
    default: Any = None
    example: Any = None


def connector_actions() -> list[Action]:
    """The catalog's actions the connectors offer, in `ACTION_NAMES` order (one the catalog lacks is left out)."""
    return [catalog.BY_NAME[name] for name in ACTION_NAMES if name in catalog.BY_NAME]


def find_action(name: str) -> Action | None:
    return catalog.BY_NAME.get(name) if name in ACTION_NAMES else None


def fields(action: Action) -> list[Field]:
    schema = catalog.input_schema(action)
    required = set(schema.get("required", ()))
    return [_field(key, prop, key in required, schema.get("$defs", {}))
            for key, prop in schema["properties"].items()]


def _field(key: str, prop: dict, required: bool, defs: dict) -> Field:
    default = prop.get("default")
    prop = _resolved(_without_null(prop), defs)
    is_list = prop.get("type") == "array"
    item = _resolved(_without_null(prop.get("items", {})), defs) if is_list else prop
    kind = _kind(item)
    help_text = prop.get("description") or item.get("description") or ""
    if "pattern" in item and kind == "string" and key in ("to", "phone"):
        help_text += " Example: 919876543210."
    examples = prop.get("examples") or item.get("examples")
    return Field(key=key, label=_LABELS.get(key, key.replace("_", " ").capitalize()), kind=kind, required=required,
                 help=help_text, list=is_list, choices=tuple(item.get("enum", ())), source=_SOURCE_OF.get(key),
                 default=default if default not in (None, []) else None,
                 example=examples[0] if examples else None)


def _without_null(prop: dict) -> dict:
    """An optional argument's schema (`anyOf: [its schema, null]`) as its schema, its description kept."""
    options = [option for option in prop.get("anyOf", ()) if option.get("type") != "null"]
    if len(options) == 1:
        return {**{k: v for k, v in prop.items() if k != "anyOf"}, **options[0]}
    return prop


def _resolved(prop: dict, defs: dict) -> dict:
    reference = prop.get("$ref")
    if reference is None:
        return prop
    return {**defs[reference.rsplit("/", 1)[1]], **{k: v for k, v in prop.items() if k != "$ref"}}


def _kind(prop: dict) -> str:
    kind = prop.get("type")
    if kind in ("integer", "number", "boolean", "object"):
        return kind
    if kind is None and "anyOf" in prop:  # an attribute value: text, a number or a yes/no
        return "string"
    multi_line = r"\x0e" in prop.get("pattern", "") or prop.get("maxLength", 0) > _ONE_LINE_LIMIT
    return "text" if multi_line else "string"
