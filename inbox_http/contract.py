"""What a route declares for the published contract (`http/openapi.json`) beyond its policy and success type: the
body it takes and the error statuses only it can answer.

    @blueprint.put("/<phone>/name")
    @responds(ContactView)
    @guarded(**_POLICY)
    @takes(NameBody)
    @answers(404, 412)
    async def set_name(phone): ...

The generator (`inbox_http.openapi`) adds what every route of a kind answers: 401/403/429 from the guard's
policy, 400 for a body or query parameters, 413 for a body, 500 for a failing dependency. A body struct carries
the rules its checks enforce as JSON Schema (`rule`), taken from the constants those checks use, so the contract
cannot promise what the service refuses nor leave out what it checks.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

import msgspec

from inbox_actors.domain.phones import PHONE_PATTERN
from inbox_actors.use_cases.use_case import UseCase
from inbox_http.converters import IdConverter

Handler = TypeVar("Handler", bound=Callable[..., Any])

STABLE = "stable"
SENTENCE = "sentence"

# JSON Schema patterns (Python's `re` syntax, which the fuzzer generates from, is compatible here).
# Text a client may send: no control character other than a line break or a tab (inbox_actors.domain.text).
NO_CONTROL_EXCEPT_LINES = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$"
# Text that may hold no control character at all.
NO_CONTROL = r"^[^\x00-\x1f\x7f]*$"
# Text that may hold no control character at all and must not be blank once trimmed.
FILLED_LINE = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f\x85][^\x00-\x1f\x7f]*$"


def rule(**json_schema: Any) -> msgspec.Meta:
    """JSON Schema for a body field that a later check (not msgspec's decoding) enforces: `maxLength=50`.
    Only described: decoding is unchanged, so the check keeps its own error sentence."""
    return msgspec.Meta(extra_json_schema={_camel(name): value for name, value in json_schema.items()})


def takes(body: type | dict, *, optional: bool = False, media: str = "application/json"
          ) -> Callable[[Handler], Handler]:
    """Declare the JSON body a handler reads: a msgspec struct, or a JSON Schema for a body read by hand.
    `optional`: no body at all is accepted too (the struct's defaults). `media`: the content type of a body that is
    not JSON (a CSV file, read by hand and described as a JSON Schema string)."""

    def decorate(view: Handler) -> Handler:
        view.request_body = body  # type: ignore[attr-defined]
        view.request_body_optional = optional  # type: ignore[attr-defined]
        view.request_body_media = media  # type: ignore[attr-defined]
        return view

    return decorate


def body_of(use_case: UseCase, *, path: tuple[str, ...] = ("phone",)) -> dict:
    """The JSON Schema of the body a route binding `use_case` reads: its arguments' struct, less the fields the
    path gives."""
    (reference,), components = msgspec.json.schema_components([use_case.arguments],
                                                              ref_template="#/components/schemas/{name}")
    schema = dict(components.pop(reference["$ref"].rsplit("/", 1)[1]))
    schema.pop("title", None)
    schema["properties"] = {k: v for k, v in schema.get("properties", {}).items() if k not in path}
    required = [name for name in schema.get("required", []) if name not in path]
    if required:
        schema["required"] = required
    else:
        schema.pop("required", None)
    return schema


def answers(*statuses: int, stable: tuple[int, ...] = (), reports: tuple[int, ...] = ()
            ) -> Callable[[Handler], Handler]:
    """Declare the statuses a handler answers itself besides its success (404, 409, 412, 502, 503, ...): errors in
    its route's convention unless listed in `stable` (a sentence route that answers some refusals with a stable
    code); a status under 400, or one in `reports`, with the route's own body (a health check's 503)."""

    def decorate(view: Handler) -> Handler:
        view.error_statuses = tuple(sorted(set(statuses) | set(stable) | set(reports)))  # type: ignore[attr-defined]
        view.stable_statuses = tuple(stable)  # type: ignore[attr-defined]
        view.report_statuses = tuple(reports)  # type: ignore[attr-defined]
        return view

    return decorate


def in_path(**schemas: dict) -> Callable[[Handler], Handler]:
    """Declare what a path parameter must be when its handler checks more than its URL converter does."""

    def decorate(view: Handler) -> Handler:
        view.path_schemas = schemas  # type: ignore[attr-defined]
        return view

    return decorate


# Path parameters by converter (Werkzeug's: a default one takes a segment without "/"; `path` also takes "/").
_CONVERTED = {
    "default": {"type": "string", "pattern": "^[^/]+$"},
    "path": {"type": "string", "pattern": "^[^/].*$"},
    "id": IdConverter.json_schema,
}
# A customer's phone, wherever a path names one: what `normalise_phone` accepts (a lookup answers any other
# text 404, a write 400).
PHONE = {"type": "string", "pattern": PHONE_PATTERN, "example": "919876543210"}


def path_schema(name: str, converter: str, declared: dict[str, dict]) -> dict:
    """The JSON Schema of a path parameter: the handler's declaration, the phone, or its converter's."""
    if name in declared:
        return declared[name]
    if name == "phone":
        return PHONE
    return _CONVERTED[converter]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)
