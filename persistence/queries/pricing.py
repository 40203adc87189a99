"""The pricing sheets the AI agent quotes from: sheets (names unique in a workspace whatever their case), their
items, and the search of the items valid today (PostgreSQL's `current_date`) by name and notes."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from persistence.database import Database, Record, UnitOfWork

# A sheet with how many items it has and who changed it last.
_SHEET = ("SELECT s.id, s.name, s.created_at, s.updated_at, s.updated_by, m.name AS updated_by_name,"
          " (SELECT count(*) FROM pricing_items i WHERE i.sheet_id = s.id) AS items"
          " FROM pricing_sheets s LEFT JOIN members m ON m.id = s.updated_by")
_ITEM = "id, name, price, currency, unit, valid_from, valid_until, notes"
_VALID_TODAY = ("(i.valid_from IS NULL OR i.valid_from <= current_date)"
                " AND (i.valid_until IS NULL OR i.valid_until >= current_date)")


async def list_sheets(db: Database, workspace_id: int) -> list[Record]:
    """The workspace's sheets by name, with how many items each has."""
    return await db.fetch(
        f"{_SHEET} WHERE s.workspace_id = $1 ORDER BY lower(s.name), s.id", workspace_id)


async def find_sheet(q: Database | UnitOfWork, workspace_id: int, sheet_id: int, *,
                     for_update: bool = False) -> Record | None:
    """The sheet with how many items it has; with `for_update`, its row locked until the transaction ends (its
    items' writes take turns, so its limit holds)."""
    lock = " FOR UPDATE OF s" if for_update else ""
    return await q.fetchrow(f"{_SHEET} WHERE s.workspace_id = $1 AND s.id = $2{lock}", workspace_id, sheet_id)


async def count_sheets(q: Database | UnitOfWork, workspace_id: int) -> int:
    return await q.fetchval("SELECT count(*) FROM pricing_sheets WHERE workspace_id = $1", workspace_id)


async def insert_sheet(tx: UnitOfWork, workspace_id: int, name: str, member_id: int | None,
                       at: datetime) -> int | None:
    """The new sheet's id; None when the workspace has a sheet of that name already."""
    return await tx.fetchval(
        "INSERT INTO pricing_sheets (workspace_id, name, created_at, updated_at, updated_by)"
        " VALUES ($1, $2, $3, $3, $4) ON CONFLICT (workspace_id, lower(name)) DO NOTHING RETURNING id",
        workspace_id, name, at, member_id)


async def name_taken(q: Database | UnitOfWork, workspace_id: int, name: str, sheet_id: int) -> bool:
    """Whether another sheet of the workspace has this name, whatever its case."""
    return await q.fetchval(
        "SELECT EXISTS (SELECT 1 FROM pricing_sheets WHERE workspace_id = $1 AND lower(name) = lower($2)"
        " AND id <> $3)", workspace_id, name, sheet_id)


async def touch_sheet(tx: UnitOfWork, sheet_id: int, member_id: int | None, at: datetime, *,
                      name: str | None = None) -> None:
    """Record who changed the sheet (or its items) and when; with `name`, rename it."""
    await tx.execute("UPDATE pricing_sheets SET name = COALESCE($2, name), updated_at = $3, updated_by = $4"
                     " WHERE id = $1", sheet_id, name, at, member_id)


async def delete_sheet(tx: UnitOfWork, workspace_id: int, sheet_id: int) -> Record | None:
    """The removed sheet's name and how many items went with it; None when there is no such sheet."""
    return await tx.fetchrow(
        "WITH gone AS (DELETE FROM pricing_sheets WHERE workspace_id = $1 AND id = $2 RETURNING id, name)"
        " SELECT gone.name, (SELECT count(*) FROM pricing_items i WHERE i.sheet_id = gone.id) AS items FROM gone",
        workspace_id, sheet_id)


async def items(q: Database | UnitOfWork, sheet_id: int) -> list[Record]:
    return await q.fetch(f"SELECT {_ITEM} FROM pricing_items WHERE sheet_id = $1 ORDER BY id", sheet_id)


async def find_item(q: Database | UnitOfWork, workspace_id: int, sheet_id: int, item_id: int, *,
                    for_update: bool = False) -> Record | None:
    lock = " FOR UPDATE" if for_update else ""
    return await q.fetchrow(
        f"SELECT {_ITEM} FROM pricing_items WHERE workspace_id = $1 AND sheet_id = $2 AND id = $3{lock}",
        workspace_id, sheet_id, item_id)


async def insert_items(tx: UnitOfWork, workspace_id: int, sheet_id: int, names: list[str], prices: list[Decimal],
                       currencies: list[str], units: list[str], valid_froms: list[date | None],
                       valid_untils: list[date | None], notes: list[str]) -> list[Record]:
    """The items, in the order given (one statement, however many)."""
    return await tx.fetch(
        "INSERT INTO pricing_items (workspace_id, sheet_id, name, price, currency, unit, valid_from, valid_until,"
        " notes) SELECT $1, $2, t.name, t.price, t.currency, t.unit, t.valid_from, t.valid_until, t.notes"
        " FROM unnest($3::text[], $4::numeric[], $5::text[], $6::text[], $7::date[], $8::date[], $9::text[])"
        " WITH ORDINALITY AS t (name, price, currency, unit, valid_from, valid_until, notes, position)"
        f" ORDER BY t.position RETURNING {_ITEM}",
        workspace_id, sheet_id, names, prices, currencies, units, valid_froms, valid_untils, notes)


async def update_item(tx: UnitOfWork, item_id: int, name: str, price: Decimal, currency: str, unit: str,
                      valid_from: date | None, valid_until: date | None, notes: str) -> Record:
    return await tx.fetchrow(
        "UPDATE pricing_items SET name = $2, price = $3, currency = $4, unit = $5, valid_from = $6,"
        f" valid_until = $7, notes = $8 WHERE id = $1 RETURNING {_ITEM}",
        item_id, name, price, currency, unit, valid_from, valid_until, notes)


async def delete_item(tx: UnitOfWork, workspace_id: int, sheet_id: int, item_id: int) -> str | None:
    """The removed item's name; None when the sheet has no such item."""
    return await tx.fetchval(
        "DELETE FROM pricing_items WHERE workspace_id = $1 AND sheet_id = $2 AND id = $3 RETURNING name",
        workspace_id, sheet_id, item_id)


async def delete_items(tx: UnitOfWork, sheet_id: int) -> int:
    return int((await tx.execute("DELETE FROM pricing_items WHERE sheet_id = $1", sheet_id)).split()[-1])


async def quote(db: Database, workspace_id: int, words: str, prefixes: str, limit: int) -> list[Record]:
    """The items valid today whose name or notes match `words` (websearch_to_tsquery's syntax) or start with one
    of `prefixes` (to_tsquery's, "word:*" terms; "" for none), best first: a word matched whole outranks one
    matched as a prefix, a name outranks notes."""
    return await db.fetch(
        "WITH q AS (SELECT websearch_to_tsquery('simple', $2) AS words,"
        " CASE WHEN $3 = '' THEN NULL ELSE to_tsquery('simple', $3) END AS prefixes)"
        " SELECT i.id, s.name AS sheet, i.name, i.price, i.currency, i.unit, i.valid_until, i.notes,"
        " ts_rank_cd(i.search, q.words) + 0.5 * COALESCE(ts_rank_cd(i.search, q.prefixes), 0) AS rank"
        " FROM q, pricing_items i JOIN pricing_sheets s ON s.id = i.sheet_id"
        f" WHERE i.workspace_id = $1 AND (i.search @@ q.words OR i.search @@ q.prefixes) AND {_VALID_TODAY}"
        " ORDER BY rank DESC, i.id LIMIT $4", workspace_id, words, prefixes, limit)
