"""What a key may be: the limits of the spec's key lifecycle, shared by the CLI and key management."""

from __future__ import annotations

from datetime import datetime

from inbox_actors.domain import scopes as scope_rules

MAX_ACTIVE_KEYS = 20
EXPIRY_DAYS = (1, 730)
RATE_LIMIT = (10, 100_000)
MAX_GRACE_HOURS = 168
DEFAULT_GRACE_HOURS = 24
DEFAULT_RATE_LIMIT = 600
KEY_STATUSES = ("active", "rotated", "retired", "expired", "revoked")


class KeyRuleError(ValueError):
    """A key attribute out of bounds; `code` is the stable error code (invalid_*)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def key_name(value: str) -> str:
    value = value.strip()
    if not 1 <= len(value) <= 200:
        raise KeyRuleError("invalid_name", "A key name must be 1 to 200 characters.")
    if any(not character.isprintable() for character in value):
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
