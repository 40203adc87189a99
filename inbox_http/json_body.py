"""Request bodies of stable-code routes, read into typed structs (bad input: 400 invalid_body).

A JSON body is UTF-8 (RFC 8259). msgspec checks only the strings it decodes, and a bad one there raises
UnicodeDecodeError rather than DecodeError, so every JSON body reader checks the whole body first (`is_utf8`).
"""

from __future__ import annotations

from typing import TypeVar

import msgspec
from quart import request

from inbox_http.errors import ApiError

Body = TypeVar("Body")

NOT_UTF8 = "The request body is not valid UTF-8"


def is_utf8(raw: bytes) -> bool:
    """Whether the body is UTF-8 text, as JSON must be."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def decode_json(raw: bytes, kind: type[Body]) -> Body:
    """`raw` as `kind`, a JSON number with no fraction counting as an integer: `3.0` is `3` (JSON and JSON Schema
    know numbers, not an int and a float type, and some clients write every number with a fraction).
    Raises msgspec's DecodeError or ValidationError."""
    return msgspec.convert(_whole_numbers(msgspec.json.decode(raw)), type=kind)


def _whole_numbers(value: object) -> object:
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {key: _whole_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole_numbers(item) for item in value]
    return value


async def read_json_body(kind: type[Body], *, empty_ok: bool = False) -> Body:
    """The request's JSON body as `kind`; with `empty_ok`, no body at all means `kind()` (its defaults)."""
    raw = await request.get_data()
    if not raw.strip():
        if empty_ok:
            return kind()
        raise ApiError(400, "invalid_body", "A JSON body is required.")
    if not is_utf8(raw):
        raise ApiError(400, "invalid_body", f"{NOT_UTF8}.")
    try:
        return decode_json(raw, kind)
    except msgspec.ValidationError as err:
        raise ApiError(400, "invalid_body", f"Invalid request body: {err}.") from None
    except msgspec.DecodeError:
        raise ApiError(400, "invalid_body", "The request body is not valid JSON.") from None


async def read_json_object(*, empty_ok: bool = False) -> dict:
    """The request's JSON body as an object of fields, for a use case's runner to decode into its arguments;
    with `empty_ok`, no body at all is no fields."""
    raw = await request.get_data()
    if not raw.strip():
        if empty_ok:
            return {}
        raise ApiError(400, "invalid_body", "A JSON body is required.")
    if not is_utf8(raw):
        raise ApiError(400, "invalid_body", f"{NOT_UTF8}.")
    try:
        fields = _whole_numbers(msgspec.json.decode(raw))
    except msgspec.DecodeError:
        raise ApiError(400, "invalid_body", "The request body is not valid JSON.") from None
    if not isinstance(fields, dict):
        raise ApiError(400, "invalid_body", "Invalid request body: Expected `object`.")
    return fields
