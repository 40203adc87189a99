"""Test data made through the same operator actions the CLI uses."""

from __future__ import annotations

import itertools

from inbox_actors.access import accounts
from inbox_actors.access.key_ring import IssuedKey
from persistence.database import Database

_names = itertools.count(1)


async def workspace(db: Database, plan: str = "scale") -> int:
    created = await accounts.create_workspace(db, name=f"Workspace {next(_names)}", plan=plan)
    return created.workspace_id


async def member(db: Database, workspace_id: int, role: str = "admin", permissions: list[str] | None = None,
                 assigned_only: bool = False) -> int:
    return await accounts.add_member(db, workspace_id=workspace_id, name=f"Member {next(_names)}", role=role,
                                     permissions=permissions, assigned_only=assigned_only)


async def key(db: Database, workspace_id: int, member_id: int, scopes: tuple[str, ...] = ("all",),
              **options) -> IssuedKey:
    return await accounts.create_key(db, workspace_id=workspace_id, member_id=member_id,
                                     name=f"key {next(_names)}", scopes=list(scopes), **options)


async def plaintext_key(db: Database, plan: str = "scale", role: str = "admin",
                        scopes: tuple[str, ...] = ("all",), permissions: list[str] | None = None,
                        **options) -> IssuedKey:
    """A key in a workspace of its own, created by a new member."""
    workspace_id = await workspace(db, plan)
    member_id = await member(db, workspace_id, role, permissions)
    return await key(db, workspace_id, member_id, scopes, **options)
