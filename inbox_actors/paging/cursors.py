"""Opaque keyset cursors: where the previous page ended (and what the walk is pinned to), never an offset.

A cursor is URL-safe base64 of a small JSON array: the list it belongs to, a fingerprint of the parameters of
the call that gave it out (every one but `cursor` and `limit`: the filters, the sort, the window), then typed
values. Decoding checks every piece, so a cursor that was cut, edited, taken from another list or passed with
other filters or another sort than the call that made it is `invalid_cursor` (400), never a 500 and never a page
of another listing. Tampering gains nothing: every query still filters by the caller's workspace and visibility.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping
from datetime import datetime, timezone

import msgspec

from inbox_actors.paging.parameters import InvalidParameter

_MAX_LENGTH = 512
_INVALID = "cursor is not a cursor this list gave out; start again without it."
_OTHER_FILTERS = ("cursor was given out for other filters or another sort: pass the parameters of the call that "
                  "gave it out, or start again without it.")
# Parameters a caller may change from page to page.
_PAGE_ONLY = frozenset({"cursor", "limit"})


def encode(kind: str, args: Mapping[str, str], *values: object) -> str:
    """The cursor of the page after this one, for the call whose parameters are `args`."""
    raw = msgspec.json.encode([kind, fingerprint(args), *(_plain(value) for value in values)])
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode(args: Mapping[str, str], kind: str, *types: type) -> tuple | None:
    """The values of the call's cursor (`args["cursor"]`), typed as `types` (datetime, int, str, or `None | T`
    written as (T, None)), or None when no cursor was given."""
    raw = args.get("cursor")
    if raw is None:
        return None
    if not raw or len(raw) > _MAX_LENGTH:
        raise InvalidParameter("invalid_cursor", _INVALID)
    try:
        payload = msgspec.json.decode(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
    except (binascii.Error, ValueError, msgspec.DecodeError):
        raise InvalidParameter("invalid_cursor", _INVALID) from None
    if not isinstance(payload, list) or len(payload) != len(types) + 2 or payload[0] != kind:
        raise InvalidParameter("invalid_cursor", _INVALID)
    if payload[1] != fingerprint(args):
        raise InvalidParameter("invalid_cursor", _OTHER_FILTERS)
    return tuple(_typed(value, wanted) for value, wanted in zip(payload[2:], types))


def fingerprint(args: Mapping[str, str]) -> str:
    """What a cursor remembers of its call: a digest of every parameter but `cursor` and `limit`, in any order
    (a parameter given twice counts with each value)."""
    pairs = args.items(multi=True) if hasattr(args, "getlist") else args.items()  # type: ignore[call-arg]
    kept = sorted((name, str(value)) for name, value in pairs if name not in _PAGE_ONLY)
    return hashlib.sha256(msgspec.json.encode(kept)).hexdigest()[:16]


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
