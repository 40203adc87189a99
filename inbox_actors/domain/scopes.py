"""Key scopes and member permissions (the spec's scope table).

A key carries `all` or a set of scopes. A base scope covers its area for every method; its `:read` variant
covers GET (and HEAD) only. A key made only of `:read` scopes is read-only. Member permissions use the same
vocabulary, so "a key never exceeds its creator" is the same coverage check applied twice.
"""

from __future__ import annotations

from typing import Iterable

ALL = "all"

# Base scope -> whether it has a `:read` variant.
SCOPES: dict[str, bool] = {
    "inbox": True,
    "contacts": True,
    "campaigns": True,
    "automations": True,
    "templates": True,
    "analytics": True,
    "whatsapp_api": False,
    "contacts_delete": False,
    "contacts_export": False,
    "campaign_approve": False,
    "templates_delete": False,
    "inbox_assigned_only": False,
    "ai_agent": True,
    "ai_kb_edit": False,
    "ai_pricing_edit": False,
    "ai_behavior_edit": False,
    "ai_audit_view": False,
    "ai_provision": False,
    "team_management": True,
    "team_remove_member": False,
    "audit_view": False,
    "settings": True,
    "billing_view": False,
    "billing_manage": False,
}

VALID_SCOPES: frozenset[str] = frozenset(
    [ALL, *SCOPES, *(f"{base}:read" for base, has_read in SCOPES.items() if has_read)]
)

READ_METHODS = frozenset({"GET", "HEAD"})
# What a team member with the agent role may do unless given other permissions.
AGENT_PERMISSIONS: tuple[str, ...] = ("inbox", "contacts", "templates", "whatsapp_api", "analytics:read")


class InvalidScopes(ValueError):
    """A scope list that names unknown scopes, is empty, or mixes `all` with others."""


def parse_scopes(raw: Iterable[str]) -> tuple[str, ...]:
    """Validate and normalise (deduplicated, sorted, `all` alone)."""
    scopes = {s.strip() for s in raw if s.strip()}
    if not scopes:
        raise InvalidScopes("at least one scope is required")
    unknown = sorted(scopes - VALID_SCOPES)
    if unknown:
        raise InvalidScopes(f"unknown scope(s): {', '.join(unknown)}")
    if ALL in scopes and len(scopes) > 1:
        raise InvalidScopes("'all' cannot be combined with other scopes")
    return tuple(sorted(scopes))


def is_read_only(scopes: Iterable[str]) -> bool:
    scopes = tuple(scopes)
    return bool(scopes) and all(s.endswith(":read") for s in scopes)


def covers(granted: Iterable[str], required: Iterable[str], method: str) -> bool:
    """Whether `granted` allows a call needing any one of the `required` base scopes with `method`.

    An empty `required` means the route needs no particular scope.
    """
    granted = frozenset(granted)
    if ALL in granted:
        return True
    required = tuple(required)
    if not required:
        return True
    reading = method.upper() in READ_METHODS
    return any(base in granted or (reading and f"{base}:read" in granted) for base in required)
