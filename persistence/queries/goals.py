"""Goals: a target for one figure of the team report, for the workspace, a team or a member."""

from __future__ import annotations

from persistence.database import Database, Record, UnitOfWork

_COLUMNS = ("g.id, g.metric, g.target, g.team_id, t.name AS team_name, g.member_id, m.name AS member_name,"
            " g.updated_at, g.updated_by, u.name AS updated_by_name")
_JOINS = ("FROM goals g LEFT JOIN teams t ON t.id = g.team_id LEFT JOIN members m ON m.id = g.member_id"
          " LEFT JOIN members u ON u.id = g.updated_by")


async def goals(q: Database | UnitOfWork, workspace_id: int) -> list[Record]:
    """The workspace's goals: the workspace's own first, then by team, then by member; by figure within each."""
    return await q.fetch(f"SELECT {_COLUMNS} {_JOINS} WHERE g.workspace_id = $1"
                         " ORDER BY g.team_id NULLS FIRST, g.member_id NULLS FIRST, g.metric", workspace_id)


async def find(q: Database | UnitOfWork, workspace_id: int, goal_id: int) -> Record | None:
    return await q.fetchrow(f"SELECT {_COLUMNS} {_JOINS} WHERE g.workspace_id = $1 AND g.id = $2",
                            workspace_id, goal_id)


async def put(tx: UnitOfWork, workspace_id: int, metric: str, target: float, team_id: int | None,
              member_id: int | None, by: int | None) -> int:
    """Set the subject's goal for the figure (made, or its target replaced): its id."""
    return await tx.fetchval(
        "INSERT INTO goals (workspace_id, metric, target, team_id, member_id, updated_by, updated_at)"
        " VALUES ($1, $2, $3, $4, $5, $6, now())"
        " ON CONFLICT (workspace_id, metric, coalesce(team_id, 0), coalesce(member_id, 0))"
        " DO UPDATE SET target = excluded.target, updated_by = excluded.updated_by, updated_at = now()"
        " RETURNING id", workspace_id, metric, target, team_id, member_id, by)


async def delete(tx: UnitOfWork, workspace_id: int, goal_id: int) -> bool:
    status = await tx.execute("DELETE FROM goals WHERE workspace_id = $1 AND id = $2", workspace_id, goal_id)
    return status.split()[-1] != "0"
