"""Who runs an action: the member it acts as, with the permissions it may use, and how it is named.

An API key acts as its creator with what both the key's scopes and the creator's permissions allow (a key never
exceeds its creator, as the auth ladder checks); a dashboard session and an MCP token act as their member. Front
doors build a `Caller` once per request and pass it to the actions, which read nothing else about who is calling;
REST handlers read the same `Caller` for the workspace and member they serve.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from inbox_actors.access.sessions import Session
from inbox_actors.domain import scopes as scope_rules
from inbox_actors.domain.auth_ladder import Credential, assigned_only_member
from inbox_actors.domain.plans import Plan
from inbox_actors.mcp.tokens import TokenHolder

_RESTRICTIONS = ("inbox_assigned_only",)
OPERATOR = "cli"
"""How records name the operator's command line as the author of what it did."""


class Caller(msgspec.Struct, frozen=True):
    author: str
    """How events, the audit log and message records name who acted: "api_key:<id>", "mcp_token:<id>"."""
    label: str
    """The sender label on the messages it sends as the API does (the key's name, "MCP: <token name>")."""
    workspace_id: int
    member_id: int
    role: str
    permissions: tuple[str, ...]
    status: str
    assigned_only: bool
    plan: Plan
    cloud_api_enabled: bool

    @property
    def restricted_to(self) -> int | None:
        """The member limited to assigned chats this caller is (or acts as): it sees and touches only the chats
        that member may see, theirs and their open team queues' (persistence/queries/chat_visibility.py). None: any
        chat."""
        if self.assigned_only or "inbox_assigned_only" in self.permissions:
            return self.member_id
        return None

    def may(self, permissions: tuple[str, ...], method: str) -> bool:
        return scope_rules.covers(self.permissions, permissions, method)

    @property
    def is_operator(self) -> bool:
        """The service's operator at its command line: no permission of a member's binds them."""
        return self.author == OPERATOR

    @property
    def who(self) -> str:
        """The caller as a refusal names it to whoever reads the refusal."""
        kind = self.author.partition(":")[0]
        return {"api_key": "the member this key acts as", "mcp_token": "the member this MCP token acts as",
                "member": "your role"}.get(kind, "the caller")

    @classmethod
    def of_mcp_token(cls, holder: TokenHolder) -> Caller:
        """An MCP token acts as its member, with the member's permissions as they are at each call."""
        return cls(author=f"mcp_token:{holder.token_id}", label=f"MCP: {holder.token_name}",
                   workspace_id=holder.workspace_id, member_id=holder.member_id, role=holder.role,
                   permissions=holder.permissions, status=holder.status, assigned_only=holder.assigned_only,
                   plan=holder.plan, cloud_api_enabled=holder.cloud_api_enabled)

    @classmethod
    def operator(cls, workspace_id: int, *, member_id: int = 0, plan: Plan = Plan.SCALE) -> Caller:
        """The operator acting on a workspace from the command line (as `member_id`, when a record needs one)."""
        return cls(author=OPERATOR, label="Operator", workspace_id=workspace_id, member_id=member_id, role="admin",
                   permissions=(scope_rules.ALL,), status="active", assigned_only=False, plan=plan,
                   cloud_api_enabled=True)

    @classmethod
    def of_api_key(cls, credential: Credential, *, label: str) -> Caller:
        return cls(author=f"api_key:{credential.key_id}", label=label, workspace_id=credential.workspace_id,
                   member_id=credential.member_id, role=credential.member_role,
                   permissions=effective_permissions(credential.scopes, credential.member_permissions),
                   status=credential.member_status, assigned_only=assigned_only_member(credential) is not None,
                   plan=credential.plan, cloud_api_enabled=credential.cloud_api_enabled)

    @classmethod
    def of_session(cls, session: Session) -> Caller:
        """A member signed in to the dashboard: their own permissions (an admin holds them all)."""
        return cls(author=f"member:{session.member_id}", label=session.member_name,
                   workspace_id=session.workspace_id, member_id=session.member_id, role=session.role,
                   permissions=(scope_rules.ALL,) if session.role == "admin" else session.permissions,
                   status=session.member_status, assigned_only=session.assigned_only, plan=session.plan,
                   cloud_api_enabled=session.cloud_api_enabled)


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
