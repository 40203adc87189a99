"""JSON responses encoded with msgspec (structs, datetimes as ISO 8601 UTC)."""

from __future__ import annotations

from typing import Any, Mapping

import msgspec
from quart import Response

_encoder = msgspec.json.Encoder()


def json_response(payload: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    return Response(_encoder.encode(payload), status=status, headers=dict(headers or {}),
                    content_type="application/json")
