"""The Reporting API's query parameters, read as the spec names them; anything malformed is an
`InvalidParameter` (400, stable code) before any query runs.

Parameters arrive as strings (a query string); these functions take the raw value (None when absent) and
answer the typed value or raise. Unknown parameters are ignored, as HTTP APIs usually do.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from inbox_actors.domain.phones import phone_or_none

MAX_PAGE = 200
BIGINT_MAX = 2**63 - 1
MAX_SEARCH = 200
MAX_PAGE_NUMBER = 1_000_000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class InvalidParameter(ValueError):
    """A parameter is missing or malformed; `code` names it (`invalid_limit`, `invalid_state`, ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def limit(raw: str | None, default: int, maximum: int = MAX_PAGE) -> int:
    if raw is None:
        return default
    value = _whole(raw)
    if value is None or not 1 <= value <= maximum:
        raise InvalidParameter("invalid_limit", f"limit must be a whole number from 1 to {maximum}.")
    return value


def boolean(raw: str | None, name: str) -> bool | None:
    if raw is None:
        return None
    value = raw.strip().lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    raise InvalidParameter(f"invalid_{name}", f"{name} must be true or false.")


def member_id(raw: str | None, name: str) -> int | None:
    """A team member's user id (`assigned_to`, `agent_id`)."""
    if raw is None:
        return None
    value = _whole(raw)
    if value is None or not 1 <= value <= BIGINT_MAX:
        raise InvalidParameter(f"invalid_{name}", f"{name} must be a team member's user id (a positive integer).")
    return value


def choice(raw: str | None, name: str, allowed: Collection[str], default: str | None = None) -> str | None:
    if raw is None:
        return default
    if raw not in allowed:
        raise InvalidParameter(f"invalid_{name}", f"{name} must be one of {', '.join(allowed)}.")
    return raw


def search(raw: str | None, name: str) -> str | None:
    """Free text to match (`q`, `search`); empty means no filter."""
    if raw is None or not raw.strip():
        return None
    text = raw.strip()
    if len(text) > MAX_SEARCH or _CONTROL.search(text):
        raise InvalidParameter(f"invalid_{name}",
                               f"{name} must be at most {MAX_SEARCH} characters, without control characters.")
    return text


def phone(raw: str | None, name: str = "phone") -> str | None:
    if raw is None:
        return None
    value = phone_or_none(raw)
    if value is None:
        raise InvalidParameter(f"invalid_{name}", f"{name} must be a phone number with its country code.")
    return value


def page(raw: str | None) -> int:
    if raw is None:
        return 1
    value = _whole(raw)
    if value is None or not 1 <= value <= MAX_PAGE_NUMBER:
        raise InvalidParameter("invalid_page", "page must be a whole number from 1.")
    return value


def _whole(raw: str) -> int | None:
    text = raw.strip()
    if not text.isascii() or not text.isdigit() or len(text) > 19:
        return None
    return int(text)
