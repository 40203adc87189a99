"""The auth ladder: whether a credential may make a call, and if not, the exact refusal.

The rungs, in order (the first that fails answers):
  1. no bearer token                        401 "Unauthorized: No token provided"            (sentence)
  2. unknown, revoked or past rotation grace 403 "Forbidden: Invalid or revoked API key"    (sentence)
  3. expired                                403 key_expired
  4. Starter workspace                      403 api_not_in_plan
  5. Growth key on a full-API call          403 api_access_not_enabled  ("whatever the key's scopes")
  6. read-only key, write method            403 read_only_key           ("every write method on every route")
  7. scopes do not cover the route          403 scope_denied (+ requiredPermission, keyScopes)
  8. creator suspended / removed            403 account_suspended / membership_revoked
  9. creator lacks the permission           403 permission_denied

Rungs 1 and 2 are sentences on every route. The others are key checks and speak the stable-code convention
on every route, except a suspended creator on a sentence route, which gets the spec's sentence
"Account suspended. Contact your admin.".
"""

from __future__ import annotations

import enum
from datetime import datetime

import msgspec

from inbox_actors.domain import scopes as scope_rules
from inbox_actors.domain.plans import ApiTier, Plan

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class ErrorStyle(str, enum.Enum):
    """Which of the spec's two error conventions a route speaks."""

    STABLE = "stable"  # {"error": "snake_code", "message": "Sentence."}
    SENTENCE = "sentence"  # {"error": "Sentence."}


class AdminRule(str, enum.Enum):
    """Key management: who beyond a plain key check may call."""

    MANAGE = "manage"  # an admin's session, or a full-access key an admin created
    VIEW = "view"  # also members with the settings permission (list keys, read activity)


class RoutePolicy(msgspec.Struct, frozen=True):
    """What a route demands, declared once next to its handler."""

    tier: ApiTier
    # Any one of these base scopes (its :read variant too, for GET). Empty: any valid key.
    scopes: tuple[str, ...] = ()
    errors: ErrorStyle = ErrorStyle.STABLE
    # Set on key management: admin rules apply and a member's dashboard session is accepted too.
    admin: AdminRule | None = None
    # A member's dashboard session is accepted too (on any plan: the web app is the same surface), when the
    # member's permissions cover the scopes; plan rules are then the handler's (webhooks_not_in_plan, ...).
    dashboard: bool = False
    # A send (send-message, bulk-send): not held to the default per-key limit, exempt from the per-IP ceiling.
    sending: bool = False


class Credential(msgspec.Struct, frozen=True):
    """An API key with what its access depends on: its creator and its workspace."""

    key_id: int
    workspace_id: int
    key_name: str
    scopes: tuple[str, ...]
    read_only: bool
    rate_limit_per_minute: int | None
    expires_at: datetime | None
    revoked_at: datetime | None
    grace_until: datetime | None
    member_id: int
    member_role: str
    member_permissions: tuple[str, ...]
    member_status: str
    member_assigned_only: bool
    plan: Plan
    cloud_api_enabled: bool
    limits_exempt: bool = False
    """Exempt from the default per-key limit and the per-IP ceiling (never from a limit set on the key)."""


class Refusal(msgspec.Struct, frozen=True):
    status: int
    error: str  # the code, or the sentence when `message` is None
    message: str | None = None
    required_permission: str | None = None
    key_scopes: tuple[str, ...] | None = None

    def body(self) -> dict[str, object]:
        body: dict[str, object] = {"error": self.error}
        if self.message is not None:
            body["message"] = self.message
        if self.required_permission is not None:
            body["requiredPermission"] = self.required_permission
        if self.key_scopes is not None:
            body["keyScopes"] = list(self.key_scopes)
        return body


NO_TOKEN = Refusal(401, "Unauthorized: No token provided")
INVALID_KEY = Refusal(403, "Forbidden: Invalid or revoked API key")
ACCOUNT_SUSPENDED_SENTENCE = Refusal(403, "Account suspended. Contact your admin.")


def check_access(credential: Credential | None, policy: RoutePolicy, method: str, now: datetime) -> Refusal | None:
    """None when the call may proceed; otherwise the refusal of the first failing rung (2 to 9)."""
    method = method.upper()
    if credential is None or not is_live(credential, now):
        return INVALID_KEY
    if credential.expires_at is not None and credential.expires_at <= now:
        return Refusal(403, "key_expired",
                       f"This API key expired at {credential.expires_at.isoformat()}; ask an admin for a new key.")
    tier = credential.plan.api_tier
    if tier is ApiTier.NONE:
        return Refusal(403, "api_not_in_plan",
                       "The Starter plan has no API access; upgrade to Growth or Scale to use API keys.")
    if not tier.allows(policy.tier):
        return Refusal(403, "api_access_not_enabled",
                       "This call is part of the full API, which needs the Scale plan; "
                       "keys of a Growth workspace may call only the core API.")
    if credential.read_only and method in WRITE_METHODS:
        return Refusal(403, "read_only_key",
                       f"This key has only :read scopes and cannot make {method} requests.")
    if not scope_rules.covers(credential.scopes, policy.scopes, method):
        needed = _needed(policy, method)
        return Refusal(403, "scope_denied",
                       f"This key's scopes do not cover this call; it needs {' or '.join(needed)}.",
                       required_permission=needed[0], key_scopes=credential.scopes)
    if credential.member_status == "suspended":
        if policy.errors is ErrorStyle.SENTENCE:
            return ACCOUNT_SUSPENDED_SENTENCE
        return Refusal(403, "account_suspended",
                       "The member who created this key is suspended. Contact your admin.")
    if credential.member_status == "removed":
        return Refusal(403, "membership_revoked",
                       "The member who created this key was removed from the workspace.")
    if not scope_rules.covers(credential.member_permissions, policy.scopes, method):
        needed = _needed(policy, method)
        return Refusal(403, "permission_denied",
                       f"The member who created this key lacks the {' or '.join(needed)} permission.",
                       required_permission=needed[0])
    return None


INVALID_SESSION = Refusal(401, "invalid_session", "The dashboard session is unknown, expired or signed out.")


def check_key_admin(credential: Credential, rule: AdminRule) -> Refusal | None:
    """After `check_access` passed: key management needs a full-access key whose creator may manage keys."""
    if tuple(credential.scopes) != (scope_rules.ALL,):
        return Refusal(403, "scope_denied", "Key management needs a full-access key (scope all), or an admin's "
                       "dashboard session.", required_permission=scope_rules.ALL, key_scopes=credential.scopes)
    return _admin_required(credential.member_role, credential.member_permissions, rule)


def check_session_admin(member_status: str, role: str, permissions: tuple[str, ...], rule: AdminRule
                        ) -> Refusal | None:
    if member_status == "suspended":
        return Refusal(403, "account_suspended", "Your account is suspended. Contact your admin.")
    if member_status == "removed":
        return Refusal(403, "membership_revoked", "You were removed from this workspace.")
    return _admin_required(role, permissions, rule)


def check_session_member(member_status: str, role: str, permissions: tuple[str, ...], scopes: tuple[str, ...],
                         method: str) -> Refusal | None:
    """A dashboard session on a route open to members whose permissions cover its scopes."""
    if member_status == "suspended":
        return Refusal(403, "account_suspended", "Your account is suspended. Contact your admin.")
    if member_status == "removed":
        return Refusal(403, "membership_revoked", "You were removed from this workspace.")
    if role == "admin" or scope_rules.covers(permissions, scopes, method):
        return None
    return Refusal(403, "permission_denied", f"Your permissions do not include {' or '.join(scopes)}.",
                   required_permission=scopes[0] if scopes else None)


def _admin_required(role: str, permissions: tuple[str, ...], rule: AdminRule) -> Refusal | None:
    if role == "admin":
        return None
    if rule is AdminRule.VIEW and scope_rules.covers(permissions, ("settings",), "GET"):
        return None
    allowed = "admins" if rule is AdminRule.MANAGE else "admins and members with the settings permission"
    return Refusal(403, "admin_required", f"Only {allowed} may do this.")


def assigned_only_member(credential: Credential) -> int | None:
    """The member whose assigned chats alone the credential may see and touch (a member limited to assigned
    chats, or a key with `inbox_assigned_only`), or None when it may see any chat."""
    if "inbox_assigned_only" in credential.scopes or credential.member_assigned_only:
        return credential.member_id
    return None


def is_live(credential: Credential, now: datetime) -> bool:
    """Not revoked, and not a rotated key past its grace period."""
    if credential.revoked_at is not None:  # immediate, whichever clock stamped it
        return False
    if credential.grace_until is not None and credential.grace_until <= now:
        return False
    return True


def _needed(policy: RoutePolicy, method: str) -> list[str]:
    if method in scope_rules.READ_METHODS:
        return [f"{base}:read" if scope_rules.SCOPES.get(base) else base for base in policy.scopes]
    return list(policy.scopes)
