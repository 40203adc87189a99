"""Request bodies of stable-code routes, read into typed structs (bad input: 400 invalid_body)."""

from __future__ import annotations

from typing import TypeVar

import msgspec
from quart import request

from inbox_http.errors import ApiError

Body = TypeVar("Body")


async def read_json_body(kind: type[Body], *, empty_ok: bool = False) -> Body:
    """The request's JSON body as `kind`; with `empty_ok`, no body at all means `kind()` (its defaults)."""
    raw = await request.get_data()
    if not raw.strip():
        if empty_ok:
            return kind()
        raise ApiError(400, "invalid_body", "A JSON body is required.")
    try:
        return msgspec.json.decode(raw, type=kind)
    except msgspec.ValidationError as err:
        raise ApiError(400, "invalid_body", f"Invalid request body: {err}.") from None
    except msgspec.DecodeError:
        raise ApiError(400, "invalid_body", "The request body is not valid JSON.") from None
