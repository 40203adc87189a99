"""A workspace's teams and their members: named groups a member may be in any number of."""

from __future__ import annotations

from persistence.database import Database, Record, UnitOfWork

_COLUMNS = "id, name, description, queue_visible_to_assigned_only, created_by, updated_by, created_at, updated_at"


async def lock_teams(tx: UnitOfWork, workspace_id: int) -> None:
    """Serialise the transactions that add or rename a team of the workspace, so that its count and its names are
    judged one at a time."""
    await tx.execute("SELECT pg_advisory_xact_lock(hashtext('teams'), $1::int)", workspace_id % 2**31)


async def list_teams(q: Database | UnitOfWork, workspace_id: int, member_id: int | None = None) -> list[Record]:
    """The workspace's teams by name (only those `member_id` is in, when given)."""
    return await q.fetch(
        f"SELECT {_COLUMNS} FROM teams t WHERE workspace_id = $1"
        " AND ($2::bigint IS NULL OR EXISTS (SELECT 1 FROM team_members tm WHERE tm.team_id = t.id"
        "      AND tm.member_id = $2))"
        " ORDER BY lower(name), id", workspace_id, member_id)


async def team_members(q: Database | UnitOfWork, team_ids: list[int]) -> list[Record]:
    """The members of these teams who are still on the workspace's team (active or suspended), oldest member
    first: team_id, member_id, name, status, added_at."""
    return await q.fetch(
        "SELECT tm.team_id, m.id AS member_id, m.name, m.status, tm.added_at FROM team_members tm"
        " JOIN members m ON m.id = tm.member_id"
        " WHERE tm.team_id = ANY($1::bigint[]) AND m.status <> 'removed' ORDER BY tm.team_id, m.id", team_ids)


async def count_teams(q: Database | UnitOfWork, workspace_id: int) -> int:
    return await q.fetchval("SELECT count(*) FROM teams WHERE workspace_id = $1", workspace_id)


async def find_team(q: Database | UnitOfWork, workspace_id: int, team_id: int, *,
                    for_update: bool = False) -> Record | None:
    lock = " FOR UPDATE" if for_update else ""
    return await q.fetchrow(f"SELECT {_COLUMNS} FROM teams WHERE workspace_id = $1 AND id = $2{lock}",
                            workspace_id, team_id)


async def name_taken(q: Database | UnitOfWork, workspace_id: int, name: str, but_id: int) -> bool:
    """Whether another team of the workspace has this name, whatever its case."""
    return await q.fetchval("SELECT EXISTS (SELECT 1 FROM teams WHERE workspace_id = $1 AND lower(name) = lower($2)"
                            " AND id <> $3)", workspace_id, name, but_id)


async def insert_team(tx: UnitOfWork, workspace_id: int, name: str, description: str, queue_visible: bool,
                      member_id: int | None) -> Record | None:
    """The new team; None when the workspace has a team of that name already."""
    return await tx.fetchrow(
        "INSERT INTO teams (workspace_id, name, description, queue_visible_to_assigned_only, created_by, updated_by)"
        f" VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (workspace_id, lower(name)) DO NOTHING RETURNING {_COLUMNS}",
        workspace_id, name, description, queue_visible, member_id)


async def update_team(tx: UnitOfWork, team_id: int, name: str, description: str, queue_visible: bool,
                      member_id: int | None) -> Record:
    return await tx.fetchrow(
        "UPDATE teams SET name = $2, description = $3, queue_visible_to_assigned_only = $4, updated_by = $5,"
        f" updated_at = now() WHERE id = $1 RETURNING {_COLUMNS}", team_id, name, description, queue_visible,
        member_id)


async def touch_team(tx: UnitOfWork, team_id: int, member_id: int | None) -> None:
    """Its members changed: who changed it, and when."""
    await tx.execute("UPDATE teams SET updated_by = $2, updated_at = now() WHERE id = $1", team_id, member_id)


async def delete_team(tx: UnitOfWork, team_id: int) -> None:
    """The team and its memberships."""
    await tx.execute("DELETE FROM teams WHERE id = $1", team_id)


async def add_team_member(tx: UnitOfWork, team_id: int, member_id: int, added_by: int | None) -> bool:
    """Whether the member was added (False: already in the team)."""
    added = await tx.fetchval(
        "INSERT INTO team_members (team_id, member_id, added_by) VALUES ($1, $2, $3)"
        " ON CONFLICT (team_id, member_id) DO NOTHING RETURNING true", team_id, member_id, added_by)
    return bool(added)


async def remove_team_member(tx: UnitOfWork, team_id: int, member_id: int) -> bool:
    """Whether the member was in the team (and is no longer)."""
    status = await tx.execute("DELETE FROM team_members WHERE team_id = $1 AND member_id = $2", team_id, member_id)
    return status.split()[-1] != "0"


async def workspace_member(q: Database | UnitOfWork, workspace_id: int, member_id: int) -> Record | None:
    """A member of the workspace (id, name, status), to be put in a team."""
    return await q.fetchrow("SELECT id, name, status FROM members WHERE workspace_id = $1 AND id = $2",
                            workspace_id, member_id)
