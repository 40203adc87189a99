"""The machine-readable description of the API (`http/openapi.json`), generated from the handlers' own
declarations: path, method, policy (tier, scopes, error convention) and response type.

Regenerate with `python -m inbox_http.openapi > http/openapi.json`; a unit test fails while it is stale.

`python -m inbox_http.openapi --documented > http/documented-api.json` writes the part integrations rely on: the
calls the spec documents and the schemas they use. The spec promises that a change to a documented call is
announced in a changelog, so a test holds that file to the code and its digest (`documented_digest`) to the
newest entry of `CHANGELOG.md`.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import typing

import msgspec
from quart import Quart

from inbox_http.contract import path_schema
from inbox_http.route_table import route_table

API_VERSION = "1.0.0"

_STABLE_ERROR = {
    "type": "object", "required": ["error", "message"],
    "properties": {
        "error": {"type": "string", "description": "snake_case code"},
        "message": {"type": "string"},
        "requiredPermission": {"type": "string"},
        "keyScopes": {"type": "array", "items": {"type": "string"}},
    },
}
_SENTENCE_ERROR = {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}


def build_document(app: Quart) -> dict:
    views = {row["endpoint"]: app.view_functions[row["endpoint"]] for row in route_table(app)}
    declared = {getattr(view, name) for view in views.values() for name in ("response_type", "request_body")
                if _is_declared_type(getattr(view, name, None))}
    schemas, components = msgspec.json.schema_components(sorted(declared, key=_type_name),
                                                         ref_template="#/components/schemas/{name}")
    schema_of = dict(zip(sorted(declared, key=_type_name), schemas, strict=True))
    rules = {rule.endpoint: rule.rule for rule in app.url_map.iter_rules()}

    paths: dict[str, dict] = {}
    for row in route_table(app):
        view = views[row["endpoint"]]
        operation = _operation(row, view, schema_of, _path_converters(app, rules[row["endpoint"]]))
        paths.setdefault(row["path"], {})[row["method"].lower()] = operation
    components["StableError"] = _STABLE_ERROR
    components["SentenceError"] = _SENTENCE_ERROR
    return {
        "openapi": "3.1.0",
        "info": {"title": "Inbox Actors API", "version": API_VERSION},
        "servers": [{"url": "{base_url}", "variables": {"base_url": {"default": "http://127.0.0.1:8080"}}}],
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": dict(sorted(components.items())),
            "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}},
        },
    }


def _is_declared_type(value) -> bool:
    """A body type the document describes: a struct (not `str`), or a bare array of one (`list[Struct]`)."""
    if typing.get_origin(value) is list:
        return True
    return isinstance(value, type) and value is not str


def _type_name(value) -> str:
    if typing.get_origin(value) is list:
        return f"list[{typing.get_args(value)[0].__name__}]"
    return value.__name__


_STABLE = {"$ref": "#/components/schemas/StableError"}
_SENTENCE = {"$ref": "#/components/schemas/SentenceError"}
_EITHER = {"anyOf": [_STABLE, _SENTENCE]}

# What each error status means, whichever route answers it.
_ERROR_ANSWERS = {
    400: "Bad input: a parameter or the body is malformed (stable routes: invalid_* naming it, since_after_to, "
         "window_too_large; sentence routes: a sentence)",
    401: "No credential, or not the one this call takes",
    402: "The workspace's credits do not cover the send (nothing was sent or debited)",
    403: "Refused by the auth ladder, or by a rule of the call",
    404: "No such item in the workspace (not_found)",
    409: "Conflicts with the item's state or a limit",
    412: "version_conflict: the item has moved on from the version named",
    413: "payload_too_large: the body is over 1 MiB (8 MiB for bulk-send)",
    422: "The Idempotency-Key was used with a different request (nothing done)",
    429: "Over the per-IP ceiling (sentence) or the key's limit (rate_limited)",
    500: "Service side (internal_error, or the sentence of the sentence convention); retry with backoff",
    502: "The platform refused the send (send_failed with its errorCode)",
    503: "Unavailable: a dependency is down (the database, for a moment); retry after Retry-After",
}


def _operation(row: dict, view, schema_of: dict, converters: dict[str, str]) -> dict:
    def answer(description: str, schema: dict, media: str = "application/json") -> dict:
        return {"description": description, "content": {media: {"schema": schema}}}

    success_status = getattr(view, "response_status", 200)
    response_type = getattr(view, "response_type", None)
    if response_type is str:
        success = answer("OK", {"type": "string"}, "text/plain")
    elif response_type is bytes:
        success = {"description": "OK", "content": {media: {"schema": {"type": "string"}}
                                                     for media in getattr(view, "response_media", ())}}
    else:
        success = answer("OK" if success_status == 200 else "Created", schema_of.get(response_type, {}))
    responses: dict[str, dict] = {str(success_status): success}
    operation: dict = {"summary": row["summary"], "x-documented": row["documented"], "responses": responses}

    parameters = [_path_parameter(name, converter, view) for name, converter in converters.items()]
    parameters += [parameter.openapi() for parameter in getattr(view, "query_parameters", ())]
    if parameters:
        operation["parameters"] = parameters
    body = getattr(view, "request_body", None)
    if body is not None:
        operation["requestBody"] = {
            "required": not view.request_body_optional,
            "content": {getattr(view, "request_body_media", "application/json"): {
                "schema": schema_of[body] if isinstance(body, type) else body}}}

    convention = _SENTENCE if row["errors"] == "sentence" else _STABLE
    statuses: dict[int, dict] = {}
    if body is not None or any(_is_checked(parameter) for parameter in getattr(view, "query_parameters", ())):
        statuses[400] = convention
    stable = set(getattr(view, "stable_statuses", ()))
    for status in getattr(view, "error_statuses", ()):
        if status < 400 or status in getattr(view, "report_statuses", ()):  # the route's own body
            responses[str(status)] = {**success, "description": "OK" if status < 400 else _ERROR_ANSWERS[status]}
        else:
            statuses[status] = _STABLE if status in stable else convention
    if row["auth"] != "none":
        operation["security"] = [{"apiKey": []}]
        operation["x-api-tier"] = row["tier"]
        operation["x-scopes"] = row["scopes"]
        operation["x-error-convention"] = row["errors"]
        if row["admin"] is not None:
            operation["x-admin"] = row["admin"]
        statuses.update({401: _SENTENCE, 403: _EITHER, 429: _EITHER})
    if body is not None:
        statuses[413] = _STABLE  # answered before the handler, in the stable convention
    statuses.setdefault(500, convention)
    # Any route answers 503 with Retry-After while PostgreSQL is away (docs/operating.md).
    statuses.setdefault(503, convention)
    for status in sorted(statuses):
        responses[str(status)] = answer(_ERROR_ANSWERS[status], statuses[status])
    # A route that answers in a protocol of its own (MCP's JSON-RPC) declares those answers itself.
    responses.update(getattr(view, "openapi_responses", {}))
    return operation


def _is_checked(parameter) -> bool:
    """Whether a query parameter has rules its handler refuses with 400 (free text and numbers it clamps have
    none)."""
    return bool(parameter.enum or parameter.rules or parameter.required)


_CONVERTER = re.compile(r"<(?:([a-z]+):)?([a-z_]+)>")


def _path_converters(app: Quart, rule: str) -> dict[str, str]:
    """{parameter: converter name} of a URL rule, in path order (`default` when it names none)."""
    return {name: converter or "default" for converter, name in _CONVERTER.findall(rule)}


def _path_parameter(name: str, converter: str, view) -> dict:
    schema = path_schema(name, converter, getattr(view, "path_schemas", {}))
    return {"name": name, "in": "path", "required": True, "schema": schema}


def documented_part(document: dict) -> dict:
    """The documented calls of an OpenAPI document, with only the component schemas they reach."""
    paths = {}
    for path, operations in document["paths"].items():
        kept = {method: operation for method, operation in operations.items()
                if isinstance(operation, dict) and operation.get("x-documented")}
        if kept:
            paths[path] = kept
    schemas = document.get("components", {}).get("schemas", {})
    reached: set[str] = set()
    pending = _references(paths)
    while pending:
        name = pending.pop()
        if name not in reached and name in schemas:
            reached.add(name)
            pending |= _references(schemas[name])
    return {"openapi": document["openapi"], "info": document["info"], "paths": paths,
            "components": {"schemas": {name: schemas[name] for name in sorted(reached)}}}


def documented_text(document: dict) -> str:
    return json.dumps(documented_part(document), indent=2, sort_keys=True) + "\n"


def documented_digest(text: str) -> str:
    """How CHANGELOG.md names a version of the documented calls: `sha256:` and the first 16 hex digits."""
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def _references(value: object) -> set[str]:
    found: set[str] = set()
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            found.add(ref.rsplit("/", 1)[1])
        for item in value.values():
            found |= _references(item)
    elif isinstance(value, list):
        for item in value:
            found |= _references(item)
    return found


def main() -> None:
    from inbox_http.app import create_app

    document = build_document(create_app(None))
    if sys.argv[1:] == ["--documented"]:
        sys.stdout.write(documented_text(document))
    else:
        print(json.dumps(document, indent=2))


if __name__ == "__main__":
    main()
