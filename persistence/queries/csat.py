"""Customer satisfaction: the workspace's survey settings and each survey offered after a resolve, with the rating
and comment it got. A survey's row is written by its chat's conversation actor only."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record, UnitOfWork

_SURVEY_COLUMNS = (
    "s.id, s.conversation_id, c.phone, s.member_id, m.name AS member_name, s.team_id, t.name AS team_name,"
    " s.resolved_at, s.status, s.created_at, s.rating, s.rated_at, s.comment_invited_at, s.comment, s.commented_at")
_SURVEY_JOINS = ("FROM csat_surveys s JOIN conversations c ON c.id = s.conversation_id"
                 " LEFT JOIN members m ON m.id = s.member_id LEFT JOIN teams t ON t.id = s.team_id")


async def settings(q: Database | UnitOfWork, workspace_id: int) -> Record | None:
    """The workspace's saved settings (None: never saved, surveys are off), with who saved them."""
    return await q.fetchrow(
        "SELECT s.enabled, s.question, s.thanks, s.updated_at, s.updated_by, m.name AS updated_by_name"
        " FROM csat_settings s LEFT JOIN members m ON m.id = s.updated_by WHERE s.workspace_id = $1", workspace_id)


async def save_settings(tx: UnitOfWork, workspace_id: int, enabled: bool, question: str, thanks: str,
                        member_id: int | None) -> None:
    await tx.execute(
        "INSERT INTO csat_settings (workspace_id, enabled, question, thanks, updated_by, updated_at)"
        " VALUES ($1, $2, $3, $4, $5, now()) ON CONFLICT (workspace_id) DO UPDATE SET enabled = excluded.enabled,"
        " question = excluded.question, thanks = excluded.thanks, updated_by = excluded.updated_by,"
        " updated_at = excluded.updated_at", workspace_id, enabled, question, thanks, member_id)


async def start_survey(tx: UnitOfWork, workspace_id: int, conversation_id: int, member_id: int | None,
                       team_id: int | None, resolved_at: datetime) -> int:
    """A survey about to be sent (made at PostgreSQL's now, which its lifetime counts from): its id, which its
    choices carry."""
    return await tx.fetchval(
        "INSERT INTO csat_surveys (workspace_id, conversation_id, member_id, team_id, resolved_at, created_at)"
        " VALUES ($1, $2, $3, $4, $5, now()) RETURNING id", workspace_id, conversation_id, member_id, team_id,
        resolved_at)


async def sent(q: Database | UnitOfWork, survey_id: int, message_id: int | None, status: str) -> None:
    """What became of the survey's send: `sent` (or in doubt: the platform may have it), or `not_sent`."""
    await q.execute("UPDATE csat_surveys SET message_id = $2, status = $3 WHERE id = $1", survey_id, message_id,
                    status)


async def find_survey(q: Database | UnitOfWork, conversation_id: int, survey_id: int) -> Record | None:
    """The chat's survey with that id, locked (a rating and a comment on it are judged one at a time), and
    PostgreSQL's clock (`db_now`), which its time rules read."""
    return await q.fetchrow("SELECT id, member_id, team_id, resolved_at, status, created_at, rating, rated_at,"
                            " comment_invited_at, comment, commented_at, now() AS db_now FROM csat_surveys"
                            " WHERE conversation_id = $1 AND id = $2 FOR UPDATE", conversation_id, survey_id)


async def team_name(q: Database | UnitOfWork, team_id: int) -> str | None:
    return await q.fetchval("SELECT name FROM teams WHERE id = $1", team_id)


_ANSWERED = ("RETURNING id, member_id, team_id, resolved_at, rating, rated_at, comment, commented_at,"
             " now() AS db_now")


async def rate(tx: UnitOfWork, survey_id: int, rating: int, at: datetime) -> Record:
    """The survey as rated (what `csat_received` says of it)."""
    return await tx.fetchrow(f"UPDATE csat_surveys SET rating = $2, rated_at = $3 WHERE id = $1 {_ANSWERED}",
                             survey_id, rating, at)


async def invite_comment(q: Database | UnitOfWork, survey_id: int) -> bool:
    """Mark the survey's comment as invited now (PostgreSQL's clock); False when it was invited before."""
    status = await q.execute("UPDATE csat_surveys SET comment_invited_at = now()"
                             " WHERE id = $1 AND comment_invited_at IS NULL", survey_id)
    return status.split()[-1] != "0"


async def comment(tx: UnitOfWork, survey_id: int, text: str, at: datetime) -> Record:
    """The survey as commented on."""
    return await tx.fetchrow(f"UPDATE csat_surveys SET comment = $2, commented_at = $3 WHERE id = $1 {_ANSWERED}",
                             survey_id, text, at)


async def latest_of_chat(q: Database | UnitOfWork, conversation_id: int) -> Record | None:
    """The chat's newest survey that was sent (its rating, if any, is what the chat shows)."""
    return await q.fetchrow(f"SELECT {_SURVEY_COLUMNS} {_SURVEY_JOINS}"
                            " WHERE s.conversation_id = $1 AND s.status = 'sent' ORDER BY s.id DESC LIMIT 1",
                            conversation_id)


async def responses(q: Database | UnitOfWork, workspace_id: int, start: datetime, end: datetime, *,
                    before_id: int | None, limit: int, team_id: int | None = None,
                    member_id: int | None = None) -> list[Record]:
    """Rated surveys whose rating came in [start, end), newest first, after the cursor `before_id`."""
    return await q.fetch(
        f"SELECT {_SURVEY_COLUMNS} {_SURVEY_JOINS}"
        " WHERE s.workspace_id = $1 AND s.rated_at >= $2 AND s.rated_at < $3"
        " AND ($4::bigint IS NULL OR s.id < $4) AND ($5::bigint IS NULL OR s.team_id = $5)"
        " AND ($6::bigint IS NULL OR s.member_id = $6)"
        " ORDER BY s.id DESC LIMIT $7", workspace_id, start, end, before_id, team_id, member_id, limit)
