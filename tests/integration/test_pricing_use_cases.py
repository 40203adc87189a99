"""The pricing sheets at the use cases' level, on a real PostgreSQL and without HTTP: who may read and change them,
the codes of the fields' rules, names unique whatever their case, the limits, CSV imports (all or nothing) and
exports, the audit log, and quoting (the agent's entry point, `pricing.quote`): items valid today by PostgreSQL's
clock, matched whole or by prefix, one workspace's alone."""

from __future__ import annotations

from datetime import timedelta

from inbox_actors.ai_agent import pricing
from inbox_actors.use_cases import pricing_sheets as sheets
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.outcomes import Done, Refused
from tests import builders

READER = ["ai_agent:read"]
EDITOR = ["ai_pricing_edit", "ai_agent:read"]
HEADER = "name,price,currency,unit,valid_from,valid_until,notes"
CSV = (f"{HEADER}\r\n"
       "Haircut,19.00,EUR,per visit,,,Adults\r\n"
       "\"Colour, full\",65.50,EUR,,2020-01-01,,\"Includes a \"\"gloss\"\"\"\r\n"
       "Beard trim,7.125,EUR,,,2099-12-31,\r\n")


def refused(outcome, status: int, code: str) -> bool:
    return isinstance(outcome, Refused) and (outcome.status, outcome.code) == (status, code)


async def audit(use_cases) -> list[str]:
    rows = await use_cases.db.fetch("SELECT action FROM team_audit WHERE workspace_id = $1 ORDER BY id",
                                    use_cases.workspace_id)
    return [row[0] for row in rows]


async def new_sheet(use_cases, editor, name: str = "Salon") -> int:
    added = await use_cases.run(editor, sheets.ADD_SHEET, {"name": name})
    assert isinstance(added, Done), added
    return added.data.id


async def new_item(use_cases, editor, sheet_id: int, **fields) -> pricing.PriceItem:
    added = await use_cases.run(editor, sheets.ADD_ITEM, {"sheet_id": sheet_id, "price": "10.00", "currency": "EUR",
                                                          **fields})
    assert isinstance(added, Done), added
    return added.data


async def test_reading_needs_ai_agent_and_changing_needs_ai_pricing_edit(use_cases):
    outsider = await use_cases.member(permissions=["inbox", "ai_kb_edit"])
    reader = await use_cases.member(permissions=READER)
    reads = [(sheets.LIST_SHEETS, {}), (sheets.READ_SHEET, {"sheet_id": 1}), (sheets.EXPORT, {"sheet_id": 1}),
             (sheets.QUOTE, {"q": "haircut"})]
    for use_case, arguments in reads:
        assert refused(await use_cases.run(outsider, use_case, arguments), 403, "permission_denied")
        assert not refused(await use_cases.run(reader, use_case, arguments), 403, "permission_denied")
    writes = [(sheets.ADD_SHEET, {"name": "S"}), (sheets.RENAME_SHEET, {"sheet_id": 1, "name": "S"}),
              (sheets.REMOVE_SHEET, {"sheet_id": 1}), (sheets.IMPORT, {"sheet_id": 1, "csv": CSV}),
              (sheets.ADD_ITEM, {"sheet_id": 1, "name": "X", "price": "1", "currency": "EUR"}),
              (sheets.CHANGE_ITEM, {"sheet_id": 1, "item_id": 1, "name": "X"}),
              (sheets.REMOVE_ITEM, {"sheet_id": 1, "item_id": 1})]
    for use_case, arguments in writes:
        denied = await use_cases.run(reader, use_case, arguments)
        assert refused(denied, 403, "permission_denied") and "needs the ai_pricing_edit permission" in denied.message
        assert refused(await use_cases.run(outsider, use_case, arguments), 403, "permission_denied")
    assert await audit(use_cases) == []


async def test_sheet_names_are_unique_whatever_their_case(use_cases):
    editor = await use_cases.member(permissions=EDITOR)
    salon = await new_sheet(use_cases, editor, "  Salon   prices ")
    spa = await new_sheet(use_cases, editor, "Spa")
    taken = await use_cases.run(editor, sheets.ADD_SHEET, {"name": "SALON PRICES"})
    assert refused(taken, 409, "name_taken") and "'SALON PRICES'" in taken.message
    assert refused(await use_cases.run(editor, sheets.RENAME_SHEET, {"sheet_id": spa, "name": "salon prices"}), 409,
                   "name_taken")
    recased = await use_cases.run(editor, sheets.RENAME_SHEET, {"sheet_id": salon, "name": "SALON Prices"})
    assert isinstance(recased, Done) and recased.data.name == "SALON Prices"
    for name in ("", "  ", "x" * 101, "tab\there"):
        assert refused(await use_cases.run(editor, sheets.ADD_SHEET, {"name": name}), 400, "invalid_name"), name
    listed = await use_cases.run(editor, sheets.LIST_SHEETS, {})
    assert [(s.name, s.items, s.updated_by.user_id) for s in listed.data.data] == [
        ("SALON Prices", 0, editor.member_id), ("Spa", 0, editor.member_id)]
    assert await audit(use_cases) == ["pricing_sheet.added", "pricing_sheet.added", "pricing_sheet.renamed"]


async def test_a_workspace_has_at_most_100_sheets(use_cases):
    editor = await use_cases.member(permissions=EDITOR)
    for n in range(pricing.MAX_SHEETS):
        await new_sheet(use_cases, editor, f"Sheet {n}")
    over = await use_cases.run(editor, sheets.ADD_SHEET, {"name": "One more"})
    assert refused(over, 409, "too_many_sheets")


async def test_items_follow_their_fields_rules_each_with_its_code(use_cases):
    editor = await use_cases.member(permissions=EDITOR)
    sheet_id = await new_sheet(use_cases, editor)
    base = {"sheet_id": sheet_id, "name": "Haircut", "price": "19.00", "currency": "EUR"}
    cases = [({"name": ""}, "invalid_name"), ({"name": "a\nb"}, "invalid_name"), ({"price": 19.0}, "invalid_price"),
             ({"price": "-1"}, "invalid_price"), ({"price": "1.23456"}, "invalid_price"),
             ({"price": "12345678901"}, "invalid_price"), ({"price": "1e3"}, "invalid_price"),
             ({"currency": "eur"}, "invalid_currency"), ({"currency": "€"}, "invalid_currency"),
             ({"unit": "u" * 41}, "invalid_unit"), ({"valid_from": "2026-02-30"}, "invalid_valid_from"),
             ({"valid_until": "tomorrow"}, "invalid_valid_until"),
             ({"valid_from": "2026-03-01", "valid_until": "2026-02-01"}, "invalid_valid_until"),
             ({"notes": "n" * 501}, "invalid_notes"), ({"colour": "red"}, "invalid_arguments")]
    for change, code in cases:
        assert refused(await use_cases.run(editor, sheets.ADD_ITEM, {**base, **change}), 400, code), change
    missing = await use_cases.run(editor, sheets.ADD_ITEM, {**base, "sheet_id": sheet_id + 1000})
    assert refused(missing, 404, "not_found")
    shown = await use_cases.run(editor, sheets.READ_SHEET, {"sheet_id": sheet_id})
    assert shown.data.items == []

    added = await new_item(use_cases, editor, sheet_id, name=" Hair   cut ", price="19", unit=" per visit ",
                           valid_until="2099-12-31")
    assert (added.name, added.price, added.unit, str(added.valid_until)) == ("Hair cut", "19.00", "per visit",
                                                                             "2099-12-31")
    # A change is judged with the fields it keeps: an end before the kept start is refused.
    dated = await new_item(use_cases, editor, sheet_id, name="Dated", valid_from="2026-06-01")
    early = await use_cases.run(editor, sheets.CHANGE_ITEM, {"sheet_id": sheet_id, "item_id": dated.id,
                                                             "valid_until": "2026-05-01"})
    assert refused(early, 400, "invalid_valid_until") and early.message == pricing.DATES_OUT_OF_ORDER
    cleared = await use_cases.run(editor, sheets.CHANGE_ITEM, {"sheet_id": sheet_id, "item_id": dated.id,
                                                               "valid_from": None, "price": "2.1250"})
    assert isinstance(cleared, Done)
    assert (cleared.data.name, cleared.data.price, cleared.data.valid_from) == ("Dated", "2.125", None)
    elsewhere = await use_cases.run(editor, sheets.CHANGE_ITEM, {"sheet_id": await new_sheet(use_cases, editor, "B"),
                                                                 "item_id": dated.id, "name": "Moved"})
    assert refused(elsewhere, 404, "not_found")  # an item is named with its own sheet
    removed = await use_cases.run(editor, sheets.REMOVE_ITEM, {"sheet_id": sheet_id, "item_id": dated.id})
    assert removed.data == pricing.ItemRemoved(dated.id, True)
    assert refused(await use_cases.run(editor, sheets.REMOVE_ITEM, {"sheet_id": sheet_id, "item_id": dated.id}), 404,
                   "not_found")
    for bad_id in (0, -5, 2**64):
        assert refused(await use_cases.run(editor, sheets.READ_SHEET, {"sheet_id": bad_id}), 404, "not_found")
        assert refused(await use_cases.run(editor, sheets.REMOVE_ITEM, {"sheet_id": sheet_id, "item_id": bad_id}),
                       404, "not_found")
    assert await audit(use_cases) == ["pricing_sheet.added", "pricing_item.added", "pricing_item.added",
                                      "pricing_item.changed", "pricing_sheet.added", "pricing_item.removed"]


async def test_a_csv_import_replaces_the_items_and_exports_back_identically(use_cases):
    editor = await use_cases.member(permissions=EDITOR)
    sheet_id = await new_sheet(use_cases, editor)
    await new_item(use_cases, editor, sheet_id, name="Old item")
    imported = await use_cases.run(editor, sheets.IMPORT, {"sheet_id": sheet_id, "csv": "\ufeff" + CSV})
    assert isinstance(imported, Done) and imported.data.items == 3
    shown = await use_cases.run(editor, sheets.READ_SHEET, {"sheet_id": sheet_id})
    assert [(i.name, i.price, i.notes) for i in shown.data.items] == [
        ("Haircut", "19.00", "Adults"), ("Colour, full", "65.50", 'Includes a "gloss"'), ("Beard trim", "7.125", "")]
    exported = await use_cases.run(editor, sheets.EXPORT, {"sheet_id": sheet_id})
    assert exported.data == pricing.CsvExport(f"pricing-sheet-{sheet_id}.csv", CSV)

    # A bad row refuses the whole file, naming the row and the field; the items stay as they were.
    bad = CSV + "Perm,eighty,EUR,,,,\r\n"
    outcome = await use_cases.run(editor, sheets.IMPORT, {"sheet_id": sheet_id, "csv": bad})
    assert refused(outcome, 400, "invalid_csv") and outcome.message.startswith("Row 5: price must be")
    header = await use_cases.run(editor, sheets.IMPORT, {"sheet_id": sheet_id, "csv": "title,cost\r\nX,1\r\n"})
    assert refused(header, 400, "invalid_csv") and header.message.startswith("Row 1 must be the header")
    again = await use_cases.run(editor, sheets.EXPORT, {"sheet_id": sheet_id})
    assert again.data.text == CSV
    empty = await use_cases.run(editor, sheets.IMPORT, {"sheet_id": sheet_id, "csv": HEADER + "\r\n"})
    assert isinstance(empty, Done) and empty.data.items == 0
    assert refused(await use_cases.run(editor, sheets.IMPORT, {"sheet_id": 999_999_999, "csv": CSV}), 404,
                   "not_found")
    assert await audit(use_cases) == ["pricing_sheet.added", "pricing_item.added", "pricing_sheet.imported",
                                      "pricing_sheet.imported"]


async def test_a_sheet_holds_at_most_5000_items(use_cases):
    editor = await use_cases.member(permissions=EDITOR)
    sheet_id = await new_sheet(use_cases, editor)
    rows = "".join(f"Item {n},1.00,EUR\r\n" for n in range(pricing.MAX_ITEMS))
    full = await use_cases.run(editor, sheets.IMPORT, {"sheet_id": sheet_id, "csv": f"name,price,currency\r\n{rows}"})
    assert isinstance(full, Done) and full.data.items == pricing.MAX_ITEMS
    over = await use_cases.run(editor, sheets.ADD_ITEM, {"sheet_id": sheet_id, "name": "One more", "price": "1",
                                                         "currency": "EUR"})
    assert refused(over, 409, "too_many_items")
    removed = await use_cases.run(editor, sheets.REMOVE_SHEET, {"sheet_id": sheet_id})
    assert removed.data == pricing.SheetRemoved(sheet_id, True, pricing.MAX_ITEMS)
    assert await use_cases.db.fetchval("SELECT count(*) FROM pricing_items WHERE sheet_id = $1", sheet_id) == 0
    assert refused(await use_cases.run(editor, sheets.REMOVE_SHEET, {"sheet_id": sheet_id}), 404, "not_found")


async def test_quotes_are_the_items_valid_today_best_match_first(use_cases):
    editor = await use_cases.member(permissions=EDITOR)
    today = await use_cases.db.fetchval("SELECT current_date")
    salon = await new_sheet(use_cases, editor, "Salon")
    haircut = await new_item(use_cases, editor, salon, name="Haircut", price="19.00", unit="per visit",
                             valid_until=str(today))
    kids = await new_item(use_cases, editor, salon, name="Kids haircut", price="12.50", notes="Under 12")
    await new_item(use_cases, editor, salon, name="Haircut (old price)", price="17.00",
                   valid_until=str(today - timedelta(days=1)))
    await new_item(use_cases, editor, salon, name="Haircut (new price)", price="21.00",
                   valid_from=str(today + timedelta(days=1)))
    await new_item(use_cases, editor, salon, name="Colour", price="65.00", notes="Any hair length")
    await new_item(use_cases, editor, salon, name="Hair wash", price="5.00")

    exact = await pricing.quote(use_cases.db, use_cases.workspace_id, "How much is a haircut?")
    assert [q.item_id for q in exact] == [haircut.id, kids.id]  # expired and not-yet-valid prices are left out
    assert exact[0] == pricing.PriceQuote(haircut.id, "Salon", "Haircut", "19.00", "EUR", "per visit", str(today),
                                          "")
    plural = await pricing.quote(use_cases.db, use_cases.workspace_id, "haircuts")
    assert [q.item_id for q in plural] == [haircut.id, kids.id]
    # A word matched whole in a name outranks one matched as a prefix, which outranks the notes.
    prefix = await pricing.quote(use_cases.db, use_cases.workspace_id, "hair")
    assert [q.name for q in prefix] == ["Hair wash", "Haircut", "Kids haircut", "Colour"]
    assert await pricing.quote(use_cases.db, use_cases.workspace_id, "massage") == []
    assert await pricing.quote(use_cases.db, use_cases.workspace_id, "?!") == []
    assert len(await pricing.quote(use_cases.db, use_cases.workspace_id, "haircut", limit=1)) == 1

    quoted = await use_cases.run(await use_cases.member(permissions=READER), sheets.QUOTE, {"q": "haircut"})
    assert isinstance(quoted, Done) and [q.item_id for q in quoted.data.data] == [haircut.id, kids.id]
    for q in ("", "x" * 201, "a\nb", None):
        assert refused(await use_cases.run(editor, sheets.QUOTE, {"q": q}), 400, "invalid_q"), q


async def test_another_workspace_s_prices_are_never_quoted_or_reached(use_cases):
    other = await builders.workspace(use_cases.db)
    stranger = await use_cases.member(permissions=EDITOR, workspace_id=other)
    theirs = await new_sheet(use_cases, stranger)
    item = await new_item(use_cases, stranger, theirs, name="Haircut")
    assert await pricing.quote(use_cases.db, use_cases.workspace_id, "haircut") == []
    assert [q.item_id for q in await pricing.quote(use_cases.db, other, "haircut")] == [item.id]
    editor = await use_cases.member(permissions=EDITOR)
    assert await new_sheet(use_cases, editor, "Salon")  # the same name in another workspace is free
    for use_case, arguments in ((sheets.READ_SHEET, {}), (sheets.EXPORT, {}), (sheets.REMOVE_SHEET, {}),
                                (sheets.RENAME_SHEET, {"name": "Mine"}), (sheets.IMPORT, {"csv": CSV}),
                                (sheets.CHANGE_ITEM, {"item_id": item.id, "price": "0"}),
                                (sheets.REMOVE_ITEM, {"item_id": item.id})):
        outcome = await use_cases.run(editor, use_case, {"sheet_id": theirs, **arguments})
        assert refused(outcome, 404, "not_found"), use_case.name
    assert (await use_cases.run(stranger, sheets.READ_SHEET, {"sheet_id": theirs})).data.items[0].price == "10.00"


async def test_the_operator_s_changes_are_audited_as_no_member(use_cases):
    operator = Caller.operator(use_cases.workspace_id)
    sheet_id = await new_sheet(use_cases, operator)
    rows = await use_cases.db.fetch("SELECT action, member_id, via, subject FROM team_audit WHERE workspace_id = $1",
                                    use_cases.workspace_id)
    assert [tuple(row) for row in rows] == [("pricing_sheet.added", None, "cli", f"pricing_sheet:{sheet_id}")]
