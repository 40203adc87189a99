"""The team report's figures over a window, each in one statement: conversations opened and resolved by the hour
of a time zone, first responses and resolution times with their median and 90th percentile (overall, per member,
per team), the SLA met, and the bot's hand-overs. Percentiles are PostgreSQL's `percentile_cont` (interpolated)."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record, UnitOfWork

Query = Database | UnitOfWork

# An agent's reply whose outcome is known and not a failure (as the Reporting API counts replies).
_REPLY = "m.direction = 'outbound' AND m.sender_type = 'agent' AND m.status NOT IN ('failed', 'pending')"


async def one_snapshot(tx: UnitOfWork) -> None:
    """The transaction's reads see one snapshot, and each statement is planned for its own parameters (the
    windows' widths differ by a hundredfold)."""
    await tx.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
    await tx.execute("SET LOCAL plan_cache_mode = force_custom_plan")


async def opened_by_hour(db: Query, workspace_id: int, start: datetime, end: datetime, zone: str) -> list[Record]:
    """Messages that opened a conversation in the window, counted by the hour they began in `zone` (local time)."""
    return await db.fetch(
        "SELECT date_trunc('hour', m.sent_at AT TIME ZONE $4) AS hour, count(*) AS count FROM messages m"
        " WHERE m.workspace_id = $1 AND m.opens_wait AND m.sent_at >= $2 AND m.sent_at < $3 GROUP BY 1",
        workspace_id, start, end, zone)


async def resolved_by_hour(db: Query, workspace_id: int, start: datetime, end: datetime,
                           zone: str) -> list[Record]:
    """Resolves in the window, counted by the hour they happened in `zone` (local time)."""
    return await db.fetch(
        "SELECT date_trunc('hour', e.at AT TIME ZONE $4) AS hour, count(*) AS count FROM assignment_events e"
        " JOIN conversations c ON c.id = e.conversation_id"
        " WHERE e.event = 'resolved' AND e.at >= $2 AND e.at < $3 AND c.workspace_id = $1 GROUP BY 1",
        workspace_id, start, end, zone)


_PERCENTILES = ("count(*) AS count, percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) AS median_seconds,"
                " percentile_cont(0.9) WITHIN GROUP (ORDER BY seconds) AS p90_seconds")


async def first_responses(db: Query, workspace_id: int, start: datetime, end: datetime) -> list[Record]:
    """The first agent reply to each wait for a person, sent in the window (as the team's performance counts them),
    summed overall (member_id and team_id NULL, `level` 'all'), per member (`level` 'member') and per team of the
    chat (`level` 'team'): how many, their median and 90th percentile seconds, and how many came after the wait's
    SLA deadline had passed (a breach was announced for it)."""
    return await db.fetch(
        f"""WITH first_replies AS (
              SELECT m.actor_id AS member_id, c.team_id, extract(epoch FROM m.sent_at - m.waited_from) AS seconds,
                     EXISTS (SELECT 1 FROM sla_breaches b WHERE b.conversation_id = m.conversation_id
                             AND b.deadline >= m.waited_from AND b.deadline < m.sent_at) AS late
              FROM messages m JOIN conversations c ON c.id = m.conversation_id
              WHERE m.workspace_id = $1 AND {_REPLY} AND m.sent_at >= $2 AND m.sent_at < $3
                AND m.waited_from IS NOT NULL AND m.actor_id IS NOT NULL
                AND NOT EXISTS (SELECT 1 FROM messages p WHERE p.conversation_id = m.conversation_id
                                AND p.direction = 'outbound' AND p.sender_type = 'agent'
                                AND p.status NOT IN ('failed', 'pending')
                                AND p.waited_from = m.waited_from AND (p.sent_at, p.id) < (m.sent_at, m.id)))
            SELECT CASE WHEN GROUPING(member_id) = 0 THEN 'member' WHEN GROUPING(team_id) = 0 THEN 'team'
                        ELSE 'all' END AS level, member_id, team_id, {_PERCENTILES},
                   count(*) FILTER (WHERE late) AS late
            FROM first_replies GROUP BY GROUPING SETS ((), (member_id), (team_id))""",
        workspace_id, start, end)


async def resolution_times(db: Query, workspace_id: int, start: datetime, end: datetime) -> list[Record]:
    """Each resolve in the window, timed from the customer's message that opened the conversation it closed (the
    latest opening before it; a resolve with none is counted, not timed: `timed`), summed overall, per member who
    resolved and per team of the chat, as `first_responses` sums (percentiles leave the untimed out)."""
    return await db.fetch(
        f"""WITH resolves AS (
              SELECT e.by_member AS member_id, c.team_id,
                     extract(epoch FROM e.at - (SELECT o.sent_at FROM messages o WHERE o.conversation_id = c.id
                                                AND o.opens_wait AND o.sent_at <= e.at
                                                ORDER BY o.sent_at DESC LIMIT 1)) AS seconds
              FROM assignment_events e JOIN conversations c ON c.id = e.conversation_id
              WHERE e.event = 'resolved' AND e.at >= $2 AND e.at < $3 AND c.workspace_id = $1)
            SELECT CASE WHEN GROUPING(member_id) = 0 THEN 'member' WHEN GROUPING(team_id) = 0 THEN 'team'
                        ELSE 'all' END AS level, member_id, team_id, {_PERCENTILES}, count(seconds) AS timed
            FROM resolves GROUP BY GROUPING SETS ((), (member_id), (team_id))""",
        workspace_id, start, end)


async def satisfaction(db: Query, workspace_id: int, start: datetime, end: datetime) -> list[Record]:
    """Satisfaction ratings that came in the window (1 to 5), summed overall, per member and per team the survey is
    credited to (the chat's at its resolve): how many, their mean, how many were 4 or 5 (satisfied), and how many of
    each value (`rated_<n>`)."""
    return await db.fetch(
        """SELECT CASE WHEN GROUPING(member_id) = 0 THEN 'member' WHEN GROUPING(team_id) = 0 THEN 'team'
                       ELSE 'all' END AS level, member_id, team_id, count(*) AS responses,
                  avg(rating)::float8 AS average, count(*) FILTER (WHERE rating >= 4) AS satisfied,
                  count(*) FILTER (WHERE rating = 5) AS rated_5, count(*) FILTER (WHERE rating = 4) AS rated_4,
                  count(*) FILTER (WHERE rating = 3) AS rated_3, count(*) FILTER (WHERE rating = 2) AS rated_2,
                  count(*) FILTER (WHERE rating = 1) AS rated_1
           FROM csat_surveys WHERE workspace_id = $1 AND rated_at >= $2 AND rated_at < $3
           GROUP BY GROUPING SETS ((), (member_id), (team_id))""",
        workspace_id, start, end)


async def bot_figures(db: Query, workspace_id: int, start: datetime, end: datetime) -> list[Record]:
    """The chats the bot worked in the window (it replied, or handed them over), and its hand-overs by reason: one
    row per reason (`reason` NULL: none), each with `chats` (the chats the bot worked) and `handed_over_chats`
    (distinct chats handed over), the same on every row."""
    return await db.fetch(
        """WITH handoffs AS (SELECT conversation_id, reason FROM bot_handoffs
                             WHERE workspace_id = $1 AND at >= $2 AND at < $3),
                replied AS (SELECT DISTINCT m.conversation_id FROM messages m
                            WHERE m.workspace_id = $1 AND m.direction = 'outbound' AND m.sender_type = 'bot'
                              AND m.sent_at >= $2 AND m.sent_at < $3),
                worked AS (SELECT conversation_id FROM replied UNION SELECT conversation_id FROM handoffs),
                totals AS (SELECT (SELECT count(*) FROM worked) AS chats,
                                  (SELECT count(DISTINCT conversation_id) FROM handoffs) AS handed_over_chats)
           SELECT t.chats, t.handed_over_chats, h.reason, h.count
           FROM totals t LEFT JOIN (SELECT reason, count(*) AS count FROM handoffs GROUP BY reason) h ON true
           ORDER BY h.count DESC NULLS LAST, h.reason""",
        workspace_id, start, end)


async def has_sla(db: Query, workspace_id: int) -> bool:
    """Whether the workspace holds its team to an SLA (a policy with a target)."""
    return bool(await db.fetchval("SELECT sla_seconds IS NOT NULL FROM workspaces WHERE id = $1", workspace_id))


async def members_and_teams(db: Query, workspace_id: int) -> tuple[list[Record], list[Record]]:
    """The workspace's members (oldest first, with their status and permissions) and teams (by name)."""
    people = await db.fetch("SELECT id, name, status, permissions FROM members WHERE workspace_id = $1 ORDER BY id",
                            workspace_id)
    teams = await db.fetch("SELECT id, name FROM teams WHERE workspace_id = $1 ORDER BY lower(name), id",
                           workspace_id)
    return people, teams
