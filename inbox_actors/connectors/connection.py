"""The authentication test (`GET …/me`): who a connection is, as a platform shows it."""

from __future__ import annotations

from inbox_actors.connectors.model import Connection, KeyRef, MemberRef, Platform, WorkspaceRef
from inbox_actors.domain import events
from inbox_actors.domain.auth_ladder import Credential
from persistence.database import Database
from persistence.queries import connectors as queries


async def connection(db: Database, credential: Credential, platform: Platform) -> Connection | None:
    """None when the key's rows are gone (deleted between the guard and here)."""
    row = await queries.connection(db, credential.key_id)
    if row is None:
        return None
    return Connection(
        platform=platform.value, label=f"{row['workspace_name']} ({row['member_name']}, key {row['key_name']})",
        workspace=WorkspaceRef(id=row["workspace_id"], name=row["workspace_name"], plan=row["plan"]),
        key=KeyRef(id=row["key_id"], name=row["key_name"], scopes=list(row["scopes"])),
        member=MemberRef(user_id=row["member_id"], name=row["member_name"], email=row["member_email"],
                         role=row["member_role"]),
        events=list(events.events_in_plan(credential.plan)))
