"""Conversations: the chat rows the conversation actor writes (with its version check) and the reads."""

from __future__ import annotations

from datetime import datetime
from types import MappingProxyType
from typing import Any, Callable, Mapping, NamedTuple, Sequence

import asyncpg

from persistence.database import Database, Record, UnitOfWork
from persistence.queries import outbox

# Columns a conversation actor may change; anything else in `changes` is a programming error.
_WRITABLE = frozenset({
    "state", "channel", "handover_reason", "handover_at", "assigned_to", "claimed_by", "claimed_at",
    "resolved_at", "last_customer_message_at", "waiting_since", "waiting_for_person_since", "sla_deadline_at",
    "unread_count", "unread_since", "labels", "count_messages", "count_from_customer", "count_from_bot",
    "last_message_id", "last_activity_at", "sla_breach_announced_for", "snoozed", "snoozed_until",
    "last_customer_message_id", "team_id", "csat_survey_id",
})


class VersionConflict(RuntimeError):
    """The row's version moved under the writer: another owner wrote the chat. The writer must reload."""


# The SQLSTATE of inbox_version_conflict() (migration 023).
_VERSION_CONFLICT = "IA409"


async def find_conversation(q: Database | UnitOfWork, workspace_id: int, phone: str) -> Record | None:
    sql, args = conversation_query(workspace_id, phone)
    return await q.fetchrow(sql, *args)


def conversation_query(workspace_id: int, phone: str) -> tuple[str, tuple]:
    """`find_conversation`'s statement and arguments (for `Database.fetchrow_each`)."""
    return "SELECT * FROM conversations WHERE workspace_id = $1 AND phone = $2", (workspace_id, phone)


async def insert_conversation(tx: UnitOfWork, *, workspace_id: int, phone: str, contact_id: int,
                              at: datetime) -> Record:
    return await tx.fetchrow(
        "INSERT INTO conversations (workspace_id, phone, contact_id, last_activity_at, created_at, updated_at)"
        " VALUES ($1, $2, $3, $4, $4, $4) RETURNING *",
        workspace_id, phone, contact_id, at,
    )


class FirstContact(NamedTuple):
    contact: Record
    created: bool
    """Whether this statement created the contact (else the chat's number already had one)."""
    conversation: Record


async def insert_first_contact(tx: UnitOfWork, *, workspace_id: int, phone: str, name: str,
                               at: datetime) -> FirstContact | None:
    """A chat's first contact in one statement: its contact made unless the number has one, and its conversation.
    None when the contact could not be read in it: another transaction made the contact while this statement
    waited for it, and the statement's snapshot does not see it (nothing was written: make them one by one)."""
    row = await tx.fetchrow(
        "WITH made AS (INSERT INTO contacts (workspace_id, phone, name) VALUES ($1, $2, $3)"
        "  ON CONFLICT (workspace_id, phone) DO NOTHING RETURNING *),"
        " contact AS (SELECT * FROM made UNION ALL"
        "  SELECT * FROM contacts WHERE workspace_id = $1 AND phone = $2 AND NOT EXISTS (SELECT 1 FROM made)),"
        " chat AS (INSERT INTO conversations (workspace_id, phone, contact_id, last_activity_at, created_at,"
        "  updated_at) SELECT $1, $2, id, $4, $4, $4 FROM contact RETURNING *)"
        " SELECT (SELECT c::contacts FROM contact c) AS contact, EXISTS (SELECT 1 FROM made) AS created,"
        "  (SELECT x::conversations FROM chat x) AS conversation",
        workspace_id, phone, name, at,
    )
    if row["conversation"] is None:
        return None
    return FirstContact(row["contact"], row["created"], row["conversation"])


NEW_CONVERSATION: Mapping[str, Any] = MappingProxyType({
    "state": "AI_ONLY", "channel": "whatsapp", "handover_reason": None, "handover_at": None, "assigned_to": None,
    "claimed_by": None, "claimed_at": None, "resolved_at": None, "last_customer_message_at": None,
    "waiting_since": None, "waiting_for_person_since": None, "sla_deadline_at": None, "unread_count": 0,
    "unread_since": None, "labels": [], "count_messages": 0, "count_from_customer": 0, "count_from_bot": 0,
    "last_message_id": None, "sla_breach_announced_for": None, "snoozed": False, "snoozed_until": None,
    "version": 1,
})
"""A chat's row as the schema makes it (migrations 001, 004, 005, 019; tests/integration check they agree), but
for its identity and times: what a new chat's first changes are computed from (`make_chat`)."""


Part = Callable[[int, str], tuple[str, list]]
"""A write that goes in a chat's commit statement: given its first parameter number and the condition it must
also meet (the commit's own), its SQL (one data-modifying statement) and arguments."""


async def update_conversation(tx: UnitOfWork, row: Record, changes: dict[str, Any], at: datetime,
                              events: list[outbox.Event] | None = None, parts: Sequence[Part] = ()) -> Record:
    """Write `changes` if the row is still at the version `row` was read at; bump the version; queue `events` for
    the outbox; and make the other writes `parts`: one statement, the unit of work's last, which commits it
    (`fetchrow_then_commit`). Raises VersionConflict otherwise (nothing written, nothing committed: every part
    is conditioned on the row's update)."""
    sql, args = _chat_update(row, changes, at, "")
    ctes = []
    written = "EXISTS (SELECT 1 FROM chat)"
    for n, part in enumerate(parts):
        part_sql, part_args = part(len(args) + 1, written)
        ctes.append(f"part{n} AS ({part_sql})")
        args += part_args
    if events:
        queue, queued_args = outbox.events_insert(row["workspace_id"], events, first=len(args) + 1, when=written)
        ctes.append(f"queued AS ({queue})")
        args += queued_args
    if ctes:
        sql = f"WITH chat AS ({sql}), {', '.join(ctes)} SELECT * FROM chat"
    updated = await tx.fetchrow_then_commit(sql, *args)
    if updated is None:
        raise VersionConflict(f"conversation {row['id']} is no longer at version {row['version']}")
    return updated


async def make_chat(tx: UnitOfWork, *, workspace_id: int, phone: str, name: str, at: datetime,
                    changes: dict[str, Any], contact_event: outbox.Event, events: list[outbox.Event],
                    parts: Sequence[Part] = ()) -> Record | None:
    """A chat's first commit in one statement: its contact made unless the number has one (`contact_event`, its
    `contact_created`, queued first then), its conversation made with `changes` on NEW_CONVERSATION's values,
    `events` queued and the other writes `parts` made (conditioned as `update_conversation`'s, the chat's id
    in the CTE `chat`); the unit of work's last statement, which commits it. The new row; or None when the
    contact could not be read: another transaction made it while this statement waited, and the statement's
    snapshot does not see it. Nothing was written then: make them one by one (`insert_first_contact`)."""
    unknown = set(changes) - _WRITABLE
    if unknown or NEW_MESSAGE_ID in changes.values():
        raise ValueError(f"not writable in a chat's first commit: {sorted(unknown) or 'NEW_MESSAGE_ID'}")
    args: list[Any] = [workspace_id, phone, name, at]
    columns = {"last_activity_at": at, **changes}
    for value in columns.values():
        args.append(value)
    values = ", ".join(f"${n}" for n in range(5, len(args) + 1))
    written = "EXISTS (SELECT 1 FROM chat)"
    ctes = [
        "made AS (INSERT INTO contacts (workspace_id, phone, name, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)"
        " ON CONFLICT (workspace_id, phone) DO NOTHING RETURNING id)",
        "contact AS (SELECT id FROM made UNION ALL"
        " SELECT id FROM contacts WHERE workspace_id = $1 AND phone = $2 AND NOT EXISTS (SELECT 1 FROM made))",
        f"chat AS (INSERT INTO conversations (workspace_id, phone, contact_id, created_at, updated_at,"
        f" {', '.join(columns)}) SELECT $1, $2, id, $4, $4, {values} FROM contact RETURNING *)"]
    for n, part in enumerate(parts):
        part_sql, part_args = part(len(args) + 1, written)
        ctes.append(f"part{n} AS ({part_sql})")
        args += part_args
    queue, queued_args = outbox.events_insert(workspace_id, [contact_event, *events], first=len(args) + 1,
                                              when=written, first_when="EXISTS (SELECT 1 FROM made)")
    ctes.append(f"queued AS ({queue})")
    args += queued_args
    return await tx.fetchrow_then_commit(f"WITH {', '.join(ctes)} SELECT * FROM chat", *args)


NEW_MESSAGE_ID = object()
"""In the changes of `update_conversation_with_message`: the id of the message it stores."""


async def update_conversation_with_message(tx: UnitOfWork, row: Record, changes: dict[str, Any], at: datetime,
                                           message: Callable[[int], tuple[str, list]],
                                           events: list[outbox.Event]) -> tuple[Record, Record] | None:
    """Store a new message (`message(first)`: an INSERT ... RETURNING * whose parameters are numbered from
    $`first`, and its arguments, doing nothing when the message is stored already), and with it write `changes`
    (NEW_MESSAGE_ID standing for its id) if the row is still at the version `row` was read at, and queue `events`
    (an event whose data's "id" is null gets the message's): one statement, the unit of work's last, which
    commits it. (The chat's new row, the message), or None when the message was stored before (nothing written;
    the unit goes on uncommitted). Raises VersionConflict when the row moved: the statement then fails as a
    whole (migration 023), so it needs no transaction around it when it is the unit's only statement."""
    sql, args = _chat_update(row, changes, at, " AND EXISTS (SELECT 1 FROM stored)")
    stored, message_args = message(len(args) + 1)
    args += message_args
    queue, queued_args = outbox.events_insert(row["workspace_id"], events, first=len(args) + 1,
                                              when="EXISTS (SELECT 1 FROM chat)", message_id_from="stored")
    args += queued_args
    try:
        result = await tx.fetchrow_then_commit(
            f"WITH stored AS ({stored}), chat AS ({sql}), queued AS ({queue})"
            " SELECT (SELECT c::conversations FROM chat c) AS chat, (SELECT m::messages FROM stored m) AS message,"
            " CASE WHEN EXISTS (SELECT 1 FROM stored) AND NOT EXISTS (SELECT 1 FROM chat)"
            "  THEN inbox_version_conflict($1) END AS conflict",
            *args, commits=lambda answered: answered["chat"] is not None)
    except asyncpg.PostgresError as err:
        if err.sqlstate == _VERSION_CONFLICT:
            raise VersionConflict(f"conversation {row['id']} is no longer at version {row['version']}") from None
        raise
    if result["chat"] is not None:
        return result["chat"], result["message"]
    return None


def _chat_update(row: Record, changes: dict[str, Any], at: datetime, condition: str) -> tuple[str, list]:
    """The version-checked UPDATE of the chat's row (parameters $1..$3, then one a change in order, but for
    NEW_MESSAGE_ID: the stored message's id), and its arguments."""
    unknown = set(changes) - _WRITABLE
    if unknown:
        raise ValueError(f"not writable: {sorted(unknown)}")
    args = [row["id"], row["version"], at]
    assignments = []
    for name, value in changes.items():
        if value is NEW_MESSAGE_ID:
            assignments.append(f"{name} = (SELECT id FROM stored)")
        else:
            args.append(value)
            assignments.append(f"{name} = ${len(args)}")
    sql = (f"UPDATE conversations SET {', '.join([*assignments, 'version = version + 1'])}, updated_at = $3"
           f" WHERE id = $1 AND version = $2{condition} RETURNING *")
    return sql, args


async def insert_assignment_event(tx: UnitOfWork, *, conversation_id: int, event: str, at: datetime,
                                  from_member: int | None, to_member: int | None, by_member: int | None,
                                  reason: str | None) -> None:
    await tx.execute(
        "INSERT INTO assignment_events (conversation_id, event, at, from_member, to_member, by_member, reason)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7)",
        conversation_id, event, at, from_member, to_member, by_member, reason,
    )


async def insert_view(tx: UnitOfWork, *, conversation_id: int, member_id: int, via: str, at: datetime,
                      marked_read: int) -> None:
    """Record an open; it has seen every message stored so far (judged by stored order, not timestamps)."""
    await tx.execute(
        "INSERT INTO conversation_views (conversation_id, member_id, via, opened_at, marked_read,"
        " seen_through_message_id) VALUES ($1, $2, $3, $4, $5,"
        " (SELECT coalesce(max(id), 0) FROM messages WHERE conversation_id = $1))",
        conversation_id, member_id, via, at, marked_read,
    )


async def last_view_by(tx: UnitOfWork, conversation_id: int, member_id: int) -> Record | None:
    """The member's latest view of the chat (id, opened_at), if any."""
    return await tx.fetchrow(
        "SELECT id, opened_at FROM conversation_views WHERE conversation_id = $1 AND member_id = $2"
        " ORDER BY opened_at DESC, id DESC LIMIT 1",
        conversation_id, member_id,
    )


async def add_marked_read(tx: UnitOfWork, view_id: int, marked_read: int) -> None:
    """A repeated open within the view's minute: its messages count on that view, which now has seen them."""
    await tx.execute(
        "UPDATE conversation_views SET marked_read = marked_read + $2, seen_through_message_id ="
        " (SELECT coalesce(max(id), 0) FROM messages WHERE conversation_id = conversation_views.conversation_id)"
        " WHERE id = $1",
        view_id, marked_read)


async def record_sla_breach(tx: UnitOfWork, workspace_id: int, conversation_id: int, deadline: datetime,
                            assigned_to: int | None, at: datetime) -> None:
    await tx.execute("INSERT INTO sla_breaches (workspace_id, conversation_id, deadline, assigned_to, at)"
                     " VALUES ($1, $2, $3, $4, $5)", workspace_id, conversation_id, deadline, assigned_to, at)


async def member_names(q: Database | UnitOfWork, member_ids: list[int]) -> dict[int, str]:
    if not member_ids:
        return {}
    rows = await q.fetch("SELECT id, name FROM members WHERE id = ANY($1::bigint[])", member_ids)
    return {row["id"]: row["name"] for row in rows}


_DETAIL = """
SELECT c.*, k.name AS contact_name, k.email AS contact_email, k.company AS contact_company,
       k.status AS contact_status, k.tags AS contact_tags,
       a.name AS assigned_to_name, cb.name AS claimed_by_name,
       m.platform_message_id AS last_platform_message_id, m.sender_type AS last_sender_type,
       m.sent_at AS last_sent_at, m.text AS last_text, m.type AS last_type, m.template_name AS last_template_name,
       t.id AS team_ref_id, t.name AS team_name,
       r.rating AS csat_rating, r.comment AS csat_comment, r.rated_at AS csat_rated_at
FROM conversations c
JOIN contacts k ON k.id = c.contact_id
LEFT JOIN members a ON a.id = c.assigned_to
LEFT JOIN members cb ON cb.id = c.claimed_by
LEFT JOIN messages m ON m.id = c.last_message_id
LEFT JOIN teams t ON t.id = c.team_id
LEFT JOIN LATERAL (SELECT s.rating, s.comment, s.rated_at FROM csat_surveys s
                   WHERE s.conversation_id = c.id AND s.rated_at IS NOT NULL ORDER BY s.id DESC LIMIT 1) r ON true
"""


async def conversation_detail(q: Database | UnitOfWork, workspace_id: int, phone: str) -> Record | None:
    """The chat with what its detail shows: contact, assignee names, last message."""
    return await q.fetchrow(_DETAIL + " WHERE c.workspace_id = $1 AND c.phone = $2", workspace_id, phone)


async def chat_ids_by_phone(q: Database | UnitOfWork, workspace_id: int, phones: list[str]) -> dict[str, int]:
    rows = await q.fetch("SELECT id, phone FROM conversations WHERE workspace_id = $1 AND phone = ANY($2::text[])",
                         workspace_id, phones)
    return {row["phone"]: row["id"] for row in rows}


async def workspace_member_ids(q: Database | UnitOfWork, workspace_id: int, member_ids: list[int]) -> set[int]:
    rows = await q.fetch("SELECT id FROM members WHERE workspace_id = $1 AND id = ANY($2::bigint[])",
                         workspace_id, member_ids)
    return {row["id"] for row in rows}


async def insert_audit_assignment_events(tx: UnitOfWork, events: list[tuple]) -> int:
    """Assignment events rebuilt from an earlier team audit log (conversation id, event, at, from, to, by, reason),
    `source: audit`; one already imported (the same fields) is not added again. How many were added."""
    if not events:
        return 0
    columns = list(zip(*events))
    result = await tx.execute(
        "INSERT INTO assignment_events (conversation_id, event, at, from_member, to_member, by_member, reason, source)"
        " SELECT e.*, 'audit' FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::bigint[], $5::bigint[],"
        "  $6::bigint[], $7::text[]) AS e(conversation_id, event, at, from_member, to_member, by_member, reason)"
        " WHERE NOT EXISTS (SELECT 1 FROM assignment_events x WHERE x.source = 'audit'"
        "  AND x.conversation_id = e.conversation_id AND x.event = e.event AND x.at = e.at"
        "  AND x.from_member IS NOT DISTINCT FROM e.from_member AND x.to_member IS NOT DISTINCT FROM e.to_member"
        "  AND x.by_member IS NOT DISTINCT FROM e.by_member)",
        *[list(column) for column in columns])
    return int(result.split()[-1])


async def chats_the_bot_may_owe(q: Database | UnitOfWork, workspace_id: int, within_seconds: float,
                                limit: int) -> list[str]:
    """The phones of the workspace's chats whose customer waits for an answer while the bot is theirs to answer
    (AI_ONLY), their last word at most `within_seconds` old by PostgreSQL's clock: the turns a node that lost the
    workspace may have left mid-way. Newest first."""
    rows = await q.fetch(
        "SELECT phone FROM conversations WHERE workspace_id = $1 AND state = 'AI_ONLY' AND waiting_since IS NOT NULL"
        " AND last_customer_message_at > now() - make_interval(secs => $2)"
        " ORDER BY last_customer_message_at DESC LIMIT $3", workspace_id, within_seconds, limit)
    return [row["phone"] for row in rows]
