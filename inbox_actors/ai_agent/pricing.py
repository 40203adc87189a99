"""The pricing sheets the AI agent quotes from, and `quote`, the agent's entry point (its quote_price tool).

The agent may state a price only as `quote` returned it (`amount_guardrail.py`), so prices are stored as exact
decimals (numeric(14, 4)) and shown as their text, never through a float. A sheet is a named list of items
(name, price, currency, unit, the dates it is valid between, notes); its items are edited one by one or replaced
at once from a CSV file, in one transaction, with the change recorded in the team audit log (the operator as no
member: `member_id` None). The CSV's format is read here; each row's fields are judged by the
same rules as an item given alone (`use_cases/pricing_sheets.py`).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import msgspec

from inbox_actors.bot.settings import BotRefusal
from inbox_actors.domain import team_audit
from inbox_actors.domain.member_ref import MemberRef
from persistence.database import Database, Record
from persistence.queries import pricing as queries
from persistence.queries import team_audit as audit_queries

MAX_SHEETS = 100
MAX_ITEMS = 5_000
MAX_SHEET_NAME = 100
MAX_ITEM_NAME = 200
MAX_UNIT = 40
MAX_NOTES = 500
MAX_CSV_BYTES = 1024 * 1024
PRICE_PATTERN = r"^[0-9]{1,10}(\.[0-9]{1,4})?$"
"""numeric(14, 4): up to 10 digits before the point, 4 after."""
CURRENCY_PATTERN = r"^[A-Z]{3}$"
COLUMNS = ("name", "price", "currency", "unit", "valid_from", "valid_until", "notes")
REQUIRED_COLUMNS = 3
"""A CSV's header may leave out the columns from `unit` on."""
DATES_OUT_OF_ORDER = "valid_until must be on or after valid_from."
DEFAULT_LIMIT = 5
MAX_QUERY_WORDS = 32
MIN_PREFIX = 3
"""Shorter words match only whole: "a" as a prefix would match nearly everything."""
BIGINT_MAX = 2**63 - 1

_WORD = re.compile(r"[^\W_]+")


class Item(msgspec.Struct, frozen=True):
    """An item's fields, as the use cases' rules accepted them."""

    name: str
    price: Decimal
    currency: str
    unit: str = ""
    valid_from: date | None = None
    valid_until: date | None = None
    notes: str = ""


class PriceItem(msgspec.Struct, frozen=True):
    id: int
    name: str
    price: str
    """The exact decimal, with at least two decimals ("19.00", "2.125")."""
    currency: str
    unit: str
    valid_from: date | None
    valid_until: date | None
    notes: str


class SheetSummary(msgspec.Struct, frozen=True):
    id: int
    name: str
    items: int
    updated_at: datetime
    updated_by: MemberRef | None


class SheetList(msgspec.Struct, frozen=True):
    data: list[SheetSummary]


class SheetView(msgspec.Struct, frozen=True):
    id: int
    name: str
    created_at: datetime
    updated_at: datetime
    updated_by: MemberRef | None
    items: list[PriceItem]


class SheetRemoved(msgspec.Struct, frozen=True):
    sheet_id: int
    removed: bool
    items: int


class ItemRemoved(msgspec.Struct, frozen=True):
    item_id: int
    removed: bool


class CsvExport(msgspec.Struct, frozen=True):
    filename: str
    text: str


class PriceQuote(msgspec.Struct, frozen=True):
    """An item valid today, as the agent may quote it."""

    item_id: int
    sheet: str
    name: str
    price: str
    """The exact decimal as stored, with at least two decimals: the agent's reply must state it as given."""
    currency: str
    unit: str
    valid_until: str | None
    """YYYY-MM-DD, the last day the price holds; None: no end."""
    notes: str


class Quotes(msgspec.Struct, frozen=True):
    data: list[PriceQuote]


def price_text(price: Decimal) -> str:
    """The stored decimal without trailing zeros past the second decimal: 19 -> "19.00", 2.1250 -> "2.125"."""
    whole, _, fraction = f"{price:f}".partition(".")
    return f"{whole}.{fraction.rstrip('0').ljust(2, '0')}"


def dates_in_order(valid_from: date | None, valid_until: date | None) -> bool:
    return valid_from is None or valid_until is None or valid_until >= valid_from


# -- the agent's quotes --------------------------------------------------------------------------------------


def query_terms(query: str) -> tuple[str, str]:
    """The query's words for `websearch_to_tsquery` joined by " or " (any may match), and `to_tsquery` prefix
    terms ("haircut:*", and for "haircuts" also "haircut:*", so a plural finds the singular) for the words of
    MIN_PREFIX letters or more; ("", "") for a query with no words."""
    words: dict[str, None] = {}
    for word in _WORD.findall(query):
        if word.casefold() != "or":  # the websearch syntax's operator
            words.setdefault(word.casefold(), None)
    chosen = list(words)[:MAX_QUERY_WORDS]
    prefixes: dict[str, None] = {}
    for word in chosen:
        for stem in (word, word[:-1] if word.endswith("s") else "", word[:-2] if word.endswith("es") else ""):
            if len(stem) >= MIN_PREFIX:
                prefixes.setdefault(f"'{stem}':*", None)
    return " or ".join(chosen), " | ".join(prefixes)


async def quote(db: Database, workspace_id: int, query: str, *, limit: int = DEFAULT_LIMIT) -> list[PriceQuote]:
    """The items valid today (PostgreSQL's clock) that best match `query`, at most `limit`: its words matched
    whole against the items' names and notes, or as the start of a word of them."""
    words, prefixes = query_terms(query)
    if not words or limit < 1:
        return []
    rows = await queries.quote(db, workspace_id, words, prefixes, limit)
    return [PriceQuote(row["id"], row["sheet"], row["name"], price_text(row["price"]), row["currency"], row["unit"],
                       row["valid_until"].isoformat() if row["valid_until"] else None, row["notes"])
            for row in rows]


async def quotes(db: Database, workspace_id: int, query: str) -> Quotes:
    return Quotes(await quote(db, workspace_id, query))


# -- CSV -----------------------------------------------------------------------------------------------------


def read_csv(text: str) -> list[tuple[int, dict[str, str]]]:
    """The rows of a sheet's CSV as (row number, {column: cell trimmed}), the header being row 1; blank rows are
    skipped, a short row's missing cells are "". Raises the `invalid_csv` refusal of the first thing wrong."""
    if len(text.encode()) > MAX_CSV_BYTES:
        raise _bad_csv(f"The CSV is larger than {MAX_CSV_BYTES:,} bytes.")
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""), strict=True)
    rows: list[tuple[int, dict[str, str]]] = []
    try:
        header = next(reader, None)
        if header is None or not REQUIRED_COLUMNS <= len(header) <= len(COLUMNS) \
                or tuple(header) != COLUMNS[:len(header)]:
            raise _bad_csv(f"Row 1 must be the header {','.join(COLUMNS)} (the columns from unit on may be left "
                           "out).")
        for cells in reader:
            if not any(cell.strip() for cell in cells):
                continue
            if len(rows) == MAX_ITEMS:
                raise _bad_csv(f"The CSV has more than {MAX_ITEMS:,} rows; a sheet has at most {MAX_ITEMS:,} items.")
            if len(cells) > len(header):
                raise _bad_csv(f"Row {reader.line_num} has {len(cells)} fields; the header has {len(header)}.")
            cells += [""] * (len(header) - len(cells))
            rows.append((reader.line_num, {name: cell.strip() for name, cell in zip(header, cells)}))
    except csv.Error as err:
        raise _bad_csv(f"Row {reader.line_num} is not valid CSV: {err}.") from None
    return rows


def write_csv(items: Sequence[PriceItem]) -> str:
    """The items in the columns an import reads, prices as shown ("19.00")."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for item in items:
        writer.writerow([item.name, item.price, item.currency, item.unit,
                         item.valid_from.isoformat() if item.valid_from else "",
                         item.valid_until.isoformat() if item.valid_until else "", item.notes])
    return out.getvalue()


def _bad_csv(sentence: str) -> BotRefusal:
    return BotRefusal(400, "invalid_csv", sentence)


# -- sheets and items ----------------------------------------------------------------------------------------


async def sheets(db: Database, workspace_id: int) -> SheetList:
    return SheetList([_summary(row) for row in await queries.list_sheets(db, workspace_id)])


async def sheet(db: Database, workspace_id: int, sheet_id: int) -> SheetView:
    row = await _sheet(db, workspace_id, sheet_id)
    items = [_item(item) for item in await queries.items(db, sheet_id)]
    return SheetView(row["id"], row["name"], row["created_at"], row["updated_at"], _by(row), items)


async def export_csv(db: Database, workspace_id: int, sheet_id: int) -> CsvExport:
    found = await sheet(db, workspace_id, sheet_id)
    return CsvExport(f"pricing-sheet-{sheet_id}.csv", write_csv(found.items))


async def add_sheet(db: Database, workspace_id: int, member_id: int | None, via: str, name: str,
                    now: datetime) -> SheetSummary:
    name = " ".join(name.split())
    async with db.transaction() as tx:
        if await queries.count_sheets(tx, workspace_id) >= MAX_SHEETS:
            raise BotRefusal(409, "too_many_sheets", f"A workspace has at most {MAX_SHEETS} pricing sheets.")
        sheet_id = await queries.insert_sheet(tx, workspace_id, name, member_id, now)
        if sheet_id is None:
            raise _name_taken(name)
        await _audit(tx, workspace_id, member_id, via, team_audit.PRICING_SHEET_ADDED, f"pricing_sheet:{sheet_id}",
                     now, {"name": name})
        row = await queries.find_sheet(tx, workspace_id, sheet_id)
    return _summary(row)


async def rename_sheet(db: Database, workspace_id: int, member_id: int | None, via: str, sheet_id: int, name: str,
                       now: datetime) -> SheetSummary:
    name = " ".join(name.split())
    async with db.transaction() as tx:
        row = await _sheet(tx, workspace_id, sheet_id, for_update=True)
        if await queries.name_taken(tx, workspace_id, name, sheet_id):
            raise _name_taken(name)
        await queries.touch_sheet(tx, sheet_id, member_id, now, name=name)
        await _audit(tx, workspace_id, member_id, via, team_audit.PRICING_SHEET_RENAMED, f"pricing_sheet:{sheet_id}",
                     now, {"from": row["name"], "name": name})
        row = await queries.find_sheet(tx, workspace_id, sheet_id)
    return _summary(row)


async def remove_sheet(db: Database, workspace_id: int, member_id: int | None, via: str, sheet_id: int,
                       now: datetime) -> SheetRemoved:
    """The sheet and its items, for good."""
    async with db.transaction() as tx:
        gone = await queries.delete_sheet(tx, workspace_id, sheet_id) if _may_exist(sheet_id) else None
        if gone is None:
            raise _no_sheet(sheet_id)
        await _audit(tx, workspace_id, member_id, via, team_audit.PRICING_SHEET_REMOVED, f"pricing_sheet:{sheet_id}",
                     now, {"name": gone["name"], "items": gone["items"]})
    return SheetRemoved(sheet_id, True, gone["items"])


async def import_items(db: Database, workspace_id: int, member_id: int | None, via: str, sheet_id: int,
                       items: Sequence[Item], now: datetime) -> SheetSummary:
    """Replace the sheet's items with `items`, all or nothing."""
    if len(items) > MAX_ITEMS:
        raise _bad_csv(f"A sheet has at most {MAX_ITEMS:,} items.")
    async with db.transaction() as tx:
        row = await _sheet(tx, workspace_id, sheet_id, for_update=True)
        removed = await queries.delete_items(tx, sheet_id)
        await _insert(tx, workspace_id, sheet_id, items)
        await queries.touch_sheet(tx, sheet_id, member_id, now)
        await _audit(tx, workspace_id, member_id, via, team_audit.PRICING_SHEET_IMPORTED, f"pricing_sheet:{sheet_id}",
                     now, {"name": row["name"], "items": len(items), "replaced": removed})
        row = await queries.find_sheet(tx, workspace_id, sheet_id)
    return _summary(row)


async def add_item(db: Database, workspace_id: int, member_id: int | None, via: str, sheet_id: int, item: Item,
                   now: datetime) -> PriceItem:
    if not dates_in_order(item.valid_from, item.valid_until):
        raise BotRefusal(400, "invalid_valid_until", DATES_OUT_OF_ORDER)
    async with db.transaction() as tx:
        row = await _sheet(tx, workspace_id, sheet_id, for_update=True)
        if row["items"] >= MAX_ITEMS:
            raise BotRefusal(409, "too_many_items", f"A pricing sheet has at most {MAX_ITEMS:,} items.")
        (added,) = await _insert(tx, workspace_id, sheet_id, [item])
        await queries.touch_sheet(tx, sheet_id, member_id, now)
        await _audit(tx, workspace_id, member_id, via, team_audit.PRICING_ITEM_ADDED, f"pricing_item:{added['id']}",
                     now, {"sheet_id": sheet_id, "name": item.name, "price": price_text(item.price),
                           "currency": item.currency})
    return _item(added)


async def change_item(db: Database, workspace_id: int, member_id: int | None, via: str, sheet_id: int,
                      item_id: int, changes: Mapping[str, Any], now: datetime) -> PriceItem:
    """Save the fields given in `changes` (by `Item`'s names), keeping the others."""
    async with db.transaction() as tx:
        await _sheet(tx, workspace_id, sheet_id, for_update=True)
        row = await queries.find_item(tx, workspace_id, sheet_id, item_id, for_update=True) \
            if _may_exist(item_id) else None
        if row is None:
            raise _no_item(item_id)
        saved = Item(**{**{field: row[field] for field in Item.__struct_fields__}, **changes})
        if not dates_in_order(saved.valid_from, saved.valid_until):
            raise BotRefusal(400, "invalid_valid_until", DATES_OUT_OF_ORDER)
        updated = await queries.update_item(tx, item_id, saved.name, saved.price, saved.currency, saved.unit,
                                            saved.valid_from, saved.valid_until, saved.notes)
        await queries.touch_sheet(tx, sheet_id, member_id, now)
        await _audit(tx, workspace_id, member_id, via, team_audit.PRICING_ITEM_CHANGED, f"pricing_item:{item_id}",
                     now, {"sheet_id": sheet_id, "name": saved.name, "changed": sorted(changes)})
    return _item(updated)


async def remove_item(db: Database, workspace_id: int, member_id: int | None, via: str, sheet_id: int,
                      item_id: int, now: datetime) -> ItemRemoved:
    async with db.transaction() as tx:
        await _sheet(tx, workspace_id, sheet_id, for_update=True)
        name = await queries.delete_item(tx, workspace_id, sheet_id, item_id) if _may_exist(item_id) else None
        if name is None:
            raise _no_item(item_id)
        await queries.touch_sheet(tx, sheet_id, member_id, now)
        await _audit(tx, workspace_id, member_id, via, team_audit.PRICING_ITEM_REMOVED, f"pricing_item:{item_id}",
                     now, {"sheet_id": sheet_id, "name": name})
    return ItemRemoved(item_id, True)


async def _sheet(q, workspace_id: int, sheet_id: int, *, for_update: bool = False) -> Record:
    row = await queries.find_sheet(q, workspace_id, sheet_id, for_update=for_update) \
        if _may_exist(sheet_id) else None
    if row is None:
        raise _no_sheet(sheet_id)
    return row


async def _insert(tx, workspace_id: int, sheet_id: int, items: Sequence[Item]) -> list[Record]:
    return await queries.insert_items(
        tx, workspace_id, sheet_id, [i.name for i in items], [i.price for i in items], [i.currency for i in items],
        [i.unit for i in items], [i.valid_from for i in items], [i.valid_until for i in items],
        [i.notes for i in items])


async def _audit(tx, workspace_id: int, member_id: int | None, via: str, action: str, subject: str, now: datetime,
                 details: dict) -> None:
    await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=member_id, via=via, action=action,
                               subject=subject, details=details)


def _summary(row: Record) -> SheetSummary:
    return SheetSummary(row["id"], row["name"], row["items"], row["updated_at"], _by(row))


def _item(row: Record) -> PriceItem:
    return PriceItem(row["id"], row["name"], price_text(row["price"]), row["currency"], row["unit"],
                     row["valid_from"], row["valid_until"], row["notes"])


def _by(row: Record) -> MemberRef | None:
    return MemberRef(row["updated_by"], row["updated_by_name"]) if row["updated_by"] else None


def _may_exist(row_id: int) -> bool:
    """Ids are positive bigints: any other number names no row (and must not reach PostgreSQL)."""
    return 1 <= row_id <= BIGINT_MAX


def _name_taken(name: str) -> BotRefusal:
    return BotRefusal(409, "name_taken", f"The workspace already has a pricing sheet named {name!r}.")


def _no_sheet(sheet_id: int) -> BotRefusal:
    return BotRefusal(404, "not_found", f"This workspace has no pricing sheet {sheet_id}.")


def _no_item(item_id: int) -> BotRefusal:
    return BotRefusal(404, "not_found", f"This pricing sheet has no item {item_id}.")
