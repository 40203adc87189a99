"""What a key may be: the limits of the spec's key lifecycle, shared by the CLI and key management."""

from __future__ import annotations

import re
from datetime import datetime

from inbox_actors.domain import scopes as scope_rules

MAX_ACTIVE_KEYS = 20
EXPIRY_DAYS = (1, 730)
RATE_LIMIT = (10, 100_000)
MAX_GRACE_HOURS = 168
DEFAULT_GRACE_HOURS = 24
DEFAULT_RATE_LIMIT = 600
MAX_NAME = 200
# Characters a key name may not hold: controls (Cc), invisible format characters such as bidi overrides and
# zero-width spaces (Cf), and line and paragraph separators (Zl, Zp), as Unicode 15 assigns them. One list for
# the check and for the contract's pattern.
_REFUSED_RANGES = (
    (0x00, 0x1F), (0x7F, 0x9F), (0xAD, 0xAD), (0x600, 0x605), (0x61C, 0x61C), (0x6DD, 0x6DD), (0x70F, 0x70F),
    (0x890, 0x891), (0x8E2, 0x8E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x2028, 0x202E), (0x2060, 0x2064),
    (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
    (0x13430, 0x13438), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F),
)


def _character(code: int) -> str:
    # \uXXXX reads the same in Python's and JSON Schema's regular expressions; a character beyond the BMP is
    # written as itself.
    return f"\\u{code:04x}" if code <= 0xFFFF else chr(code)


REFUSED_IN_NAMES = "".join(_character(low) + (f"-{_character(high)}" if high > low else "")
                           for low, high in _REFUSED_RANGES)
_REFUSED_CHARACTER = re.compile(f"[{REFUSED_IN_NAMES}]")
# `key_name` as a JSON Schema pattern, for the contract: no refused character, not blank once trimmed.
NAME_PATTERN = rf"^[^{REFUSED_IN_NAMES}]*[^\s{REFUSED_IN_NAMES}][^{REFUSED_IN_NAMES}]*$"
KEY_STATUSES = ("active", "rotated", "retired", "expired", "revoked")


class KeyRuleError(ValueError):
    """A key attribute out of bounds; `code` is the stable error code (invalid_*)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def key_name(value: str) -> str:
    value = value.strip()
    if not 1 <= len(value) <= MAX_NAME:
        raise KeyRuleError("invalid_name", f"A key name must be 1 to {MAX_NAME} characters.")
    if _REFUSED_CHARACTER.search(value):
        raise KeyRuleError("invalid_name", "A key name cannot contain control characters.")
    return value


def key_scopes(values: list[str]) -> tuple[str, ...]:
    try:
        return scope_rules.parse_scopes(values)
    except scope_rules.InvalidScopes as err:
        raise KeyRuleError("invalid_scopes", f"Invalid scopes: {err}.") from None


def expiry_days(value: int | None) -> int | None:
    if value is not None and not EXPIRY_DAYS[0] <= value <= EXPIRY_DAYS[1]:
        raise KeyRuleError("invalid_expiry", f"Key expiry must be {EXPIRY_DAYS[0]} to {EXPIRY_DAYS[1]} days.")
    return value


def rate_limit(value: int | None) -> int | None:
    if value is not None and not RATE_LIMIT[0] <= value <= RATE_LIMIT[1]:
        raise KeyRuleError("invalid_rate_limit",
                           f"A key's rate limit must be {RATE_LIMIT[0]:,} to {RATE_LIMIT[1]:,} requests per minute.")
    return value


def grace_hours(value: int) -> int:
    if not 0 <= value <= MAX_GRACE_HOURS:
        raise KeyRuleError("invalid_grace_hours", f"The rotation grace period must be 0 to {MAX_GRACE_HOURS} hours.")
    return value


def key_status(*, revoked_at: datetime | None, expires_at: datetime | None, replaced_by: int | None,
               grace_until: datetime | None, now: datetime) -> str:
    """active, rotated (replaced, still working until grace_until), retired (rotated, grace over), expired,
    or revoked."""
    # Any revocation counts at once, whatever clock stamped it (the database's may run ahead of ours).
    if revoked_at is not None:
        return "revoked"
    if replaced_by is not None:
        return "rotated" if grace_until is not None and grace_until > now else "retired"
    if expires_at is not None and expires_at <= now:
        return "expired"
    return "active"
