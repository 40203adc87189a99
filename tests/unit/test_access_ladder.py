from datetime import datetime, timedelta, timezone

import msgspec
import pytest

from inbox_actors.domain.auth_ladder import (
    ACCOUNT_SUSPENDED_SENTENCE,
    INVALID_KEY,
    Credential,
    ErrorStyle,
    RoutePolicy,
    check_access,
)
from inbox_actors.domain.plans import ApiTier, Plan

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=timezone.utc)
CORE = RoutePolicy(tier=ApiTier.CORE)
FULL_INBOX = RoutePolicy(tier=ApiTier.FULL, scopes=("inbox", "contacts"))
SENTENCE_SEND = RoutePolicy(tier=ApiTier.CORE, scopes=("whatsapp_api",), errors=ErrorStyle.SENTENCE)


def credential(**changes) -> Credential:
    base = Credential(
        key_id=1, workspace_id=1, key_name="k", scopes=("all",), read_only=False, rate_limit_per_minute=None,
        expires_at=None, revoked_at=None, grace_until=None, member_id=1, member_role="admin",
        member_permissions=("all",), member_status="active", member_assigned_only=False, plan=Plan.SCALE,
        cloud_api_enabled=True,
    )
    return msgspec.structs.replace(base, **changes)


def code(refusal):
    return None if refusal is None else (refusal.status, refusal.error)


def test_a_full_access_key_passes():
    assert check_access(credential(), FULL_INBOX, "POST", NOW) is None


def test_unknown_key_is_the_invalid_key_sentence():
    assert check_access(None, CORE, "GET", NOW) is INVALID_KEY
    assert INVALID_KEY.body() == {"error": "Forbidden: Invalid or revoked API key"}


def test_revoked_and_past_grace_keys_are_invalid():
    assert check_access(credential(revoked_at=NOW), CORE, "GET", NOW) is INVALID_KEY
    assert check_access(credential(grace_until=NOW - timedelta(seconds=1)), CORE, "GET", NOW) is INVALID_KEY
    assert check_access(credential(grace_until=NOW + timedelta(hours=1)), CORE, "GET", NOW) is None


def test_expired_key():
    refusal = check_access(credential(expires_at=NOW), CORE, "GET", NOW)
    assert code(refusal) == (403, "key_expired")
    assert set(refusal.body()) == {"error", "message"}
    assert check_access(credential(expires_at=NOW + timedelta(seconds=1)), CORE, "GET", NOW) is None


def test_plans():
    assert code(check_access(credential(plan=Plan.STARTER), CORE, "GET", NOW)) == (403, "api_not_in_plan")
    assert check_access(credential(plan=Plan.GROWTH), CORE, "GET", NOW) is None
    assert code(check_access(credential(plan=Plan.GROWTH), FULL_INBOX, "GET", NOW)) == (403, "api_access_not_enabled")


def test_plan_refuses_whatever_the_scopes():
    growth_unscoped = credential(plan=Plan.GROWTH, scopes=("billing_view",))
    assert code(check_access(growth_unscoped, FULL_INBOX, "GET", NOW)) == (403, "api_access_not_enabled")


def test_read_only_key_on_any_write_method():
    reader = credential(scopes=("inbox:read",), read_only=True)
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        assert code(check_access(reader, FULL_INBOX, method, NOW)) == (403, "read_only_key")
    assert check_access(reader, FULL_INBOX, "GET", NOW) is None


def test_read_only_comes_before_scope():
    # The key's scopes cover nothing of this route, yet a write is answered read_only_key.
    reader = credential(scopes=("analytics:read",), read_only=True)
    assert code(check_access(reader, SENTENCE_SEND, "POST", NOW)) == (403, "read_only_key")


def test_scope_denied_names_the_permission_and_the_key_scopes():
    refusal = check_access(credential(scopes=("analytics",)), FULL_INBOX, "GET", NOW)
    assert code(refusal) == (403, "scope_denied")
    body = refusal.body()
    assert body["requiredPermission"] == "inbox:read"
    assert body["keyScopes"] == ["analytics"]
    write = check_access(credential(scopes=("analytics",)), FULL_INBOX, "POST", NOW).body()
    assert write["requiredPermission"] == "inbox"


def test_suspended_creator_speaks_the_route_convention():
    suspended = credential(member_status="suspended")
    assert code(check_access(suspended, CORE, "GET", NOW)) == (403, "account_suspended")
    assert check_access(suspended, SENTENCE_SEND, "POST", NOW) is ACCOUNT_SUSPENDED_SENTENCE
    assert ACCOUNT_SUSPENDED_SENTENCE.body() == {"error": "Account suspended. Contact your admin."}


def test_removed_creator():
    assert code(check_access(credential(member_status="removed"), CORE, "GET", NOW)) == (403, "membership_revoked")


def test_a_key_never_exceeds_its_creator():
    agent = credential(member_role="agent", member_permissions=("contacts", "analytics:read"))
    assert check_access(agent, FULL_INBOX, "POST", NOW) is None  # contacts covers it
    limited = credential(member_role="agent", member_permissions=("analytics:read",))
    refusal = check_access(limited, FULL_INBOX, "GET", NOW)
    assert code(refusal) == (403, "permission_denied")
    assert refusal.body()["requiredPermission"] == "inbox:read"


@pytest.mark.parametrize("changes, expected", [
    # Several rungs fail at once: the first in ladder order answers.
    ({"revoked_at": NOW, "expires_at": NOW, "plan": Plan.STARTER}, (403, INVALID_KEY.error)),
    ({"expires_at": NOW, "plan": Plan.STARTER}, (403, "key_expired")),
    ({"plan": Plan.STARTER, "member_status": "suspended"}, (403, "api_not_in_plan")),
    ({"scopes": ("analytics",), "member_status": "suspended"}, (403, "scope_denied")),
    ({"member_status": "removed", "member_permissions": ()}, (403, "membership_revoked")),
])
def test_ladder_order(changes, expected):
    assert code(check_access(credential(**changes), FULL_INBOX, "GET", NOW)) == expected
