"""The AI agent's knowledge as use cases: its articles listed, read, added, changed and removed, and the search an
admin runs to see what the agent would be grounded in for a question.

The rules are the knowledge's (`ai_agent/knowledge.py`: an article is split into passages as it is saved, and the
change is in the team audit log); a refusal of theirs answers with its status, code and sentence. Reading needs
the bot's read permission; changing articles is editing the bot's knowledge, as its FAQ answers are.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from inbox_actors.ai_agent import knowledge
from inbox_actors.bot.settings import BotRefusal
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.chat_reads import NoArguments
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import FILLED_LINE, LINES, ONE_LINE
from inbox_actors.use_cases.outcomes import Done, Outcome, judged
from inbox_actors.use_cases.use_case import Kind, UseCase, done, rule

MAX_QUESTION = 1_000
# Text with a character that is neither a space nor a control character (but line breaks and tabs).
FILLED_TEXT = rf"^{LINES}*[^\s\x00-\x1f\x7f\x85]{LINES}*$"

Title = Annotated[str, msgspec.Meta(
    min_length=1, max_length=knowledge.MAX_TITLE, pattern=FILLED_LINE, description="The article's title.",
    extra=rule("invalid_title", f"title must be 1 to {knowledge.MAX_TITLE} characters on one line, not blank."))]
Body = Annotated[str, msgspec.Meta(
    min_length=1, max_length=knowledge.MAX_BODY, pattern=FILLED_TEXT,
    description="Markdown: split into passages at headings and paragraphs as it is saved.",
    extra=rule("invalid_article_body", f"body must be 1 to {knowledge.MAX_BODY:,} characters of Markdown, not "
                                       "blank, with no control characters but line breaks and tabs."))]
# Any whole number: one no article has (0, beyond bigint) is answered as any missing article is, 404 not_found.
ArticleId = Annotated[int, msgspec.Meta(description="The article's id.")]


class NewArticle(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    title: Title
    body: Body


class ArticleChange(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What is left out is kept."""

    article_id: ArticleId
    title: Title | msgspec.UnsetType = msgspec.UNSET
    body: Body | msgspec.UnsetType = msgspec.UNSET


class OneArticle(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    article_id: ArticleId


class Question(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    q: Annotated[str, msgspec.Meta(
        min_length=1, max_length=MAX_QUESTION, pattern=ONE_LINE,
        description="A customer's question, as they might write it.",
        extra=rule("invalid_q", f"q must be 1 to {MAX_QUESTION:,} characters on one line: the question to "
                                "search the knowledge for."))]


def acting_member(caller: Caller) -> int | None:
    """Who the records name as having acted: the operator is no member (the audit log's NULL, `via` "cli")."""
    return None if caller.is_operator else caller.member_id


# -- handlers ------------------------------------------------------------------------------------------------


async def _list(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(await knowledge.articles(deps.db, caller.workspace_id))


async def _read(deps: UseCaseDeps, caller: Caller, a: OneArticle) -> Outcome:
    return done(await judged(knowledge.article(deps.db, caller.workspace_id, a.article_id), BotRefusal))


async def _add(deps: UseCaseDeps, caller: Caller, a: NewArticle) -> Outcome:
    return done(await judged(knowledge.add_article(deps.db, caller.workspace_id, acting_member(caller),
                                                   caller.author, a.title, a.body, deps.clock.now()), BotRefusal))


async def _change(deps: UseCaseDeps, caller: Caller, a: ArticleChange) -> Outcome:
    title = None if a.title is msgspec.UNSET else a.title
    body = None if a.body is msgspec.UNSET else a.body
    return done(await judged(knowledge.change_article(
        deps.db, caller.workspace_id, acting_member(caller), caller.author, a.article_id, title=title, body=body,
        now=deps.clock.now()), BotRefusal))


async def _remove(deps: UseCaseDeps, caller: Caller, a: OneArticle) -> Outcome:
    return done(await judged(knowledge.remove_article(deps.db, caller.workspace_id, acting_member(caller),
                                                      caller.author, a.article_id, deps.clock.now()), BotRefusal))


async def _search(deps: UseCaseDeps, caller: Caller, a: Question) -> Outcome:
    return Done(await knowledge.search(deps.db, caller.workspace_id, a.q))


# -- the declarations ----------------------------------------------------------------------------------------

LIST_ARTICLES = UseCase("list_bot_articles", NoArguments, permissions.BOT, Kind.READ, _list)
READ_ARTICLE = UseCase("get_bot_article", OneArticle, permissions.BOT, Kind.READ, _read)
ADD_ARTICLE = UseCase("add_bot_article", NewArticle, permissions.BOT_KNOWLEDGE, Kind.WRITE, _add)
CHANGE_ARTICLE = UseCase("change_bot_article", ArticleChange, permissions.BOT_KNOWLEDGE, Kind.WRITE, _change)
REMOVE_ARTICLE = UseCase("remove_bot_article", OneArticle, permissions.BOT_KNOWLEDGE, Kind.WRITE, _remove)
SEARCH = UseCase("search_bot_knowledge", Question, permissions.BOT, Kind.READ, _search)
