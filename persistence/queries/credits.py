"""Credits: the balance, top-ups and refunds with their ledger entries, the ledger read newest first."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record, UnitOfWork

_ENTRY = ("l.id, l.delta, l.balance_after, l.reason, l.at, l.note, l.reference, l.member_id,"
          " mb.name AS member_name, m.platform_message_id")
_ENTRY_JOINS = " LEFT JOIN members mb ON mb.id = l.member_id LEFT JOIN messages m ON m.id = l.message_id"


async def balance(q: Database | UnitOfWork, workspace_id: int) -> int:
    return await q.fetchval("SELECT coalesce((SELECT balance FROM credit_accounts WHERE workspace_id = $1), 0)",
                            workspace_id)


async def top_up(tx: UnitOfWork, *, workspace_id: int, amount: int, member_id: int | None, note: str | None,
                 reference: str | None, at: datetime) -> tuple[Record, bool]:
    """Add `amount` and its ledger entry; (the entry as the ledger lists it, whether it is new). A top-up whose
    `reference` the workspace has used already adds nothing and answers that first entry. The account row is
    locked first, so two top-ups with one reference cannot both pass the check."""
    await tx.execute("INSERT INTO credit_accounts (workspace_id, updated_at) VALUES ($1, $2)"
                     " ON CONFLICT (workspace_id) DO NOTHING", workspace_id, at)
    await tx.execute("SELECT 1 FROM credit_accounts WHERE workspace_id = $1 FOR UPDATE", workspace_id)
    if reference is not None:
        earlier = await tx.fetchrow(f"SELECT {_ENTRY} FROM credit_ledger l{_ENTRY_JOINS}"
                                    " WHERE l.workspace_id = $1 AND l.reference = $2", workspace_id, reference)
        if earlier is not None:
            return earlier, False
    row = await tx.fetchrow(
        "WITH account AS (UPDATE credit_accounts SET balance = balance + $2, updated_at = $5 WHERE workspace_id = $1"
        "  RETURNING balance),"
        " l AS (INSERT INTO credit_ledger (workspace_id, delta, balance_after, reason, at, member_id, note, reference)"
        "  SELECT $1, $2, balance, 'top_up', $5, $3, $4, $6 FROM account RETURNING *)"
        f" SELECT {_ENTRY} FROM l{_ENTRY_JOINS}",
        workspace_id, amount, member_id, note, at, reference)
    return row, True


async def refund_send(tx: UnitOfWork, *, workspace_id: int, message_id: int, at: datetime) -> int | None:
    """Give back what a send was charged (it failed), once; the balance after, or None when nothing was due."""
    return await tx.fetchval(
        "WITH charged AS (SELECT -sum(delta) AS amount FROM credit_ledger WHERE message_id = $2 HAVING sum(delta) < 0),"
        " account AS (UPDATE credit_accounts SET balance = balance + (SELECT amount FROM charged), updated_at = $3"
        "  WHERE workspace_id = $1 AND EXISTS (SELECT 1 FROM charged) RETURNING balance),"
        " l AS (INSERT INTO credit_ledger (workspace_id, delta, balance_after, reason, at, message_id)"
        "  SELECT $1, charged.amount, account.balance, 'refund', $3, $2 FROM charged, account)"
        " SELECT balance FROM account",
        workspace_id, message_id, at)


async def alert_levels(q: Database | UnitOfWork, workspace_id: int) -> list[int]:
    """The webhook configuration's credit_alert_levels (none without a configuration)."""
    levels = await q.fetchval("SELECT credit_alert_levels FROM webhook_configs WHERE workspace_id = $1", workspace_id)
    return list(levels or [])


async def ledger(db: Database, workspace_id: int, *, start: datetime, end: datetime,
                 after: tuple[datetime, int] | None, limit: int) -> list[Record]:
    return await db.fetch(
        f"SELECT {_ENTRY} FROM credit_ledger l{_ENTRY_JOINS}"
        " WHERE l.workspace_id = $1 AND l.at >= $2 AND l.at < $3"
        " AND ($4::timestamptz IS NULL OR (l.at, l.id) < ($4, $5))"
        " ORDER BY l.at DESC, l.id DESC LIMIT $6",
        workspace_id, start, end, after[0] if after else None, after[1] if after else None, limit)
