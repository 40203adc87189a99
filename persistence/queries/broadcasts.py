"""Broadcasts and their recipients: created with their audience in one transaction, moved between statuses by
their actor, recipients taken in order, and the counts a broadcast's progress is read from.

A recipient is claimed by the statement that commits its message as pending (queries/messages.py,
`insert_pending`); what happens to the message after that (sent, delivered, read, failed) is the message's
status, so the counts join the two rather than copy one into the other.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

import msgspec

from persistence.database import Database, Record, UnitOfWork

QUEUED = "queued"
CLAIMED = "claimed"
SKIPPED = "skipped"
FAILED = "failed"
CANCELLED = "cancelled"

_BROADCAST_COLUMNS = (
    "workspace_id", "name", "template_name", "template_language", "template_category", "parameters", "audience",
    "status", "approval_required", "scheduled_at", "created_by", "created_via", "recipient_count", "duplicate_count",
    "idempotency_key",
    "request_hash", "created_at", "started_at",
)


async def insert_broadcast(tx: UnitOfWork, **values: Any) -> Record | None:
    """The new broadcast; None when the workspace already has one with this Idempotency-Key."""
    unknown = set(values) - set(_BROADCAST_COLUMNS)
    if unknown:
        raise ValueError(f"not columns of a broadcast: {sorted(unknown)}")
    names = [name for name in _BROADCAST_COLUMNS if name in values]
    args = [msgspec.json.encode(values[name]).decode() if name == "audience" else values[name] for name in names]
    placeholders = ", ".join(f"${i}{'::jsonb' if name == 'audience' else ''}" for i, name in enumerate(names, 1))
    return await tx.fetchrow(
        f"INSERT INTO broadcasts ({', '.join(names)}) VALUES ({placeholders})"
        " ON CONFLICT (workspace_id, idempotency_key) DO NOTHING RETURNING *", *args)


async def insert_recipients(tx: UnitOfWork, broadcast_id: int, workspace_id: int, phones: Sequence[str],
                            parameters: Sequence[str | None]) -> int:
    """The audience, in order (`parameters`: each recipient's own as a JSON array, or None for the broadcast's).
    A contact that has opted out is skipped at once; how many were."""
    row = await tx.fetchrow(
        """
        WITH inserted AS (
            INSERT INTO broadcast_recipients (broadcast_id, position, phone, parameters, state, skip_reason)
            SELECT $1, r.position, r.phone,
                   CASE WHEN r.parameters IS NULL THEN NULL
                        ELSE ARRAY(SELECT jsonb_array_elements_text(r.parameters::jsonb)) END,
                   CASE WHEN k.opted_out THEN 'skipped' ELSE 'queued' END,
                   CASE WHEN k.opted_out THEN 'opted_out' END
            FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS r(phone, parameters, position)
            LEFT JOIN contacts k ON k.workspace_id = $2 AND k.phone = r.phone
            RETURNING state)
        SELECT count(*) FILTER (WHERE state = 'skipped') AS skipped FROM inserted
        """,
        broadcast_id, workspace_id, list(phones), list(parameters))
    return row["skipped"]


async def audience_phones(db: Database | UnitOfWork, workspace_id: int, *, tags: Sequence[str],
                          status: str | None, limit: int) -> list[str]:
    """Phones of the contacts matching a filter (every one of `tags`, the `status` when given), oldest contact
    first; at most `limit`."""
    rows = await db.fetch(
        "SELECT phone FROM contacts WHERE workspace_id = $1 AND tags @> $2::text[]"
        " AND ($3::text IS NULL OR status = $3) ORDER BY id LIMIT $4",
        workspace_id, list(tags), status, limit)
    return [row["phone"] for row in rows]


async def find_broadcast(db: Database | UnitOfWork, workspace_id: int, broadcast_id: int) -> Record | None:
    return await db.fetchrow("SELECT * FROM broadcasts WHERE workspace_id = $1 AND id = $2", workspace_id,
                             broadcast_id)


async def broadcast_by_id(db: Database | UnitOfWork, broadcast_id: int) -> Record | None:
    return await db.fetchrow("SELECT * FROM broadcasts WHERE id = $1", broadcast_id)


async def find_by_key(db: Database | UnitOfWork, workspace_id: int, key: str) -> Record | None:
    return await db.fetchrow("SELECT * FROM broadcasts WHERE workspace_id = $1 AND idempotency_key = $2",
                             workspace_id, key)


async def change_status(q: Database | UnitOfWork, broadcast_id: int, *, among: Sequence[str], to: str,
                        **values: Any) -> Record | None:
    """Move the broadcast to `to` if it is in one of `among` (with the other columns given); the row as it is
    then, or None when it was not in any of them."""
    allowed = {"paused_reason", "decided_by", "decided_at", "rejection_reason", "cancelled_by", "started_at",
               "finished_at"}
    if set(values) - allowed:
        raise ValueError(f"not changeable with a status: {sorted(set(values) - allowed)}")
    names = list(values)
    sets = "".join(f", {name} = ${i}" for i, name in enumerate(names, 4))
    return await q.fetchrow(
        f"UPDATE broadcasts SET status = $3{sets} WHERE id = $1 AND status = ANY($2::text[]) RETURNING *",
        broadcast_id, list(among), to, *(values[name] for name in names))


async def cancel_queued(tx: UnitOfWork, broadcast_id: int) -> int:
    """Every recipient not sent yet: cancelled (a send racing this finds its recipient no longer queued)."""
    status = await tx.execute("UPDATE broadcast_recipients SET state = 'cancelled', next_attempt_at = NULL"
                              " WHERE broadcast_id = $1 AND state = 'queued'", broadcast_id)
    return int(status.split()[-1])


async def queued_recipients(db: Database, broadcast_id: int, *, after_position: int, now: datetime,
                            limit: int) -> list[Record]:
    """The next recipients due to be sent, in order after `after_position`."""
    return await db.fetch(
        "SELECT position, phone, parameters, attempts FROM broadcast_recipients"
        " WHERE broadcast_id = $1 AND state = 'queued' AND position > $2"
        " AND (next_attempt_at IS NULL OR next_attempt_at <= $3) ORDER BY position LIMIT $4",
        broadcast_id, after_position, now, limit)


async def next_attempt_at(db: Database, broadcast_id: int) -> tuple[bool, datetime | None]:
    """(whether any recipient is still queued, the earliest time one waits for)."""
    row = await db.fetchrow(
        "SELECT count(*) > 0 AS any_queued, min(next_attempt_at) AS next_at FROM broadcast_recipients"
        " WHERE broadcast_id = $1 AND state = 'queued'", broadcast_id)
    return row["any_queued"], row["next_at"]


async def in_flight_recipients(db: Database, broadcast_id: int, limit: int) -> list[Record]:
    """Recipients claimed whose message is still pending, in order: position, phone and the message's id. An erased
    one (no phone) is done with."""
    return await db.fetch(
        "SELECT r.position, r.phone, r.message_id FROM broadcast_recipients r JOIN messages m ON m.id = r.message_id"
        " WHERE r.broadcast_id = $1 AND r.state = 'claimed' AND m.status = 'pending' AND r.phone IS NOT NULL"
        " ORDER BY r.position LIMIT $2",
        broadcast_id, limit)


async def requeue_given_up(tx: UnitOfWork, broadcast_id: int, message_id: int) -> None:
    """The recipient whose message `message_id` was just given up as never sent: queued again, due at once."""
    await tx.execute("UPDATE broadcast_recipients SET state = 'queued', next_attempt_at = NULL"
                     " WHERE broadcast_id = $1 AND message_id = $2 AND state = 'claimed'", broadcast_id, message_id)


async def retry_later(db: Database, broadcast_id: int, position: int, *, at: datetime, error_code: int | None,
                      error_text: str | None, claimed: bool) -> None:
    """Queued again for `at`: a send the platform refused for throughput (`claimed`: its failed message stays in
    the chat's history, the error is kept), or one that never reached its chat (still queued)."""
    await db.execute(
        "UPDATE broadcast_recipients SET state = 'queued', next_attempt_at = $3,"
        " error_code = coalesce($4, error_code), error_text = coalesce($5, error_text)"
        " WHERE broadcast_id = $1 AND position = $2 AND state = $6",
        broadcast_id, position, at, error_code, error_text, CLAIMED if claimed else QUEUED)


async def requeue_refused_for_throughput(db: Database, broadcast_id: int, *, code: int, max_attempts: int,
                                         at: datetime) -> int:
    """Recipients whose send the platform refused for throughput (`code`) but who were never queued again (the
    process stopped, or the database was away, between the refusal and its retry): queued for `at`."""
    status = await db.execute(
        "UPDATE broadcast_recipients r SET state = 'queued', next_attempt_at = $4, error_code = m.error_code,"
        " error_text = m.error_text FROM messages m"
        " WHERE r.broadcast_id = $1 AND r.state = 'claimed' AND m.id = r.message_id AND m.status = 'failed'"
        " AND m.error_code = $2 AND r.attempts < $3",
        broadcast_id, code, max_attempts, at)
    return int(status.split()[-1])


async def settle_recipient(db: Database, broadcast_id: int, position: int, *, state: str,
                           skip_reason: str | None = None, error_code: int | None = None,
                           error_text: str | None = None) -> None:
    """A recipient the broadcast is done with before the platform accepted anything: skipped or failed."""
    await db.execute(
        "UPDATE broadcast_recipients SET state = $3, skip_reason = $4, error_code = $5, error_text = $6,"
        " next_attempt_at = NULL WHERE broadcast_id = $1 AND position = $2 AND state IN ('queued', 'claimed')",
        broadcast_id, position, state, skip_reason, error_code, error_text)


async def progress(db: Database, broadcast_id: int, since: datetime) -> Record:
    """The counts of one broadcast; `sent_since`: messages accepted since `since` (its rate)."""
    return await db.fetchrow(
        """
        SELECT count(*) AS recipients,
               count(*) FILTER (WHERE r.state = 'queued') AS queued,
               count(*) FILTER (WHERE r.state = 'claimed' AND m.status = 'pending') AS in_flight,
               count(*) FILTER (WHERE r.state = 'claimed' AND m.status IN ('sent', 'delivered', 'read')) AS sent,
               count(*) FILTER (WHERE r.state = 'claimed' AND m.status IN ('delivered', 'read')) AS delivered,
               count(*) FILTER (WHERE r.state = 'claimed' AND m.status = 'read') AS read,
               count(*) FILTER (WHERE r.state = 'failed' OR (r.state = 'claimed' AND m.status = 'failed')) AS failed,
               count(*) FILTER (WHERE r.state = 'skipped') AS skipped,
               count(*) FILTER (WHERE r.state = 'cancelled') AS cancelled,
               count(*) FILTER (WHERE r.state = 'claimed' AND m.id IS NULL) AS erased,
               count(*) FILTER (WHERE r.state = 'claimed' AND m.status <> 'failed' AND m.status <> 'pending'
                                AND m.sent_at >= $2) AS sent_since
        FROM broadcast_recipients r LEFT JOIN messages m ON m.id = r.message_id
        WHERE r.broadcast_id = $1
        """,
        broadcast_id, since)


async def list_broadcasts(db: Database, workspace_id: int, *, status: str | None,
                          after: tuple[datetime, int] | None, limit: int) -> list[Record]:
    """The workspace's broadcasts, newest first, after a (created_at, id) cursor."""
    return await db.fetch(
        "SELECT * FROM broadcasts WHERE workspace_id = $1 AND ($2::text IS NULL OR status = $2)"
        " AND ($3::timestamptz IS NULL OR (created_at, id) < ($3, $4))"
        " ORDER BY created_at DESC, id DESC LIMIT $5",
        workspace_id, status, after[0] if after else None, after[1] if after else None, limit)


async def recipients_page(db: Database, broadcast_id: int, *, outcome: str | None, after_position: int,
                          limit: int) -> list[Record]:
    """Recipients in order after `after_position`, each with its message's status and error; `outcome` one of
    the progress buckets (queued, in_flight, sent, delivered, read, failed, skipped, cancelled) or None."""
    bucket = {
        None: "true",
        "queued": "r.state = 'queued'",
        "in_flight": "r.state = 'claimed' AND m.status = 'pending'",
        "sent": "r.state = 'claimed' AND m.status IN ('sent', 'delivered', 'read')",
        "delivered": "r.state = 'claimed' AND m.status IN ('delivered', 'read')",
        "read": "r.state = 'claimed' AND m.status = 'read'",
        "failed": "(r.state = 'failed' OR (r.state = 'claimed' AND m.status = 'failed'))",
        "skipped": "r.state = 'skipped'",
        "cancelled": "r.state = 'cancelled'",
    }[outcome]
    return await db.fetch(
        f"""
        SELECT r.position, r.phone, r.parameters, r.state, r.skip_reason, r.attempts, r.next_attempt_at,
               coalesce(m.error_code, r.error_code) AS error_code, coalesce(m.error_text, r.error_text) AS error_text,
               m.id AS message_id, m.platform_message_id, m.status AS message_status, m.status_at
        FROM broadcast_recipients r LEFT JOIN messages m ON m.id = r.message_id
        WHERE r.broadcast_id = $1 AND r.position > $2 AND {bucket}
        ORDER BY r.position LIMIT $3
        """,
        broadcast_id, after_position, limit)


async def due_broadcasts(db: Database, limit: int) -> list[Record]:
    """Broadcasts that should be sending: those sending (a restart resumes them) and those scheduled by now, by
    PostgreSQL's clock."""
    return await db.fetch(
        "SELECT id, workspace_id FROM broadcasts WHERE status = 'sending'"
        " OR (status = 'scheduled' AND scheduled_at <= now()) ORDER BY id LIMIT $1", limit)


async def due_in_workspace(db: Database, workspace_id: int, limit: int) -> list[Record]:
    """`due_broadcasts` of one workspace: what a node that has just taken the workspace resumes."""
    return await db.fetch(
        "SELECT id, workspace_id FROM broadcasts WHERE workspace_id = $1 AND (status = 'sending'"
        " OR (status = 'scheduled' AND scheduled_at <= now())) ORDER BY id LIMIT $2", workspace_id, limit)


async def next_scheduled(db: Database) -> tuple[datetime | None, datetime]:
    """The earliest scheduled time still to come, and PostgreSQL's time now."""
    row = await db.fetchrow("SELECT min(scheduled_at) AS next, now() AS now FROM broadcasts"
                            " WHERE status = 'scheduled' AND scheduled_at > now()")
    return row["next"], row["now"]


async def erase_recipient(tx: UnitOfWork, workspace_id: int, phone: str) -> None:
    """A contact's erasure: the number leaves every broadcast of the workspace; one not sent yet is skipped."""
    await tx.execute(
        "UPDATE broadcast_recipients SET phone = NULL, parameters = NULL,"
        " state = CASE WHEN state = 'queued' THEN 'skipped' ELSE state END,"
        " skip_reason = CASE WHEN state = 'queued' THEN 'erased' ELSE skip_reason END"
        " WHERE phone = $2 AND broadcast_id IN (SELECT id FROM broadcasts WHERE workspace_id = $1)",
        workspace_id, phone)
