"""The machine-readable description of the API (`http/openapi.json`), generated from the handlers' own
declarations: path, method, policy (tier, scopes, error convention) and response type.

Regenerate with `python -m inbox_http.openapi > http/openapi.json`; a unit test fails while it is stale.
"""

from __future__ import annotations

import json
import re

import msgspec
from quart import Quart

from inbox_http.route_table import route_table

API_VERSION = "1.0.0"
_PATH_PARAMETER = re.compile(r"{([a-z_]+)}")

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
    response_types = {}
    for endpoint, view in app.view_functions.items():
        if getattr(view, "response_type", None) is not None:
            response_types[endpoint] = view.response_type
    schemas, components = msgspec.json.schema_components(
        list(response_types.values()), ref_template="#/components/schemas/{name}")
    schema_of = dict(zip(response_types.values(), schemas, strict=True))

    paths: dict[str, dict] = {}
    for row in route_table(app):
        view = app.view_functions[row["endpoint"]]
        success = (getattr(view, "response_status", 200), schema_of.get(response_types.get(row["endpoint"])))
        operation = _operation(row, *success)
        query = [parameter.openapi() for parameter in getattr(view, "query_parameters", ())]
        if query:
            operation["parameters"] = operation.get("parameters", []) + query
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


_KEY_ANSWERS = {
    "400": "Bad parameter or body (invalid_*)",
    "404": "No such item in the workspace (not_found)",
    "409": "Conflicts with the item's state or a limit",
}


def _operation(row: dict, success_status: int, success_schema: dict | None) -> dict:
    error = {"$ref": "#/components/schemas/StableError"}
    sentence = {"$ref": "#/components/schemas/SentenceError"}

    def answer(description: str, schema: dict) -> dict:
        return {"description": description, "content": {"application/json": {"schema": schema}}}

    responses = {str(success_status): answer("OK" if success_status == 200 else "Created", success_schema or {})}
    operation: dict = {"summary": row["summary"], "x-documented": row["documented"], "responses": responses}
    parameters = [{"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
                  for name in _PATH_PARAMETER.findall(row["path"])]
    if parameters:
        operation["parameters"] = parameters
    if row["auth"] != "none":
        operation["security"] = [{"apiKey": []}]
        operation["x-api-tier"] = row["tier"]
        operation["x-scopes"] = row["scopes"]
        operation["x-error-convention"] = row["errors"]
        if row["admin"] is not None:
            operation["x-admin"] = row["admin"]
            responses.update({status: answer(text, error) for status, text in _KEY_ANSWERS.items()})
        responses["401"] = answer("No credential", sentence)
        responses["403"] = answer("Refused by the auth ladder", {"oneOf": [error, sentence]})
        responses["429"] = answer("Over the per-IP ceiling (sentence) or the key's limit (rate_limited)",
                                  {"oneOf": [error, sentence]})
    return operation


def main() -> None:
    from inbox_http.app import create_app

    print(json.dumps(build_document(create_app(None)), indent=2))


if __name__ == "__main__":
    main()
