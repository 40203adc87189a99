"""Opaque keyset cursors: where the previous page ended (and what the walk is pinned to), never an offset.

A cursor is URL-safe base64 of a small JSON array: the list it belongs to, then typed values. Decoding checks
every piece, so a cursor that was cut, edited or taken from another list is `invalid_cursor` (400), never a
500. Tampering gains nothing: every query still filters by the caller's workspace and visibility.
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime, timezone

import msgspec

from inbox_actors.paging.parameters import InvalidParameter

_MAX_LENGTH = 512
_INVALID = "cursor is not a cursor this list gave out; start again without it."


def encode(kind: str, *values: object) -> str:
    raw = msgspec.json.encode([kind, *(_plain(value) for value in values)])
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode(raw: str | None, kind: str, *types: type) -> tuple | None:
    """The cursor's values, typed as `types` (datetime, int, str, or `None | T` written as (T, None)),
    or None when no cursor was given."""
    if raw is None:
        return None
    if not raw or len(raw) > _MAX_LENGTH:
        raise InvalidParameter("invalid_cursor", _INVALID)
    try:
        payload = msgspec.json.decode(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
    except (binascii.Error, ValueError, msgspec.DecodeError):
        raise InvalidParameter("invalid_cursor", _INVALID) from None
    if not isinstance(payload, list) or len(payload) != len(types) + 1 or payload[0] != kind:
        raise InvalidParameter("invalid_cursor", _INVALID)
    return tuple(_typed(value, wanted) for value, wanted in zip(payload[1:], types))


def _plain(value: object) -> object:
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).isoformat()
    return value


def _typed(value: object, wanted: type | tuple) -> object:
    if isinstance(wanted, tuple):  # optional: (T, None)
        return None if value is None else _typed(value, wanted[0])
    if wanted is datetime and isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidParameter("invalid_cursor", _INVALID) from None
        if parsed.tzinfo is not None:
            return parsed
    elif wanted is int and type(value) is int and -2**63 <= value < 2**63:
        return value
    elif wanted is str and isinstance(value, str):
        return value
    raise InvalidParameter("invalid_cursor", _INVALID)
