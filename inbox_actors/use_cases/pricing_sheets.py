"""The pricing sheets as use cases: sheets listed, read, added, renamed and removed; items added, changed and
removed; a sheet's items replaced from a CSV file or exported as one; and the quote an admin asks for to see what
the agent's quote_price tool would answer.

An item's field rules are stated once, in `ItemFields`: an item given alone and every row of a CSV file are
judged by them (a row's refusal is the file's, `invalid_csv`, naming the row). The rest is the sheets' own
(`ai_agent/pricing.py`: names unique whatever their case, the limits, all-or-nothing imports, the audit log).
Reading needs the bot's read permission; changing sheets, `ai_pricing_edit`.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated

import msgspec

from inbox_actors.ai_agent import pricing
from inbox_actors.bot.settings import BotRefusal
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.ai_knowledge import acting_member
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.chat_reads import NoArguments
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import FILLED_LINE, ONE_LINE
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused, judged
from inbox_actors.use_cases.use_case import Kind, UseCase, decode_arguments, done, rule

MAX_QUERY = 200

SheetName = Annotated[str, msgspec.Meta(
    min_length=1, max_length=pricing.MAX_SHEET_NAME, pattern=FILLED_LINE,
    description="The sheet's name (unique in the workspace whatever its case).",
    extra=rule("invalid_name", f"name must be 1 to {pricing.MAX_SHEET_NAME} characters on one line, not blank."))]
ItemName = Annotated[str, msgspec.Meta(
    min_length=1, max_length=pricing.MAX_ITEM_NAME, pattern=FILLED_LINE, description="What is sold.",
    extra=rule("invalid_name", f"name must be 1 to {pricing.MAX_ITEM_NAME} characters on one line, not blank."))]
Price = Annotated[str, msgspec.Meta(
    pattern=pricing.PRICE_PATTERN, examples=["19.00"],
    description="A decimal number at least 0 with at most 4 decimals, as a JSON string.",
    extra=rule("invalid_price", "price must be a decimal number of at most 10 digits before the point and 4 after, "
                                "such as 19.00 (no sign, no thousands separator)."))]
Currency = Annotated[str, msgspec.Meta(
    pattern=pricing.CURRENCY_PATTERN, examples=["EUR"], description="ISO 4217: 3 capital letters.",
    extra=rule("invalid_currency", "currency must be a currency code of 3 capital letters, such as EUR."))]
Unit = Annotated[str, msgspec.Meta(
    max_length=pricing.MAX_UNIT, pattern=ONE_LINE, description="What the price is for (\"per hour\"; \"\": each).",
    extra=rule("invalid_unit", f"unit must be at most {pricing.MAX_UNIT} characters on one line."))]
ValidFrom = Annotated[date, msgspec.Meta(
    description="The first day the price holds (YYYY-MM-DD; null: already).",
    extra=rule("invalid_valid_from", "valid_from must be a date, YYYY-MM-DD."))]
ValidUntil = Annotated[date, msgspec.Meta(
    description="The last day the price holds (YYYY-MM-DD, not before valid_from; null: no end).",
    extra=rule("invalid_valid_until", "valid_until must be a date, YYYY-MM-DD."))]
Notes = Annotated[str, msgspec.Meta(
    max_length=pricing.MAX_NOTES, pattern=ONE_LINE, description="What the agent should know about the price.",
    extra=rule("invalid_notes", f"notes must be at most {pricing.MAX_NOTES} characters on one line."))]
# Any whole number: one no row has (0, beyond bigint) is answered as any missing one is, 404 not_found.
SheetId = Annotated[int, msgspec.Meta(description="The sheet's id.")]
ItemId = Annotated[int, msgspec.Meta(description="The item's id.")]


# -- arguments -----------------------------------------------------------------------------------------------


class ItemFields(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An item's fields. `price` is a JSON string holding the decimal ("19.00", "0.5"), never a JSON number: most
    clients hold a number as a binary float, which would lose the exact amount and scale the agent quotes."""

    name: ItemName
    price: Price
    currency: Currency
    unit: Unit = ""
    valid_from: ValidFrom | None = None
    valid_until: ValidUntil | None = None
    notes: Notes = ""


class NewItem(ItemFields, frozen=True, forbid_unknown_fields=True, kw_only=True):
    sheet_id: SheetId


class ItemChange(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What is left out is kept; a date given as null is cleared."""

    sheet_id: SheetId
    item_id: ItemId
    name: ItemName | msgspec.UnsetType = msgspec.UNSET
    price: Price | msgspec.UnsetType = msgspec.UNSET
    currency: Currency | msgspec.UnsetType = msgspec.UNSET
    unit: Unit | msgspec.UnsetType = msgspec.UNSET
    valid_from: ValidFrom | None | msgspec.UnsetType = msgspec.UNSET
    valid_until: ValidUntil | None | msgspec.UnsetType = msgspec.UNSET
    notes: Notes | msgspec.UnsetType = msgspec.UNSET


class NewSheet(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: SheetName


class SheetRename(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    sheet_id: SheetId
    name: SheetName


class OneSheet(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    sheet_id: SheetId


class OneItem(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    sheet_id: SheetId
    item_id: ItemId


class SheetCsv(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    sheet_id: SheetId
    csv: Annotated[str, msgspec.Meta(
        max_length=pricing.MAX_CSV_BYTES,
        description=f"UTF-8 CSV: the header {','.join(pricing.COLUMNS)} (the columns from unit on may be left out), "
                    f"then one item a row, at most {pricing.MAX_ITEMS:,}.",
        extra=rule("invalid_csv", f"csv must be the text of a CSV file of at most {pricing.MAX_CSV_BYTES:,} "
                                  "bytes."))]


class PriceQuery(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    q: Annotated[str, msgspec.Meta(
        min_length=1, max_length=MAX_QUERY, pattern=ONE_LINE, description="What a customer asks the price of.",
        extra=rule("invalid_q", f"q must be 1 to {MAX_QUERY} characters on one line: what to quote."))]


# -- CSV rows ------------------------------------------------------------------------------------------------


def csv_items(text: str) -> list[pricing.Item] | Refused:
    """The items of a sheet's CSV, each row judged by `ItemFields`' rules; the refusal of the first bad row (or of
    the file's format), `invalid_csv`, names the row."""
    try:
        rows = pricing.read_csv(text)
    except BotRefusal as refused:
        return Refused(Reason.INVALID, refused.message, 400, "invalid_csv")
    items = []
    for number, cells in rows:
        dates = {name: cells.get(name) or None for name in ("valid_from", "valid_until")}  # an empty cell: none
        fields = decode_arguments(ItemFields, {**cells, **dates})
        if isinstance(fields, Refused):
            return Refused(Reason.INVALID, f"Row {number}: {fields.message}", 400, "invalid_csv")
        if not pricing.dates_in_order(fields.valid_from, fields.valid_until):
            return Refused(Reason.INVALID, f"Row {number}: {pricing.DATES_OUT_OF_ORDER}", 400, "invalid_csv")
        items.append(_item(fields))
    return items


def _item(fields: ItemFields) -> pricing.Item:
    return pricing.Item(" ".join(fields.name.split()), Decimal(fields.price), fields.currency, fields.unit.strip(),
                        fields.valid_from, fields.valid_until, fields.notes.strip())


def _changes(a: ItemChange) -> dict:
    given = {name: getattr(a, name) for name in pricing.Item.__struct_fields__
             if getattr(a, name) is not msgspec.UNSET}
    if "name" in given:
        given["name"] = " ".join(given["name"].split())
    if "price" in given:
        given["price"] = Decimal(given["price"])
    for name in ("unit", "notes"):
        if name in given:
            given[name] = given[name].strip()
    return given


# -- handlers ------------------------------------------------------------------------------------------------


async def _list(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(await pricing.sheets(deps.db, caller.workspace_id))


async def _read(deps: UseCaseDeps, caller: Caller, a: OneSheet) -> Outcome:
    return done(await judged(pricing.sheet(deps.db, caller.workspace_id, a.sheet_id), BotRefusal))


async def _export(deps: UseCaseDeps, caller: Caller, a: OneSheet) -> Outcome:
    return done(await judged(pricing.export_csv(deps.db, caller.workspace_id, a.sheet_id), BotRefusal))


async def _quote(deps: UseCaseDeps, caller: Caller, a: PriceQuery) -> Outcome:
    return Done(await pricing.quotes(deps.db, caller.workspace_id, a.q))


async def _add_sheet(deps: UseCaseDeps, caller: Caller, a: NewSheet) -> Outcome:
    return done(await judged(pricing.add_sheet(deps.db, caller.workspace_id, acting_member(caller), caller.author,
                                               a.name, deps.clock.now()), BotRefusal))


async def _rename_sheet(deps: UseCaseDeps, caller: Caller, a: SheetRename) -> Outcome:
    return done(await judged(pricing.rename_sheet(deps.db, caller.workspace_id, acting_member(caller), caller.author,
                                                  a.sheet_id, a.name, deps.clock.now()), BotRefusal))


async def _remove_sheet(deps: UseCaseDeps, caller: Caller, a: OneSheet) -> Outcome:
    return done(await judged(pricing.remove_sheet(deps.db, caller.workspace_id, acting_member(caller), caller.author,
                                                  a.sheet_id, deps.clock.now()), BotRefusal))


async def _import(deps: UseCaseDeps, caller: Caller, a: SheetCsv) -> Outcome:
    """The sheet's items replaced by the file's, all or nothing."""
    items = csv_items(a.csv)
    if isinstance(items, Refused):
        return items
    return done(await judged(pricing.import_items(deps.db, caller.workspace_id, acting_member(caller), caller.author,
                                                  a.sheet_id, items, deps.clock.now()), BotRefusal))


async def _add_item(deps: UseCaseDeps, caller: Caller, a: NewItem) -> Outcome:
    return done(await judged(pricing.add_item(deps.db, caller.workspace_id, acting_member(caller), caller.author,
                                              a.sheet_id, _item(a), deps.clock.now()), BotRefusal))


async def _change_item(deps: UseCaseDeps, caller: Caller, a: ItemChange) -> Outcome:
    return done(await judged(pricing.change_item(deps.db, caller.workspace_id, acting_member(caller), caller.author,
                                                 a.sheet_id, a.item_id, _changes(a), deps.clock.now()), BotRefusal))


async def _remove_item(deps: UseCaseDeps, caller: Caller, a: OneItem) -> Outcome:
    return done(await judged(pricing.remove_item(deps.db, caller.workspace_id, acting_member(caller), caller.author,
                                                 a.sheet_id, a.item_id, deps.clock.now()), BotRefusal))


# -- the declarations ----------------------------------------------------------------------------------------

LIST_SHEETS = UseCase("list_pricing_sheets", NoArguments, permissions.BOT, Kind.READ, _list)
READ_SHEET = UseCase("get_pricing_sheet", OneSheet, permissions.BOT, Kind.READ, _read)
EXPORT = UseCase("export_pricing_sheet", OneSheet, permissions.BOT, Kind.READ, _export)
QUOTE = UseCase("quote_price", PriceQuery, permissions.BOT, Kind.READ, _quote)
ADD_SHEET = UseCase("add_pricing_sheet", NewSheet, permissions.BOT_PRICING, Kind.WRITE, _add_sheet)
RENAME_SHEET = UseCase("rename_pricing_sheet", SheetRename, permissions.BOT_PRICING, Kind.WRITE, _rename_sheet)
REMOVE_SHEET = UseCase("remove_pricing_sheet", OneSheet, permissions.BOT_PRICING, Kind.WRITE, _remove_sheet)
IMPORT = UseCase("import_pricing_sheet", SheetCsv, permissions.BOT_PRICING, Kind.WRITE, _import)
ADD_ITEM = UseCase("add_pricing_item", NewItem, permissions.BOT_PRICING, Kind.WRITE, _add_item)
CHANGE_ITEM = UseCase("change_pricing_item", ItemChange, permissions.BOT_PRICING, Kind.WRITE, _change_item)
REMOVE_ITEM = UseCase("remove_pricing_item", OneItem, permissions.BOT_PRICING, Kind.WRITE, _remove_item)
