"""Who a connector's action runs as: the API key's creator, with the key's effective permissions (what both the
key's scopes and its creator's permissions allow, as the auth ladder checks a call against both), named
`api_key:<id>` in events and the audit log, and labelled `Zapier: <key name>` / `Make: <key name>` on the
messages it sends."""

from __future__ import annotations

from collections.abc import Iterable

from inbox_actors.connectors.messages import Platform
from inbox_actors.domain import scopes as scope_rules
from inbox_actors.domain.access import Credential, assigned_only_member
from inbox_actors.mcp.messages import ActionCaller

_RESTRICTIONS = ("inbox_assigned_only",)


def effective_permissions(key_scopes: Iterable[str], member_permissions: Iterable[str]) -> tuple[str, ...]:
    """The permissions both sides grant: `covers(result, x, m)` exactly when both cover `x` for `m`. A base scope
    held by both stays; held by one and only read by the other, it becomes its `:read`. Restrictions
    (`inbox_assigned_only`) held by either are kept."""
    key, member = frozenset(key_scopes), frozenset(member_permissions)
    restrictions = sorted(r for r in _RESTRICTIONS if r in key or r in member)
    if scope_rules.ALL in key and scope_rules.ALL in member:
        return (scope_rules.ALL, *restrictions)
    granted: list[str] = []
    for base, has_read in scope_rules.SCOPES.items():
        if base in _RESTRICTIONS:
            continue
        full_key, full_member = scope_rules.ALL in key or base in key, scope_rules.ALL in member or base in member
        if full_key and full_member:
            granted.append(base)
        elif has_read and (full_key or f"{base}:read" in key) and (full_member or f"{base}:read" in member):
            granted.append(f"{base}:read")
    return (*granted, *restrictions)


def action_caller(credential: Credential, platform: Platform) -> ActionCaller:
    return ActionCaller(
        author=f"api_key:{credential.key_id}", label=f"{platform.title}: {credential.key_name}",
        workspace_id=credential.workspace_id, member_id=credential.member_id, role=credential.member_role,
        permissions=effective_permissions(credential.scopes, credential.member_permissions),
        status=credential.member_status, assigned_only=assigned_only_member(credential) is not None,
        plan=credential.plan, cloud_api_enabled=credential.cloud_api_enabled)
