"""Idempotency keys of sends: one row per (workspace, key).

A row is a reservation while `response_status` is 0 (the request is in progress; `response_body` is `{}`), and
the remembered answer once it holds the HTTP status. `created_at` is when the key was (last) reserved: it ages
the key out after its lifetime, tells an abandoned reservation from a live one, and identifies the
reservation (only its holder completes or releases it). `message_id` is the message the request committed as
pending before it called the platform (persistence/queries/messages.py `insert_pending`): from then on the key
is neither released nor taken over as abandoned, since something may have gone out; whoever settles the message
(its outcome, a status webhook, giving up) stores the answer on the key in the same transaction.

jsonb crosses asyncpg as text: bodies are passed encoded and returned as text.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from persistence.database import Database, Record, UnitOfWork

IN_PROGRESS = 0


async def reserve(
    db: Database | UnitOfWork, *, workspace_id: int, key: str, request_hash: bytes, now: datetime | None,
    lifetime: timedelta, abandoned_after: timedelta,
) -> datetime | None:
    """Reserve the key for this request; the reservation's time, or None when a live row holds the key.

    One statement, so two callers racing for the same key cannot both win: the loser waits on the winner's
    row and then sees it. An existing row is taken over only when it has expired (reserved more than `lifetime`
    ago) or is an abandoned reservation of the very same request (in progress for more than `abandoned_after`)
    that never committed a message. "Now" is PostgreSQL's clock unless a test names it (`now`): no node's clock
    shortens or stretches a key's life.
    """
    return await db.fetchval(
        """
        INSERT INTO idempotent_requests AS r
            (workspace_id, idempotency_key, request_hash, response_status, response_body, created_at)
        VALUES ($1, $2, $3, 0, '{}', coalesce($4::timestamptz, now()))
        ON CONFLICT (workspace_id, idempotency_key) DO UPDATE
            SET request_hash = EXCLUDED.request_hash, response_status = 0, response_body = '{}',
                created_at = EXCLUDED.created_at, message_id = NULL
            WHERE r.created_at < EXCLUDED.created_at - $5::interval
               OR (r.response_status = 0 AND r.created_at < EXCLUDED.created_at - $6::interval
                   AND r.request_hash = EXCLUDED.request_hash AND r.message_id IS NULL)
        RETURNING created_at
        """,
        workspace_id, key, request_hash, now, lifetime, abandoned_after,
    )


async def find(db: Database | UnitOfWork, workspace_id: int, key: str) -> Record | None:
    """request_hash, response_status, response_body (JSON text), created_at and message_id of the key, if any,
    with its message's status, platform_message_id, source (the channel), error_code and error_text."""
    return await db.fetchrow(
        "SELECT r.request_hash, r.response_status, r.response_body::text AS response_body, r.created_at,"
        " r.message_id, m.status, m.platform_message_id, m.source, m.error_code, m.error_text"
        " FROM idempotent_requests r LEFT JOIN messages m ON m.id = r.message_id"
        " WHERE r.workspace_id = $1 AND r.idempotency_key = $2",
        workspace_id, key,
    )


async def complete(db: Database | UnitOfWork, *, workspace_id: int, key: str, reserved_at: datetime,
                   status: int, body_json: str) -> bool:
    """Store the answer on the caller's reservation; False when the reservation is no longer the caller's."""
    result = await db.execute(
        "UPDATE idempotent_requests SET response_status = $4, response_body = $5::jsonb"
        " WHERE workspace_id = $1 AND idempotency_key = $2 AND created_at = $3 AND response_status = 0",
        workspace_id, key, reserved_at, status, body_json,
    )
    return result == "UPDATE 1"


async def complete_for_message(tx: UnitOfWork, *, workspace_id: int, key: str, message_id: int, status: int,
                               body_json: str) -> bool:
    """Store the answer on the key whose request committed `message_id`, if it is still unanswered."""
    result = await tx.execute(
        "UPDATE idempotent_requests SET response_status = $4, response_body = $5::jsonb"
        " WHERE workspace_id = $1 AND idempotency_key = $2 AND message_id = $3 AND response_status = 0",
        workspace_id, key, message_id, status, body_json,
    )
    return result == "UPDATE 1"


async def release(db: Database | UnitOfWork, *, workspace_id: int, key: str, reserved_at: datetime) -> bool:
    """Drop the caller's reservation (nothing was answered, no message committed); False when it is no longer
    the caller's or a message is linked to it."""
    result = await db.execute(
        "DELETE FROM idempotent_requests WHERE workspace_id = $1 AND idempotency_key = $2 AND created_at = $3"
        " AND response_status = 0 AND message_id IS NULL",
        workspace_id, key, reserved_at,
    )
    return result == "DELETE 1"


async def delete_older_than(db: Database | UnitOfWork, lifetime: timedelta, now: datetime | None = None) -> int:
    """Keys reserved more than `lifetime` before now: PostgreSQL's clock unless a test names it."""
    result = await db.execute(
        "DELETE FROM idempotent_requests WHERE created_at < coalesce($2::timestamptz, now()) - $1::interval",
        lifetime, now)
    return int(result.split()[-1])
