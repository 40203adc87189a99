"""Messages of a chat, their delivery receipts, and the life of an outbound message: committed `pending` before the
platform is called, then sent (with the platform's id) or failed; a pending one a crash left is settled later by
a status carrying its id (`find_unsettled`), or given up (`in_doubt_for`)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import NamedTuple

from persistence.database import Database, Record, UnitOfWork
from persistence.queries import outbox

_MESSAGE_COLUMNS = (
    "workspace_id", "conversation_id", "platform_message_id", "direction", "sender_type", "actor_id",
    "sender_label", "type", "text", "template_name", "template_language", "template_parameters", "media_url",
    "filename", "status", "source", "error_code", "error_text", "answers_message_id", "waited_from", "sent_at",
    "status_at", "recipient", "idempotency_key", "broadcast_id", "media_id", "mime_type", "opens_wait",
)
PENDING = "pending"


async def insert_message(tx: UnitOfWork, *, unless_stored: bool = False, **values) -> Record | None:
    """The new message. `unless_stored`: None instead when the workspace already has its platform id (a platform
    retry), found by the insert itself rather than a read before it."""
    sql, args = message_insert(values, unless_stored=unless_stored)
    return await tx.fetchrow(sql, *args)


def message_insert(values: dict, *, unless_stored: bool, first: int = 1) -> tuple[str, list]:
    """`insert_message`'s INSERT ... RETURNING *, as SQL whose parameters are numbered from $`first`, and its
    arguments (a part of a larger statement: `conversations.update_conversation_with_message`)."""
    names = [name for name in _MESSAGE_COLUMNS if name in values]
    unknown = set(values) - set(_MESSAGE_COLUMNS)
    if unknown:
        raise ValueError(f"unknown message columns: {sorted(unknown)}")
    placeholders = ", ".join(f"${i}" for i in range(first, first + len(names)))
    skip = " ON CONFLICT (workspace_id, platform_message_id) DO NOTHING" if unless_stored else ""
    return (f"INSERT INTO messages ({', '.join(names)}) VALUES ({placeholders}){skip} RETURNING *",
            [values[name] for name in names])


def as_inserted(values: dict) -> dict:
    """The row `message_insert` makes of `values` before the database gave it an id (None) and its defaults:
    what an event built ahead of the statement may say of it."""
    return {**{name: None for name in _MESSAGE_COLUMNS}, "id": None, **values}


class PendingInsert(NamedTuple):
    message: Record | None              # the pending message; None when nothing was inserted
    opted_out: bool = False             # why not: the contact has opted out
    short_of_credits: bool = False      # why not: the balance does not cover the charge (else: the key was not held)
    balance: int | None = None          # with a charge: the balance after it (or, when short, as it stood)
    not_queued: bool = False            # why not: the broadcast recipient is no longer queued (sent or cancelled)


async def insert_pending(q: Database | UnitOfWork, *, answers_latest_of: int | None = None,
                         claim: tuple[str, datetime] | None = None, unless_opted_out: bool = False,
                         charge: int = 0, broadcast_position: int | None = None, model_call: int | None = None,
                         **values) -> PendingInsert:
    """Commit an outbound message as `pending`, in one statement. `answers_latest_of`: a conversation whose
    customer's last word the message answers. `claim` (key, reserved_at): an Idempotency-Key reservation the
    message is linked to in the same statement, only while the caller still holds it with nothing linked yet.
    `unless_opted_out`: only if the recipient's contact (workspace_id, recipient) has not opted out, read in the
    same statement (the consent rule, without a round trip of its own). `charge`: credits the send costs, debited
    from the workspace's balance in the same statement with its ledger entry (nothing is inserted, and nothing
    debited, when the balance does not cover it; the balance never goes below zero, however many sends race).
    `broadcast_position`: with `broadcast_id` among the values, the broadcast recipient the message is for, claimed
    in the same statement while it is still queued (nothing is inserted otherwise: a recipient never gets a
    broadcast twice, whatever crashed or was cancelled in between). `model_call`: the AI agent's model call whose
    answer this message is, linked to it in the same statement."""
    names = [name for name in _MESSAGE_COLUMNS if name in values]
    unknown = set(values) - set(_MESSAGE_COLUMNS)
    if unknown or "status" in values:
        raise ValueError(f"not columns of a pending message: {sorted(unknown | ({'status'} & set(values)))}")
    args = [values[name] for name in names]

    def arg(value: object) -> str:
        args.append(value)
        return f"${len(args)}"

    expressions = [f"${i}" for i in range(1, len(args) + 1)]
    names.append("status")
    expressions.append(f"'{PENDING}'")
    if answers_latest_of is not None:
        names.append("answers_message_id")
        expressions.append(f"(SELECT id FROM messages WHERE conversation_id = {arg(answers_latest_of)}"
                           " AND sender_type = 'customer' ORDER BY sent_at DESC, id DESC LIMIT 1)")
    workspace = arg(values["workspace_id"]) if unless_opted_out or claim is not None or charge else ""
    queued = recipient = ""
    held_recipient = "true"
    if broadcast_position is not None:
        broadcast, position = arg(values["broadcast_id"]), arg(broadcast_position)
        queued = f"""queued AS (
                SELECT 1 FROM broadcast_recipients
                WHERE broadcast_id = {broadcast} AND position = {position} AND state = 'queued' FOR UPDATE),"""
        held_recipient = "EXISTS (SELECT 1 FROM queued)"
        recipient = f""",
            recipient AS (
                UPDATE broadcast_recipients SET state = 'claimed', message_id = (SELECT id FROM pending),
                       attempts = attempts + 1, next_attempt_at = NULL
                WHERE broadcast_id = {broadcast} AND position = {position} AND EXISTS (SELECT 1 FROM pending))"""
    conditions = ["NOT (SELECT opted_out FROM consent)"]
    if broadcast_position is not None:
        conditions.insert(0, held_recipient)
    consent = "SELECT false AS opted_out"
    if unless_opted_out:
        consent = (f"SELECT coalesce((SELECT opted_out FROM contacts WHERE workspace_id = {workspace}"
                   f" AND phone = {arg(values['recipient'])}), false) AS opted_out")
    held = linked = ""
    if claim is not None:
        key, reserved_at = arg(claim[0]), arg(claim[1])
        # The reservation's row is locked for the statement: a retry taking it over waits, then finds a message
        # linked and leaves it alone (persistence/queries/idempotency.py).
        held = f"""held AS (
                SELECT 1 FROM idempotent_requests
                WHERE workspace_id = {workspace} AND idempotency_key = {key} AND created_at = {reserved_at}
                  AND response_status = 0 AND message_id IS NULL
                FOR UPDATE),"""
        conditions.append("EXISTS (SELECT 1 FROM held)")
        linked = f""",
            linked AS (
                UPDATE idempotent_requests SET message_id = (SELECT id FROM pending)
                WHERE workspace_id = {workspace} AND idempotency_key = {key} AND EXISTS (SELECT 1 FROM pending))"""
    debit = charged = ""
    balance = "NULL::bigint"
    if charge:
        price, at = arg(charge), arg(values["sent_at"])
        # The AI agent's replies are charged too (docs/ai-agent.md#costs-and-credits), under a reason of their own.
        reason = "'ai_reply'" if values.get("sender_type") == "bot" else "'template_send'"
        # After consent and the key: a send that may not go out is not charged.
        debit = f"""debit AS (
                UPDATE credit_accounts SET balance = balance - {price}, updated_at = {at}
                WHERE workspace_id = {workspace} AND balance >= {price} AND {' AND '.join(conditions)}
                RETURNING balance),"""
        conditions.append("EXISTS (SELECT 1 FROM debit)")
        charged = f""",
            charged AS (INSERT INTO credit_ledger (workspace_id, delta, balance_after, reason, at, message_id,
                                                   broadcast_id)
                        SELECT {workspace}, -{price}, debit.balance, {reason}, {at}, pending.id,
                               pending.broadcast_id
                        FROM debit, pending)"""
        balance = (f"coalesce((SELECT balance FROM debit),"
                   f" (SELECT balance FROM credit_accounts WHERE workspace_id = {workspace}), 0)")
    grounded = ""
    if model_call is not None:
        grounded = f""",
            grounded AS (UPDATE ai_model_calls SET message_id = (SELECT id FROM pending)
                         WHERE id = {arg(model_call)} AND EXISTS (SELECT 1 FROM pending))"""
    row = await q.fetchrow(
        f"""WITH consent AS ({consent}), {queued} {held} {debit}
            pending AS (INSERT INTO messages ({', '.join(names)}) SELECT {', '.join(expressions)}
                        WHERE {' AND '.join(conditions)} RETURNING *){linked}{charged}{recipient}{grounded}
            SELECT consent.opted_out AS consent_opted_out, {balance} AS credit_balance,
                   {held_recipient} AS recipient_queued, pending.*
            FROM consent LEFT JOIN pending ON true""",
        *args,
    )
    if row["id"] is None:
        if not row["recipient_queued"]:
            return PendingInsert(None, not_queued=True)
        # Without a key to lose, a charged send that went in is short of credits. The statement's own read of the
        # balance is its snapshot, from before sends that committed while it waited for the account's lock: the
        # balance is read again for the answer.
        short = bool(charge) and not row["consent_opted_out"] and (claim is None or row["credit_balance"] < charge)
        balance = row["credit_balance"]
        if short:
            balance = await q.fetchval("SELECT coalesce((SELECT balance FROM credit_accounts WHERE workspace_id = $1),"
                                       " 0)", values["workspace_id"])
        return PendingInsert(None, opted_out=row["consent_opted_out"], short_of_credits=short,
                             balance=balance if charge else None)
    return PendingInsert(row, balance=row["credit_balance"] if charge else None)


async def record_outcome(tx: UnitOfWork, message_id: int, *, status: str, at: datetime,
                         conversation_id: int | None = None, platform_message_id: str | None = None,
                         error_code: int | None = None, error_text: str | None = None,
                         sent_at: datetime | None = None) -> Record:
    """A send's outcome on its row: `status` (sent or failed) at `at`, the platform's id or the error, the chat
    (when the send made it) and `sent_at` (when given: the time a reply is clocked at)."""
    sql, args = outcome_update(message_id, status=status, at=at, conversation_id=conversation_id,
                               platform_message_id=platform_message_id, error_code=error_code, error_text=error_text,
                               sent_at=sent_at)
    return await tx.fetchrow(f"{sql} RETURNING *", *args)


def outcome_update(message_id: int, *, status: str, at: datetime, conversation_id: int | None = None,
                   platform_message_id: str | None = None, error_code: int | None = None,
                   error_text: str | None = None, sent_at: datetime | None = None, first: int = 1,
                   when: str = "", conversation_id_from: str = "") -> tuple[str, list]:
    """`record_outcome`'s UPDATE, as SQL whose parameters are numbered from $`first`, and its arguments: a part of
    a larger statement (the chat's commit, `conversations.update_conversation` or `make_chat`). `when`: a
    condition it also needs. `conversation_id_from`: a CTE of that statement which makes the chat, whose id the
    message gets (instead of `conversation_id`). What it leaves on the row is `as_recorded`'s."""
    n = first
    made = f"(SELECT id FROM {conversation_id_from}), " if conversation_id_from else ""
    sql = (f"UPDATE messages SET status = ${n + 1}, status_at = ${n + 2}, conversation_id = coalesce({made}${n + 3},"
           f" conversation_id), platform_message_id = coalesce(${n + 4}, platform_message_id), error_code = ${n + 5},"
           f" error_text = ${n + 6}, sent_at = coalesce(${n + 7}, sent_at) WHERE id = ${n}"
           + (f" AND {when}" if when else ""))
    return sql, [message_id, status, at, conversation_id, platform_message_id, error_code, error_text, sent_at]


def as_recorded(message: Record, *, status: str, at: datetime, conversation_id: int | None = None,
                platform_message_id: str | None = None, error_code: int | None = None, error_text: str | None = None,
                sent_at: datetime | None = None) -> dict:
    """The row `outcome_update` leaves of `message` as it was read: for a statement that writes it as one of its
    parts, and so answers no row of its own."""
    row = dict(message.items())
    row.update(status=status, status_at=at, error_code=error_code, error_text=error_text)
    for name, value in (("conversation_id", conversation_id), ("platform_message_id", platform_message_id),
                        ("sent_at", sent_at)):
        if value is not None:
            row[name] = value
    return row


async def find_unsettled(q: Database | UnitOfWork, workspace_id: int, message_id: int, *,
                         conversation_id: int | None, recipient: str) -> Record | None:
    """The outbound message `message_id` of this chat (or, while the chat has no row, to `recipient`) that has no
    platform id: pending (its answer was lost), or failed without one (given up, or a timeout the platform had
    in fact accepted)."""
    return await q.fetchrow(
        "SELECT * FROM messages WHERE id = $1 AND workspace_id = $2 AND direction = 'outbound'"
        " AND platform_message_id IS NULL AND status IN ('pending', 'failed')"
        " AND (conversation_id = $3 OR (conversation_id IS NULL AND recipient = $4))",
        message_id, workspace_id, conversation_id, recipient,
    )


async def give_up(tx: UnitOfWork, workspace_id: int, message_id: int, *, at: datetime, conversation_id: int | None,
                  error_code: int, error_text: str) -> Record | None:
    """A message still pending recorded as failed (in the chat `conversation_id`, if it has none yet); None when
    it is pending no more."""
    return await tx.fetchrow(
        "UPDATE messages SET status = 'failed', status_at = $3, conversation_id = coalesce(conversation_id, $4),"
        " error_code = $5, error_text = $6 WHERE id = $2 AND workspace_id = $1 AND status = 'pending' RETURNING *",
        workspace_id, message_id, at, conversation_id, error_code, error_text,
    )


async def in_doubt_for(q: Database | UnitOfWork, lifetime: timedelta, limit: int) -> list[Record]:
    """Pending messages committed more than `lifetime` ago by PostgreSQL's clock, oldest first: id, workspace_id and
    the chat's phone."""
    return await q.fetch(
        "SELECT m.id, m.workspace_id, coalesce(c.phone, m.recipient) AS phone FROM messages m"
        " LEFT JOIN conversations c ON c.id = m.conversation_id"
        " WHERE m.status = 'pending' AND m.sent_at < now() - $1::interval ORDER BY m.sent_at, m.id LIMIT $2",
        lifetime, limit,
    )


async def find_by_platform_id(q: Database | UnitOfWork, workspace_id: int, platform_message_id: str) -> Record | None:
    return await q.fetchrow("SELECT * FROM messages WHERE workspace_id = $1 AND platform_message_id = $2",
                            workspace_id, platform_message_id)


async def lock_by_platform_id(tx: UnitOfWork, workspace_id: int, platform_message_id: str) -> Record | None:
    """The message, locked for the transaction (a status is judged against it; see the status writer)."""
    return await tx.fetchrow("SELECT * FROM messages WHERE workspace_id = $1 AND platform_message_id = $2 FOR UPDATE",
                             workspace_id, platform_message_id)


async def lock_for_statuses(tx: UnitOfWork, workspace_id: int, platform_message_ids: list[str],
                            message_ids: list[int]) -> list[Record]:
    """The workspace's messages the statuses name (by platform id, or by row id for callback data), locked for the
    transaction, each with its chat's phone (a pending first send: its recipient) and whether that chat waits for
    an answer the message could be (`chat_waiting`; a broadcast's message is never one)."""
    return await tx.fetch(
        "SELECT m.id, m.platform_message_id, m.direction, m.status, coalesce(c.phone, m.recipient) AS phone,"
        " (m.broadcast_id IS NULL AND (c.waiting_since IS NOT NULL OR c.waiting_for_person_since IS NOT NULL))"
        " AS chat_waiting"
        " FROM messages m LEFT JOIN conversations c ON c.id = m.conversation_id"
        " WHERE m.workspace_id = $1 AND (m.platform_message_id = ANY($2::text[]) OR m.id = ANY($3::bigint[]))"
        " ORDER BY m.id FOR UPDATE OF m",
        workspace_id, platform_message_ids, message_ids)


async def record_statuses(tx: UnitOfWork, receipts: list[tuple[int, str, datetime]],
                          moves: list[tuple[int, str, datetime, int | None, str | None]], *,
                          workspace_id: int, events: list[outbox.Event]) -> None:
    """Receipts (message id, status, at; a platform retry's is kept once), the messages' new statuses (message id,
    status, status_at, error code and text, kept when None) and the workspace's `events` for the outbox: one
    statement, the unit of work's last, which commits it (`fetchrow_then_commit`)."""
    args: list = [[r[0] for r in receipts], [r[1] for r in receipts], [r[2] for r in receipts],
                  [m[0] for m in moves], [m[1] for m in moves], [m[2] for m in moves], [m[3] for m in moves],
                  [m[4] for m in moves]]
    queued = ""
    if events:
        queue, queued_args = outbox.events_insert(workspace_id, events, first=len(args) + 1)
        queued = f", queued AS ({queue})"
        args += queued_args
    await tx.fetchrow_then_commit(
        "WITH receipt AS (INSERT INTO receipts (message_id, status, at)"
        "  SELECT * FROM unnest($1::bigint[], $2::text[], $3::timestamptz[])"
        "  ON CONFLICT (message_id, status) DO NOTHING),"
        " moved AS (UPDATE messages m SET status = u.status, status_at = u.at,"
        "  error_code = coalesce(u.error_code, m.error_code), error_text = coalesce(u.error_text, m.error_text)"
        "  FROM unnest($4::bigint[], $5::text[], $6::timestamptz[], $7::integer[], $8::text[])"
        "  AS u(id, status, at, error_code, error_text)"
        f"  WHERE m.id = u.id RETURNING 1){queued}"
        " SELECT count(*) FROM moved",
        *args,
    )


async def record_status(tx: UnitOfWork, message_id: int, status: str, at: datetime, *, advance: bool,
                        error_code: int | None = None, error_text: str | None = None) -> tuple[bool, Record | None]:
    """Record one receipt and, when `advance`, make `status` the message's: one statement. (Whether the
    receipt is new, i.e. not a platform retry; the message as updated, None when not advanced.)"""
    row = await tx.fetchrow(
        "WITH receipt AS (INSERT INTO receipts (message_id, status, at) VALUES ($1, $2, $3)"
        "  ON CONFLICT (message_id, status) DO NOTHING RETURNING 1),"
        " moved AS (UPDATE messages SET status = $2, status_at = $3, error_code = coalesce($4, error_code),"
        "  error_text = coalesce($5, error_text) WHERE id = $1 AND $6 RETURNING *)"
        " SELECT EXISTS (SELECT 1 FROM receipt) AS new_receipt, moved.* FROM (SELECT 1) AS one"
        " LEFT JOIN moved ON true",
        message_id, status, at, error_code, error_text, advance,
    )
    return row["new_receipt"], (row if advance else None)


async def recent_words(q: Database | UnitOfWork, conversation_id: int, limit: int) -> list[Record]:
    """The chat's latest messages with text, newest first, as its bot reads them: who spoke and what they said
    (failed sends were never said)."""
    return await q.fetch(
        "SELECT id, direction, sender_type, text FROM messages WHERE conversation_id = $1 AND text IS NOT NULL"
        " AND text <> '' AND status <> 'failed' ORDER BY id DESC LIMIT $2", conversation_id, limit)


async def latest_customer_message(q: Database | UnitOfWork, conversation_id: int) -> Record | None:
    """The customer's last word: by the platform's timestamps, which all customer messages share (a late
    redelivery of an older message is not the last word), then by the order stored."""
    return await q.fetchrow(
        "SELECT * FROM messages WHERE conversation_id = $1 AND sender_type = 'customer'"
        " ORDER BY sent_at DESC, id DESC LIMIT 1",
        conversation_id,
    )
