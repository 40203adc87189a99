"""The AI agent's knowledge: the team's articles (Markdown), split into the passages retrieval ranks and cites, and
`retrieve`, the agent's entry point, which finds the passages and FAQ answers a customer's question is about.

Saving an article rewrites its passages in the same transaction and records the change in the team audit log (the
operator as no member: `member_id` None). Passages are short on purpose: a model grounded in a few
focused passages answers better than one handed whole articles, and a cited passage says where an answer came from.
Search is PostgreSQL's full-text search stemmed in the workspace's language, so "prices" finds "price"; any word of
the question may match and stop words fall away. Who may do what, and the arguments' rules, are the use cases'
(`use_cases/ai_knowledge.py`).
"""

from __future__ import annotations

import re
from datetime import datetime

import msgspec

from inbox_actors.bot.settings import BotRefusal
from inbox_actors.domain import team_audit
from inbox_actors.domain.member_ref import MemberRef
from persistence.database import Database, Record
from persistence.queries import ai_knowledge as queries
from persistence.queries import team_audit as audit_queries

MAX_TITLE = 200
MAX_BODY = 50_000
MAX_ARTICLES = 1_000
"""An article list is answered whole, so it is bounded."""
TARGET_PASSAGE = 800
"""Small paragraphs of a section are merged up to this many characters."""
MAX_PASSAGE = 1_000
"""No passage is longer (a paragraph is cut at sentence ends, a sentence at spaces, a single longer word anywhere)."""
DEFAULT_LIMIT = 8
MAX_QUESTION_WORDS = 64
BIGINT_MAX = 2**63 - 1

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*\s+|[。！？]+\s*")
_SPACES = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+")


class Passage(msgspec.Struct, frozen=True):
    """What retrieval found: a passage of an article or an FAQ answer."""

    ref: str
    """"p<passage id>" or "faq<answer id>": how the agent's grounding cites it."""
    title: str
    """A passage's heading (else its article's title); an FAQ answer's keywords joined by ", "."""
    text: str
    rank: float
    """PostgreSQL's cover density rank for the question: higher is more relevant."""


class PassageView(msgspec.Struct, frozen=True):
    id: int
    position: int
    heading: str
    text: str


class ArticleSummary(msgspec.Struct, frozen=True):
    id: int
    title: str
    passages: int
    updated_at: datetime
    updated_by: MemberRef | None


class ArticleList(msgspec.Struct, frozen=True):
    data: list[ArticleSummary]


class ArticleView(msgspec.Struct, frozen=True):
    id: int
    title: str
    body: str
    created_at: datetime
    updated_at: datetime
    updated_by: MemberRef | None
    passages: list[PassageView]


class ArticleRemoved(msgspec.Struct, frozen=True):
    article_id: int
    removed: bool


class KnowledgeHits(msgspec.Struct, frozen=True):
    data: list[Passage]


# -- splitting -----------------------------------------------------------------------------------------------


def split_passages(title: str, body: str) -> list[tuple[str, str]]:
    """The body's passages as (heading, text), in order: a section per Markdown heading (before the first, the
    article's title is the heading; a heading with nothing under it makes no passage), a section's paragraphs
    (split at blank lines; a fenced code block is one paragraph) merged up to TARGET_PASSAGE characters, and a
    paragraph longer than MAX_PASSAGE cut at sentence ends."""
    found: list[tuple[str, str]] = []
    for heading, paragraphs in _sections(title, body):
        chunk = ""
        for unit in (piece for paragraph in paragraphs for piece in _cut(paragraph)):
            if chunk and len(chunk) + 2 + len(unit) <= TARGET_PASSAGE:
                chunk = f"{chunk}\n\n{unit}"
                continue
            if chunk:
                found.append((heading, chunk))
            chunk = unit
        if chunk:
            found.append((heading, chunk))
    return found


def _sections(title: str, body: str) -> list[tuple[str, list[str]]]:
    sections: list[tuple[str, list[str]]] = [(title, [])]
    lines: list[str] = []
    fenced = False

    def end_paragraph() -> None:
        text = "\n".join(lines).strip()
        if text:
            sections[-1][1].append(text)
        lines.clear()

    for line in body.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
            lines.append(line)
            continue
        heading = None if fenced else _HEADING.match(line)
        if heading is not None:
            end_paragraph()
            text = _CLOSING_HASHES.sub("", (heading.group(2) or "").strip()).strip()
            sections.append((_shortened(text, MAX_TITLE) or title, []))
        elif not line.strip() and not fenced:
            end_paragraph()
        else:
            lines.append(line)
    end_paragraph()
    return sections


def _cut(paragraph: str) -> list[str]:
    """A paragraph in pieces of at most MAX_PASSAGE characters, cut where a sentence ends (a sentence longer than
    that where a word does; a single longer word, a link say, where it must)."""
    if len(paragraph) <= MAX_PASSAGE:
        return [paragraph]
    pieces: list[str] = []
    for sentences in _packed(_split_after(paragraph, _SENTENCE_END)):
        if len(sentences) <= MAX_PASSAGE:
            pieces.append(sentences)
            continue
        for words in _packed(_split_after(sentences, _SPACES)):
            pieces += [words[start:start + MAX_PASSAGE].strip() for start in range(0, len(words), MAX_PASSAGE)]
    return [piece for piece in pieces if piece]


def _split_after(text: str, boundary: re.Pattern[str]) -> list[str]:
    """`text` in segments, each ending just after a boundary (the last at the text's end)."""
    segments, start = [], 0
    for found in boundary.finditer(text):
        if found.end() > start:
            segments.append(text[start:found.end()])
            start = found.end()
    if start < len(text):
        segments.append(text[start:])
    return segments


def _packed(segments: list[str]) -> list[str]:
    """Consecutive segments joined while they fit in TARGET_PASSAGE characters (one longer segment stays alone)."""
    packed: list[str] = []
    current = ""
    for segment in segments:
        if current.strip() and len((current + segment).strip()) > TARGET_PASSAGE:
            packed.append(current.strip())
            current = ""
        current += segment
    if current.strip():
        packed.append(current.strip())
    return packed


def _shortened(text: str, limit: int) -> str:
    """`text` cut to `limit` characters at a space (where it has one)."""
    if len(text) <= limit:
        return text
    words = text[:limit + 1].rsplit(maxsplit=1)
    return words[0].rstrip() if len(words) == 2 else text[:limit]


# -- retrieval -----------------------------------------------------------------------------------------------


def question_words(question: str) -> str:
    """The question's words (letters and digits) for `websearch_to_tsquery`, joined by " or " so that any of them
    may match; "" when it has none. "or" itself is the syntax's operator, so it is left out."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(question):
        folded = word.casefold()
        if folded != "or":
            seen.setdefault(folded, None)
    return " or ".join(list(seen)[:MAX_QUESTION_WORDS])


async def retrieve(db: Database, workspace_id: int, question: str, *, limit: int = DEFAULT_LIMIT) -> list[Passage]:
    """The workspace's passages and FAQ answers most relevant to `question`, best first, at most `limit`; [] for
    a question with no words (or only stop words)."""
    words = question_words(question)
    if not words or limit < 1:
        return []
    rows = await queries.search(db, workspace_id, words, limit)
    return [Passage(row["ref"], row["title"], row["text"], float(row["rank"])) for row in rows]


async def search(db: Database, workspace_id: int, question: str) -> KnowledgeHits:
    return KnowledgeHits(await retrieve(db, workspace_id, question))


# -- articles ------------------------------------------------------------------------------------------------


async def articles(db: Database, workspace_id: int) -> ArticleList:
    rows = await queries.list_articles(db, workspace_id)
    return ArticleList([ArticleSummary(row["id"], row["title"], row["passages"], row["updated_at"], _by(row))
                        for row in rows])


async def article(db: Database, workspace_id: int, article_id: int) -> ArticleView:
    row = await queries.find_article(db, workspace_id, article_id) if _may_exist(article_id) else None
    if row is None:
        raise _not_found(article_id)
    passages = [PassageView(p["id"], p["position"], p["heading"], p["text"])
                for p in await queries.passages(db, article_id)]
    return ArticleView(row["id"], row["title"], row["body"], row["created_at"], row["updated_at"], _by(row),
                       passages)


async def add_article(db: Database, workspace_id: int, member_id: int | None, via: str, title: str, body: str,
                      now: datetime) -> ArticleView:
    title = " ".join(title.split())
    async with db.transaction() as tx:
        if await queries.count_articles(tx, workspace_id) >= MAX_ARTICLES:
            raise BotRefusal(409, "too_many_articles", f"A workspace has at most {MAX_ARTICLES:,} articles.")
        article_id = await queries.insert_article(tx, workspace_id, title, body, member_id, now)
        count = await _save_passages(tx, workspace_id, article_id, title, body)
        await _audit(tx, workspace_id, member_id, via, team_audit.BOT_ARTICLE_ADDED, article_id, now,
                     {"title": title, "passages": count})
    return await article(db, workspace_id, article_id)


async def change_article(db: Database, workspace_id: int, member_id: int | None, via: str, article_id: int, *,
                         title: str | None, body: str | None, now: datetime) -> ArticleView:
    """Save what is given (None: kept); the passages are split again either way (a title heads a passage)."""
    if not _may_exist(article_id):
        raise _not_found(article_id)
    async with db.transaction() as tx:
        row = await queries.lock_article(tx, workspace_id, article_id)
        if row is None:
            raise _not_found(article_id)
        title = row["title"] if title is None else " ".join(title.split())
        body = row["body"] if body is None else body
        await queries.update_article(tx, workspace_id, article_id, title, body, member_id, now)
        count = await _save_passages(tx, workspace_id, article_id, title, body)
        await _audit(tx, workspace_id, member_id, via, team_audit.BOT_ARTICLE_CHANGED, article_id, now,
                     {"title": title, "passages": count})
    return await article(db, workspace_id, article_id)


async def remove_article(db: Database, workspace_id: int, member_id: int | None, via: str, article_id: int,
                         now: datetime) -> ArticleRemoved:
    if not _may_exist(article_id):
        raise _not_found(article_id)
    async with db.transaction() as tx:
        title = await queries.delete_article(tx, workspace_id, article_id)
        if title is None:
            raise _not_found(article_id)
        await _audit(tx, workspace_id, member_id, via, team_audit.BOT_ARTICLE_REMOVED, article_id, now,
                     {"title": title})
    return ArticleRemoved(article_id, True)


async def _save_passages(tx, workspace_id: int, article_id: int, title: str, body: str) -> int:
    passages = split_passages(title, body)
    await queries.replace_passages(tx, workspace_id, article_id, [heading for heading, _ in passages],
                                   [text for _, text in passages])
    return len(passages)


async def _audit(tx, workspace_id: int, member_id: int | None, via: str, action: str, article_id: int,
                 now: datetime, details: dict) -> None:
    await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=member_id, via=via, action=action,
                               subject=f"bot_article:{article_id}", details=details)


def _by(row: Record) -> MemberRef | None:
    return MemberRef(row["updated_by"], row["updated_by_name"]) if row["updated_by"] else None


def _may_exist(article_id: int) -> bool:
    """Ids are positive bigints: any other number names no article (and must not reach PostgreSQL)."""
    return 1 <= article_id <= BIGINT_MAX


def _not_found(article_id: int) -> BotRefusal:
    return BotRefusal(404, "not_found", f"This workspace has no article {article_id}.")
