"""Credits: the workspace's balance, the price of template sends, top-ups and the ledger.

Template sends are charged when they are committed (before the platform is called: exactly-once sends and
charges go together), refunded when the platform refuses them, and a send the balance cannot cover is refused
(402) with nothing sent and nothing debited; the balance never goes below zero, however many sends race
(persistence/queries/messages.py `insert_pending`). Every change is a ledger entry with the balance after it:
`template_send` (with its message), `refund` (with its message), `top_up` (with who topped up and their note).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated

import msgspec

from inbox_actors.domain.credit_prices import TemplatePrices
from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.paging import cursors, parameters
from inbox_actors.paging.windows import Window, window
from persistence.database import Database, Record
from persistence.queries import credits as queries

Args = Mapping[str, str | None]
MAX_TOP_UP = 10_000_000
DEFAULT_LIMIT = 50
CURSOR_KIND = "credit-ledger"
LEDGER_WINDOW = (90, 3650)          # (default days, longest days)


class ReferenceUsed(Exception):
    """A top-up's reference names an earlier top-up of another amount (answered 409 reference_used)."""


class TopUp(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    amount: Annotated[int, msgspec.Meta(ge=1, le=MAX_TOP_UP)]
    note: Annotated[str, msgspec.Meta(max_length=500)] | None = None
    # A payment's id, say: a top-up repeating a reference credits nothing and answers the first one.
    reference: Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=r"^[\x21-\x7e]+$")] | None = None


class Prices(msgspec.Struct, frozen=True):
    marketing: int
    utility: int
    authentication: int


class CreditBalance(msgspec.Struct, frozen=True):
    balance: int
    metered: bool                    # whether template sends cost credits on this service
    template_prices: Prices
    alert_levels: list[int]          # the webhook configuration's credit_alert_levels


class LedgerEntry(msgspec.Struct, frozen=True):
    id: int
    at: datetime
    delta: int
    balance_after: int
    reason: str                      # template_send, refund, top_up
    message_id: str | None           # the send's platform id (template_send, refund)
    member: MemberRef | None         # who topped up
    note: str | None
    reference: str | None


class Ledger(msgspec.Struct, frozen=True):
    data: list[LedgerEntry]
    next_cursor: str | None
    window: Window


class ToppedUp(msgspec.Struct, frozen=True):
    balance: int
    entry: LedgerEntry
    replayed: bool                   # the reference was used before: nothing was added this time


async def read_balance(db: Database, workspace_id: int, prices: TemplatePrices) -> CreditBalance:
    return CreditBalance(await queries.balance(db, workspace_id), prices.metered,
                         Prices(prices.marketing, prices.utility, prices.authentication),
                         sorted(await queries.alert_levels(db, workspace_id), reverse=True))


async def top_up(db: Database, workspace_id: int, member_id: int | None, body: TopUp, now: datetime) -> ToppedUp:
    note = (body.note.strip() or None) if body.note is not None else None
    async with db.transaction() as tx:
        row, new = await queries.top_up(tx, workspace_id=workspace_id, amount=body.amount, member_id=member_id,
                                        note=note, reference=body.reference, at=now)
        balance = await queries.balance(tx, workspace_id)
    if not new and row["delta"] != body.amount:
        raise ReferenceUsed(f"The reference {body.reference} was used for a top-up of {row['delta']:,} credits; "
                            "a new top-up needs a new reference.")
    return ToppedUp(balance, _entry(row), replayed=not new)


async def ledger(db: Database, workspace_id: int, args: Args, now: datetime) -> Ledger:
    limit = parameters.limit(args.get("limit"), DEFAULT_LIMIT)
    position = cursors.decode(args, CURSOR_KIND, datetime, datetime, datetime, int)
    span = Window(position[0], position[1]) if position else window(args, now, LEDGER_WINDOW)
    rows = await queries.ledger(db, workspace_id, start=span.start, end=span.end,
                                after=(position[2], position[3]) if position else None, limit=limit + 1)
    page, more = rows[:limit], len(rows) > limit
    next_cursor = (cursors.encode(CURSOR_KIND, args, span.start, span.end, page[-1]["at"], page[-1]["id"])
                   if more else None)
    return Ledger([_entry(row) for row in page], next_cursor, span)


def _entry(row: Record) -> LedgerEntry:
    member = MemberRef(row["member_id"], row["member_name"]) if row["member_id"] else None
    return LedgerEntry(row["id"], row["at"], row["delta"], row["balance_after"], row["reason"],
                       row["platform_message_id"], member, row["note"], row["reference"])
