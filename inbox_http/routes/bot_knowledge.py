"""The AI agent's knowledge and pricing sheets, `/api/bot/articles`, `/api/bot/knowledge/search`,
`/api/bot/pricing-sheets` and `/api/bot/quote` (full API; ours: the spec's scope table names `ai_kb_edit` and
`ai_pricing_edit` without the calls). Each call binds one of the use cases of `use_cases/ai_knowledge.py` or
`use_cases/pricing_sheets.py` (their permissions and rules): articles read, added, changed and removed; the search
and the quote the agent would make; pricing sheets and their items, and a sheet's items replaced from or exported
as CSV. A member's dashboard session may call these with the same permissions. Stable-code errors.
"""

from __future__ import annotations

from quart import Blueprint, Response, request

from inbox_actors.ai_agent import knowledge, pricing
from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging.parameter_catalog import QueryParameter
from inbox_actors.use_cases import ai_knowledge, pricing_sheets
from inbox_actors.use_cases.fields import ONE_LINE
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import run
from inbox_http.contract import answers, body_of, takes
from inbox_http.dependencies import dependencies
from inbox_http.errors import ApiError
from inbox_http.guard import accepts, current_caller, guarded, responds
from inbox_http.outcome_answers import answer, run_route

blueprint = Blueprint("bot_knowledge", __name__, url_prefix="/api/bot")

CSV_MEDIA = "text/csv; charset=utf-8"
SEARCH_PARAMETERS = (QueryParameter("q", "string", "a customer's question, as they might write it", required=True,
                                    rules={"minLength": 1, "maxLength": ai_knowledge.MAX_QUESTION,
                                           "pattern": ONE_LINE}),)
QUOTE_PARAMETERS = (QueryParameter("q", "string", "what a customer asks the price of", required=True,
                                   rules={"minLength": 1, "maxLength": pricing_sheets.MAX_QUERY,
                                          "pattern": ONE_LINE}),)
# No maxLength: the limit is in bytes (the body's, 413 payload_too_large past 1 MiB), not characters.
CSV_BODY = {"type": "string",
            "description": f"UTF-8 (a byte order mark is ignored), at most 1 MiB. Row 1 is the header "
                           f"{','.join(pricing.COLUMNS)} (the columns from unit on may be left out); then one item a "
                           f"row, at most {pricing.MAX_ITEMS:,}, each by the rules of an item's fields (price a "
                           "decimal such as 19.00, currency 3 capital letters, dates YYYY-MM-DD). A bad row refuses "
                           "the whole file: 400 invalid_csv naming the row.",
            "example": "name,price,currency,unit\r\nHaircut,19.00,EUR,per visit\r\n"}


# -- articles ------------------------------------------------------------------------------------------------


@blueprint.get("/articles")
@responds(knowledge.ArticleList)
@guarded(tier=ApiTier.FULL, use_case=ai_knowledge.LIST_ARTICLES, dashboard=True)
async def list_articles():
    """The agent's articles, oldest first: title, how many passages, who changed it last."""
    return await run_route(ai_knowledge.LIST_ARTICLES)


@blueprint.post("/articles")
@responds(knowledge.ArticleView, 201)
@guarded(tier=ApiTier.FULL, use_case=ai_knowledge.ADD_ARTICLE, dashboard=True)
@takes(body_of(ai_knowledge.ADD_ARTICLE, path=()))
@answers(409)
async def add_article():
    """Add an article: {title, body (Markdown, up to 50,000 characters)}; it is split into passages at once."""
    return await run_route(ai_knowledge.ADD_ARTICLE, 201, body=True)


@blueprint.get("/articles/<id:article_id>")
@responds(knowledge.ArticleView)
@guarded(tier=ApiTier.FULL, use_case=ai_knowledge.READ_ARTICLE, dashboard=True)
@answers(404)
async def read_article(article_id: int):
    """One article with its body and the passages it was split into."""
    return await run_route(ai_knowledge.READ_ARTICLE, article_id=article_id)


@blueprint.patch("/articles/<id:article_id>")
@responds(knowledge.ArticleView)
@guarded(tier=ApiTier.FULL, use_case=ai_knowledge.CHANGE_ARTICLE, dashboard=True)
@takes(body_of(ai_knowledge.CHANGE_ARTICLE, path=("article_id",)))
@answers(404)
async def change_article(article_id: int):
    """Change an article's title or body (what is left out is kept); its passages are split again."""
    return await run_route(ai_knowledge.CHANGE_ARTICLE, body=True, article_id=article_id)


@blueprint.delete("/articles/<id:article_id>")
@responds(knowledge.ArticleRemoved)
@guarded(tier=ApiTier.FULL, use_case=ai_knowledge.REMOVE_ARTICLE, dashboard=True)
@answers(404)
async def remove_article(article_id: int):
    """Remove an article and its passages."""
    return await run_route(ai_knowledge.REMOVE_ARTICLE, article_id=article_id)


@blueprint.get("/knowledge/search")
@responds(knowledge.KnowledgeHits)
@guarded(tier=ApiTier.FULL, use_case=ai_knowledge.SEARCH, dashboard=True)
@accepts(SEARCH_PARAMETERS)
async def search_knowledge():
    """What the agent would be grounded in for a question: passages and FAQ answers, most relevant first."""
    return await run_route(ai_knowledge.SEARCH, q=request.args.get("q"))


# -- pricing sheets ------------------------------------------------------------------------------------------


@blueprint.get("/pricing-sheets")
@responds(pricing.SheetList)
@guarded(tier=ApiTier.FULL, use_case=pricing_sheets.LIST_SHEETS, dashboard=True)
async def list_sheets():
    """The pricing sheets by name, with how many items each has."""
    return await run_route(pricing_sheets.LIST_SHEETS)


@blueprint.post("/pricing-sheets")
@responds(pricing.SheetSummary, 201)
@guarded(tier=ApiTier.FULL, use_case=pricing_sheets.ADD_SHEET, dashboard=True)
@takes(body_of(pricing_sheets.ADD_SHEET, path=()))
@answers(409)
async def add_sheet():
    """Add a pricing sheet: {name} (unique in the workspace whatever its case; at most 100 sheets)."""
    return await run_route(pricing_sheets.ADD_SHEET, 201, body=True)


@blueprint.get("/pricing-sheets/<id:sheet_id>")
@responds(pricing.SheetView)
@guarded(tier=ApiTier.FULL, use_case=pricing_sheets.READ_SHEET, dashboard=True)
@answers(404)
async def read_sheet(sheet_id: int):
    """One pricing sheet with its items."""
    return await run_route(pricing_sheets.READ_SHEET, sheet_id=sheet_id)


@blueprint.patch("/pricing-sheets/<id:sheet_id>")
@responds(pricing.SheetSummary)
@guarded(tier=ApiTier.FULL, use_case=pricing_sheets.RENAME_SHEET, dashboard=True)
@takes(body_of(pricing_sheets.RENAME_SHEET, path=("sheet_id",)))
@answers(404, 409)
async def rename_sheet(sheet_id: int):
    """Rename a pricing sheet: {name}."""
    return await run_route(pricing_sheets.RENAME_SHEET, body=True, sheet_id=sheet_id)


@blueprint.delete("/pricing-sheets/<id:sheet_id>")
@responds(pricing.SheetRemoved)
@guarded(tier=ApiTier.FULL, use_case=pricing_sheets.REMOVE_SHEET, dashboard=True)
@answers(404)
async def remove_sheet(sheet_id: int):
    """Remove a pricing sheet and its items."""
    return await run_route(pricing_sheets.REMOVE_SHEET, sheet_id=sheet_id)


@blueprint.post("/pricing-sheets/<id:sheet_id>/items")
@responds(pricing.PriceItem, 201)
@guarded(tier=ApiTier.FULL, use_case=pricing_sheets.ADD_ITEM, dashboard=True)
@takes(body_of(pricing_sheets.ADD_ITEM, path=("sheet_id",)))
@answers(404, 409)
async def add_item(sheet_id: int):
    """Add an item: {name, price (a decimal string such as "19.00"), currency, unit?, valid_from?, valid_until?,
    notes?}."""
    return await run_route(pricing_sheets.ADD_ITEM, 201, body=True, sheet_id=sheet_id)


@blueprint.patch("/pricing-sheets/<id:sheet_id>/items/<id:item_id>")
@responds(pricing.PriceItem)
@guarded(tier=ApiTier.FULL, use_case=pricing_sheets.CHANGE_ITEM, dashboard=True)
@takes(body_of(pricing_sheets.CHANGE_ITEM, path=("sheet_id", "item_id")))
@answers(404)
async def change_item(sheet_id: int, item_id: int):
    """Change an item's fields (what is left out is kept; a date given as null is cleared)."""
    return await run_route(pricing_sheets.CHANGE_ITEM, body=True, sheet_id=sheet_id, item_id=item_id)


@blueprint.delete("/pricing-sheets/<id:sheet_id>/items/<id:item_id>")
@responds(pricing.ItemRemoved)
@guarded(tier=ApiTier.FULL, use_case=pricing_sheets.REMOVE_ITEM, dashboard=True)
@answers(404)
async def remove_item(sheet_id: int, item_id: int):
    """Remove an item."""
    return await run_route(pricing_sheets.REMOVE_ITEM, sheet_id=sheet_id, item_id=item_id)


@blueprint.put("/pricing-sheets/<id:sheet_id>/items.csv")
@responds(pricing.SheetSummary)
@guarded(tier=ApiTier.FULL, use_case=pricing_sheets.IMPORT, dashboard=True)
@takes(CSV_BODY, media="text/csv")
@answers(404)
async def import_items(sheet_id: int):
    """Replace the sheet's items with a CSV file's (text/csv), all or nothing."""
    raw = await request.get_data()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(400, "invalid_csv", "The CSV is not UTF-8 text.") from None
    return await run_route(pricing_sheets.IMPORT, sheet_id=sheet_id, csv=text)


@blueprint.get("/pricing-sheets/<id:sheet_id>/items.csv")
@responds(bytes, media=(CSV_MEDIA,))
@guarded(tier=ApiTier.FULL, use_case=pricing_sheets.EXPORT, dashboard=True)
@answers(404)
async def export_items(sheet_id: int):
    """The sheet's items as CSV, in the columns an import reads."""
    outcome = await run(dependencies().use_case_deps, current_caller(), pricing_sheets.EXPORT, {"sheet_id": sheet_id})
    if isinstance(outcome, Refused):
        return answer(outcome)  # raises the refusal's stable-code error
    found: pricing.CsvExport = outcome.data
    return Response(found.text, 200, content_type=CSV_MEDIA,
                    headers={"Content-Disposition": f'attachment; filename="{found.filename}"'})


@blueprint.get("/quote")
@responds(pricing.Quotes)
@guarded(tier=ApiTier.FULL, use_case=pricing_sheets.QUOTE, dashboard=True)
@accepts(QUOTE_PARAMETERS)
async def quote():
    """What the agent's quote_price tool would answer: the items valid today that match, best first."""
    return await run_route(pricing_sheets.QUOTE, q=request.args.get("q"))
