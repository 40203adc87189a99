"""What the bot knows, for admins: `/app/bot/knowledge` (its FAQ answers, its articles, a form to add one, and the
"check what the agent finds" search) and `/app/bot/knowledge/articles/<id>` (an article: its passages, changing
its title or body, removing it).

Each form runs one of the use cases of `use_cases/bot.py` (FAQ answers) or `use_cases/ai_knowledge.py`
(articles, the search), as the member, through the helpers the bot's pages share (`bot_pages.py`); a refusal shows
its sentence beside the form as it was typed. The search is a read, so its form is a GET: the address holds the
question, and the results can be reloaded or shared.
"""

from __future__ import annotations

from quart import Blueprint, redirect, request

from inbox_actors.use_cases import ai_knowledge, bot
from inbox_actors.use_cases.outcomes import Refused
from inbox_http.guard import current_caller
from inbox_http.web.bot_pages import done_notice, read, require_reading, run_form, text_of
from inbox_http.web.page_guard import signed_in
from inbox_http.web.pages import page

blueprint = Blueprint("web_bot_knowledge", __name__, url_prefix="/app/bot/knowledge", template_folder="templates")

_DONE = {"added": "Answer added.", "removed": "Answer removed.", "article-removed": "Article removed."}
_ARTICLE_DONE = {"added": "Article added and split into passages.", "changed": "Article saved and split again."}


@blueprint.get("")
@signed_in
async def knowledge_page():
    require_reading()
    return await _render(notice=done_notice(_DONE))


@blueprint.post("/answers")
@signed_in
async def add_answer():
    require_reading()
    form = await request.form
    # Keywords are typed as the command line takes them, comma-separated; the bot's rules judge each one.
    outcome = await run_form(bot.ADD_ANSWER, {"keywords": form.get("keywords", "").split(","),
                                              "answer": form.get("answer", "").strip()})
    if isinstance(outcome, Refused):
        return await _render(outcome, typed=form.to_dict())
    return redirect("/app/bot/knowledge?done=added", 303)


@blueprint.post("/answers/<int:answer_id>/remove")
@signed_in
async def remove_answer(answer_id: int):
    require_reading()
    outcome = await run_form(bot.REMOVE_ANSWER, {"answer_id": answer_id})
    if isinstance(outcome, Refused):
        return await _render(outcome)
    return redirect("/app/bot/knowledge?done=removed", 303)


@blueprint.post("/articles")
@signed_in
async def add_article():
    require_reading()
    form = await request.form
    typed = {"title": form.get("title", ""), "body": text_of(form, "body")}
    outcome = await run_form(ai_knowledge.ADD_ARTICLE, typed)
    if isinstance(outcome, Refused):
        return await _render(outcome, typed=typed)
    return redirect(f"/app/bot/knowledge/articles/{outcome.data.id}?done=added", 303)


@blueprint.get("/articles/<int:article_id>")
@signed_in
async def article_page(article_id: int):
    require_reading()
    return await _article(article_id, notice=done_notice(_ARTICLE_DONE))


@blueprint.post("/articles/<int:article_id>")
@signed_in
async def change_article(article_id: int):
    require_reading()
    form = await request.form
    typed = {"title": form.get("title", ""), "body": text_of(form, "body")}
    outcome = await run_form(ai_knowledge.CHANGE_ARTICLE, {"article_id": article_id, **typed})
    if isinstance(outcome, Refused):
        return await _article(article_id, outcome, typed=typed)
    return redirect(f"/app/bot/knowledge/articles/{article_id}?done=changed", 303)


@blueprint.post("/articles/<int:article_id>/remove")
@signed_in
async def remove_article(article_id: int):
    require_reading()
    outcome = await run_form(ai_knowledge.REMOVE_ARTICLE, {"article_id": article_id})
    if isinstance(outcome, Refused):
        return await _article(article_id, outcome)
    return redirect("/app/bot/knowledge?done=article-removed", 303)


async def _render(refused: Refused | None = None, notice: str | None = None, typed: dict | None = None):
    """The knowledge as it is now, with the search's results when the address asks a question (`?q=`), and a
    refused form's sentence, status and fields as typed."""
    caller = current_caller()
    question = request.args.get("q") if request.method == "GET" else None
    hits, search_refusal = None, None
    if question is not None:
        searched = await run_form(ai_knowledge.SEARCH, {"q": question})
        if isinstance(searched, Refused):
            search_refusal = searched.message
        else:
            hits = searched.data
    status = refused.status if refused else 400 if search_refusal else 200
    return await page(
        "bot_knowledge.html", status, here="knowledge", answers=(await read(bot.ANSWERS)).data,
        articles=(await read(ai_knowledge.LIST_ARTICLES)).data, question=question, hits=hits,
        search_refusal=search_refusal, may_edit_answers=bot.ADD_ANSWER.allows(caller),
        may_add_article=ai_knowledge.ADD_ARTICLE.allows(caller), typed=typed or {}, notice=notice,
        refusal=refused.message if refused else None)


async def _article(article_id: int, refused: Refused | None = None, notice: str | None = None,
                   typed: dict | None = None):
    """An article's page; its form shows the article as saved, or as typed into a refused form. An article
    that is not there (removed meanwhile, say) is the read's refusal: 404."""
    caller = current_caller()
    article = await read(ai_knowledge.READ_ARTICLE, {"article_id": article_id})
    return await page(
        "bot_article.html", refused.status if refused else 200, here="knowledge", article=article,
        shown={"title": article.title, "body": article.body} | (typed or {}),
        may_change=ai_knowledge.CHANGE_ARTICLE.allows(caller), may_remove=ai_knowledge.REMOVE_ARTICLE.allows(caller),
        notice=notice, refusal=refused.message if refused else None)
