"""The prices the AI agent quotes, for admins: `/app/bot/prices` (the pricing sheets, a form to add one) and
`/app/bot/prices/<id>` (a sheet: its items, adding and removing one, renaming or removing the sheet, replacing its
items from a CSV file, and `…/items.csv`, the sheet downloaded as one).

Each form runs one of the use cases of `use_cases/pricing_sheets.py` as the member, through the helpers the bot's
pages share (`bot_pages.py`): their rules (a price's format, a bad CSV row, a name taken) refuse with a sentence
shown beside the form as it was typed. The import form takes a file or pasted text, as a multipart form; the use
case takes the text either way.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, Response, redirect, request

from inbox_actors.ai_agent.pricing import CsvExport
from inbox_actors.use_cases import pricing_sheets
from inbox_actors.use_cases.outcomes import Outcome, Reason, Refused
from inbox_http.guard import current_caller
from inbox_http.web.bot_pages import done_notice, read, require_reading, run_form
from inbox_http.web.page_guard import signed_in
from inbox_http.web.pages import page

blueprint = Blueprint("web_bot_prices", __name__, url_prefix="/app/bot/prices", template_folder="templates")

CSV_MEDIA = "text/csv; charset=utf-8"
ITEM_FIELDS = ("name", "price", "currency", "unit", "valid_from", "valid_until", "notes")
_DONE = {"sheet-removed": "Pricing sheet removed, with its items."}
_SHEET_DONE = {"added": "Pricing sheet added.", "renamed": "Pricing sheet renamed.", "item-added": "Item added.",
               "item-removed": "Item removed.", "imported": "The sheet's items were replaced by the file's."}


@blueprint.get("")
@signed_in
async def prices_page():
    require_reading()
    return await _render(notice=done_notice(_DONE))


@blueprint.post("")
@signed_in
async def add_sheet():
    require_reading()
    typed = {"name": (await request.form).get("name", "")}
    outcome = await run_form(pricing_sheets.ADD_SHEET, typed)
    if isinstance(outcome, Refused):
        return await _render(outcome, typed=typed)
    return redirect(f"/app/bot/prices/{outcome.data.id}?done=added", 303)


@blueprint.get("/<int:sheet_id>")
@signed_in
async def sheet_page(sheet_id: int):
    require_reading()
    return await _sheet(sheet_id, notice=done_notice(_SHEET_DONE))


@blueprint.post("/<int:sheet_id>")
@signed_in
async def rename_sheet(sheet_id: int):
    require_reading()
    typed = {"sheet_name": (await request.form).get("name", "")}
    outcome = await run_form(pricing_sheets.RENAME_SHEET, {"sheet_id": sheet_id, "name": typed["sheet_name"]})
    return await _after(sheet_id, outcome, "renamed", typed)


@blueprint.post("/<int:sheet_id>/remove")
@signed_in
async def remove_sheet(sheet_id: int):
    require_reading()
    outcome = await run_form(pricing_sheets.REMOVE_SHEET, {"sheet_id": sheet_id})
    if isinstance(outcome, Refused):
        return await _sheet(sheet_id, outcome)
    return redirect("/app/bot/prices?done=sheet-removed", 303)


@blueprint.post("/<int:sheet_id>/items")
@signed_in
async def add_item(sheet_id: int):
    require_reading()
    form = await request.form
    typed = {name: form.get(name, "") for name in ITEM_FIELDS}
    # A date left empty is none (the price holds already, or has no end).
    dates = {name: typed[name].strip() or None for name in ("valid_from", "valid_until")}
    outcome = await run_form(pricing_sheets.ADD_ITEM, {"sheet_id": sheet_id, **typed, **dates})
    return await _after(sheet_id, outcome, "item-added", typed)


@blueprint.post("/<int:sheet_id>/items/<int:item_id>/remove")
@signed_in
async def remove_item(sheet_id: int, item_id: int):
    require_reading()
    outcome = await run_form(pricing_sheets.REMOVE_ITEM, {"sheet_id": sheet_id, "item_id": item_id})
    return await _after(sheet_id, outcome, "item-removed")


@blueprint.post("/<int:sheet_id>/import")
@signed_in
async def import_csv(sheet_id: int):
    """A file chosen wins over pasted text; the pasted text is kept in the form when the import is refused (a
    file cannot be put back into a file input)."""
    require_reading()
    form, files = await request.form, await request.files
    pasted = form.get("csv", "")
    chosen = files.get("file")
    raw = chosen.read() if chosen is not None and chosen.filename else None
    if raw:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return await _sheet(sheet_id, Refused(Reason.INVALID, "The file is not UTF-8 text; save it as CSV UTF-8 "
                                                                  "and choose it again.", 400, "invalid_csv"),
                                typed={"csv": pasted})
    else:
        text = pasted
    outcome = await run_form(pricing_sheets.IMPORT, {"sheet_id": sheet_id, "csv": text})
    return await _after(sheet_id, outcome, "imported", {"csv": pasted})


@blueprint.get("/<int:sheet_id>/items.csv")
@signed_in
async def download_csv(sheet_id: int):
    """The sheet as a file, in the columns an import reads (the export use case's text and file name)."""
    require_reading()
    exported: CsvExport = await read(pricing_sheets.EXPORT, {"sheet_id": sheet_id})
    return Response(exported.text, 200, content_type=CSV_MEDIA,
                    headers={"Content-Disposition": f'attachment; filename="{exported.filename}"'})


async def _after(sheet_id: int, outcome: Outcome, done: str, typed: dict[str, str] | None = None):
    """A sheet's form answered: back to the sheet (a reload repeats nothing), or the sheet with the refusal."""
    if isinstance(outcome, Refused):
        return await _sheet(sheet_id, outcome, typed=typed)
    return redirect(f"/app/bot/prices/{sheet_id}?done={done}", 303)


async def _render(refused: Refused | None = None, notice: str | None = None, typed: dict | None = None):
    return await page(
        "bot_prices.html", refused.status if refused else 200, here="prices",
        sheets=(await read(pricing_sheets.LIST_SHEETS)).data,
        may_add=pricing_sheets.ADD_SHEET.allows(current_caller()), typed=typed or {}, notice=notice,
        refusal=refused.message if refused else None)


async def _sheet(sheet_id: int, refused: Refused | None = None, notice: str | None = None,
                 typed: dict[str, Any] | None = None):
    """A sheet's page, with a refused form's sentence, status and fields as typed. A sheet that is not there
    (removed meanwhile, say) is the read's refusal: 404."""
    sheet = await read(pricing_sheets.READ_SHEET, {"sheet_id": sheet_id})
    caller = current_caller()
    return await page(
        "bot_sheet.html", refused.status if refused else 200, here="prices", sheet=sheet, typed=typed or {},
        may_change=pricing_sheets.ADD_ITEM.allows(caller), notice=notice,
        refusal=refused.message if refused else None)
