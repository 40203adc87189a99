"""The workspace a script drives the service with, made straight in its database: a Scale workspace (no plan limit
is what a script measures), an admin and a full-access key whose rate limit nothing reaches."""

from __future__ import annotations

import os
from dataclasses import dataclass

from inbox_actors.access import accounts
from persistence.database import Database

KEY_LIMIT_PER_MINUTE = 100_000     # the highest a key may have


@dataclass(frozen=True)
class Workspace:
    workspace_id: int
    phone_number_id: str
    key: str


async def make_workspace(db: Database, name: str) -> Workspace:
    """A Scale workspace, its admin and a full-access key whose rate limit nothing here reaches."""
    created = await accounts.create_workspace(db, name=name, plan="scale")
    admin = await accounts.add_member(db, workspace_id=created.workspace_id, name="Bench admin", role="admin",
                                      email="admin@bench.example.com")
    issued = await accounts.create_key(db, workspace_id=created.workspace_id, member_id=admin,
                                       name=f"bench {os.getpid()}", scopes=["all"],
                                       rate_limit_per_minute=KEY_LIMIT_PER_MINUTE)
    return Workspace(created.workspace_id, created.phone_number_id, issued.key)
