"""The bot in front of every chat: a pluggable `Responder` that answers a customer or hands the chat to a person.

The default responder, `FaqBot`, answers from the workspace's stored answers (`inbox-actors bot add`):

1. Hand-off first. A customer asking for a person is handed off (`customer_asked_for_person`) whatever else
   the message says. The phrases are HANDOFF_PHRASES, matched as whole words, case-insensitively
   ("Can I talk to a HUMAN?" hands off; "humanity" does not).
2. Otherwise the stored answer whose keywords best match the text. A keyword (a word or a phrase of words)
   matches when its words appear in the text in that order, next to each other, as whole words, ignoring case
   and punctuation ("Price?" matches `price`; "prices" does not: add both if both are meant). An answer is a
   candidate when at least one of its keywords matches (its keywords are alternatives: `price,cost`). The
   candidate matching the most keywords wins; a tie goes to the one whose matched keywords hold more words
   (the more specific), then to the oldest answer (lowest id).
3. Otherwise hand off with `bot_has_no_answer`.

Each workspace's bot settings (`bot_settings`; none stored: on, no persona, no hand-off words) shape it: switched
off, every message hands off (`bot_off`); a persona is the name its answers are labelled with (`sender_label`;
"bot" otherwise); hand-off words are sent to the customer as the bot hands a chat to a person.

Keywords are stored normalised (lowercase words separated by one space); a keyword that contains a hand-off
phrase is refused, since that answer could never be given.

A workspace's answers and settings are cached in memory for `cache_seconds` (default 10): a busy chat does not
read PostgreSQL per message, and an edit made elsewhere (the CLI, the API in another node) shows within that time.
`forget()` drops a workspace's copy at once (edits made in this process).
"""

from __future__ import annotations

import re
from typing import Callable, Protocol, Sequence

import msgspec
import trio

from inbox_actors.domain.conversation_states import BOT_HAS_NO_ANSWER, BOT_OFF, CUSTOMER_ASKED_FOR_PERSON
from inbox_actors.domain.errors import OperatorError
from inbox_actors.runtime import Directory
from persistence.database import Database, Record
from persistence.queries import bot_answers as answer_queries
from persistence.queries import bot_settings as settings_queries
from persistence.queries import workspaces as workspace_queries

HANDOFF_PHRASES: tuple[str, ...] = (
    "human", "humans", "agent", "agents", "person", "real person", "representative", "operator",
    "talk to someone", "speak to someone", "talk to somebody", "speak to somebody", "customer service",
    "customer support", "live chat",
)
DEFAULT_CACHE_SECONDS = 10.0
MAX_KEYWORDS = 20
MAX_KEYWORD_LENGTH = 100
MAX_ANSWER_LENGTH = 4096  # the platform's limit on a text message

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


DEFAULT_LABEL = "bot"


class Reply(msgspec.Struct, frozen=True, tag=True):
    """Send this text to the customer, labelled `label` (the persona). The AI agent's reply also names the model
    call that wrote it (`model_call`, so the sent message is linked to its tokens, cost and grounding) and is
    charged as one."""

    text: str
    label: str = DEFAULT_LABEL
    model_call: int | None = None


class HandOff(msgspec.Struct, frozen=True, tag=True):
    """Hand the chat to a person; `reason` is recorded as the chat's handover reason; `message`, when given, is
    sent to the customer first, labelled `label`."""

    reason: str
    message: str | None = None
    label: str = DEFAULT_LABEL


class AgentBehaviour(msgspec.Struct, frozen=True, kw_only=True):
    """How the AI agent answers (docs/ai-agent.md#behaviour); the keyword FAQ bot reads none of it."""

    system_prompt: str = ""
    """The team's own instructions, added to the agent's (which the customer's words never change)."""
    tone: str = "friendly"
    answer_length: str = "short"
    customer_language: bool = True
    """Answer in the language the customer writes in; false: in the knowledge's `language`."""
    language: str = "english"
    """The knowledge's language: PostgreSQL's text search configuration its words are stemmed with."""
    model: str = ""
    """The model the agent asks; "" for the service's default (INBOX_MODEL)."""
    temperature: float = 0.2
    max_bot_turns: int = 6
    """Replies in a row without a person after which the next customer message goes to a person."""


class BotProfile(AgentBehaviour, frozen=True, kw_only=True):
    """A workspace's bot settings as the bot uses them (the AI agent's behaviour: `AgentBehaviour`)."""

    enabled: bool = True
    persona: str = ""
    handoff_message: str = ""
    monthly_budget_micros: int | None = None


class Turn(msgspec.Struct, frozen=True):
    """One message of the chat as the bot sees it: the `customer`'s, or the `business`'s (the bot or a person)."""

    speaker: str
    text: str


class BotQuestion(msgspec.Struct, frozen=True):
    """What a chat asks its bot: the recent turns, oldest first, of which the last `unanswered` are the customer's
    words not yet answered (several, when they wrote again while the bot was thinking), and how many replies the
    bot has given in a row (no person in between)."""

    workspace_id: int
    conversation_id: int | None
    turns: tuple[Turn, ...]
    unanswered: int = 1
    bot_turns: int = 0

    @property
    def text(self) -> str:
        return "\n".join(turn.text for turn in self.turns[len(self.turns) - self.unanswered:])


NO_PROFILE = BotProfile()


BotAnswer = Reply | HandOff


class Responder(Protocol):
    """What a chat's bot is: the keyword FAQ bot below, or the AI agent (inbox_actors/ai_agent/agent.py), which
    needs the actor system for its workspace's model gate. A respond may take seconds (a model call): the chat runs
    it beside its mailbox, never in a turn of it."""

    async def respond(self, question: BotQuestion, actors: Directory) -> BotAnswer: ...


class StoredAnswer(msgspec.Struct, frozen=True):
    id: int
    keywords: tuple[str, ...]
    answer: str


class AnswerSource(Protocol):
    async def load_answers(self, workspace_id: int) -> Sequence[StoredAnswer]: ...


class DatabaseAnswers:
    """The answers and settings stored in PostgreSQL."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def load_answers(self, workspace_id: int) -> Sequence[StoredAnswer]:
        rows = await answer_queries.list_answers(self._db, workspace_id)
        return [StoredAnswer(id=r["id"], keywords=tuple(r["keywords"]), answer=r["answer"]) for r in rows]

    async def load_profile(self, workspace_id: int) -> BotProfile:
        row = await settings_queries.find_settings(self._db, workspace_id)
        return NO_PROFILE if row is None else profile_of(row)


def profile_of(row: Record) -> BotProfile:
    return BotProfile(**{name: row[name] for name in BotProfile.__struct_fields__})


class BotStatistics(msgspec.Struct, frozen=True):
    cached_workspaces: int
    hits: int
    loads: int


# -- matching (pure) ----------------------------------------------------------------------------------------


def words(text: str) -> tuple[str, ...]:
    """Lowercase words of the text; punctuation and spacing are separators (apostrophes stay inside words)."""
    return tuple(_WORD.findall(text.casefold()))


def _contains(haystack: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    size = len(needle)
    return size > 0 and any(haystack[i:i + size] == needle for i in range(len(haystack) - size + 1))


_HANDOFF_WORDS = tuple(words(phrase) for phrase in HANDOFF_PHRASES)


def asks_for_person(text: str) -> bool:
    said = words(text)
    return any(_contains(said, phrase) for phrase in _HANDOFF_WORDS)


def best_answer(answers: Sequence[StoredAnswer], text: str) -> StoredAnswer | None:
    """The answer whose keywords best match the text (rules in the module's docstring), or None."""
    said = words(text)
    best, best_rank = None, None
    for candidate in answers:
        matched = [kw for kw in (words(k) for k in candidate.keywords) if _contains(said, kw)]
        if not matched:
            continue
        rank = (len(matched), sum(len(kw) for kw in matched), -candidate.id)
        if best_rank is None or rank > best_rank:
            best, best_rank = candidate, rank
    return best


def respond(answers: Sequence[StoredAnswer], text: str) -> BotAnswer:
    if asks_for_person(text):
        return HandOff(CUSTOMER_ASKED_FOR_PERSON)
    found = best_answer(answers, text)
    return Reply(found.answer) if found is not None else HandOff(BOT_HAS_NO_ANSWER)


# -- the default responder ----------------------------------------------------------------------------------


class FaqBot:
    """Answers from stored answers (`FaqBot(db)`, or any AnswerSource), each workspace's cached briefly."""

    def __init__(self, source: Database | AnswerSource, *, cache_seconds: float = DEFAULT_CACHE_SECONDS,
                 clock: Callable[[], float] = trio.current_time) -> None:
        self._source: AnswerSource = DatabaseAnswers(source) if isinstance(source, Database) else source
        self._cache_seconds = cache_seconds
        self._clock = clock
        self._cache: dict[int, tuple[float, Sequence[StoredAnswer], BotProfile]] = {}
        self._loading: dict[int, trio.Event] = {}
        self._hits = self._loads = 0

    async def respond(self, question: BotQuestion, actors: Directory) -> BotAnswer:
        return await self.answer(question.workspace_id, question.text)

    async def profile(self, workspace_id: int) -> BotProfile:
        """The workspace's bot settings, from the cache while fresh."""
        return (await self._knowledge(workspace_id))[1]

    async def answer(self, workspace_id: int, text: str) -> BotAnswer:
        answers, profile = await self._knowledge(workspace_id)
        label = profile.persona or DEFAULT_LABEL
        decided = HandOff(BOT_OFF) if not profile.enabled else respond(answers, text)
        if isinstance(decided, Reply):
            return Reply(decided.text, label=label)
        return HandOff(decided.reason, message=profile.handoff_message or None, label=label)

    async def _knowledge(self, workspace_id: int) -> tuple[Sequence[StoredAnswer], BotProfile]:
        """The workspace's answers and settings, from the cache while fresh; concurrent misses share one load."""
        while True:
            cached = self._cache.get(workspace_id)
            if cached is not None and self._clock() - cached[0] < self._cache_seconds:
                self._hits += 1
                return cached[1], cached[2]
            loading = self._loading.get(workspace_id)
            if loading is None:
                break
            await loading.wait()  # then look again: the load may have failed
        done = self._loading[workspace_id] = trio.Event()
        try:
            started = self._clock()
            answers = tuple(await self._source.load_answers(workspace_id))
            load_profile = getattr(self._source, "load_profile", None)  # a source of answers alone: the defaults
            profile = await load_profile(workspace_id) if load_profile is not None else NO_PROFILE
            self._loads += 1
            self._drop_stale()
            self._cache[workspace_id] = (started, answers, profile)
            return answers, profile
        finally:
            del self._loading[workspace_id]
            done.set()

    def forget(self, workspace_id: int) -> None:
        """Drop the workspace's cached answers: the next message reads them afresh."""
        self._cache.pop(workspace_id, None)

    def statistics(self) -> BotStatistics:
        return BotStatistics(cached_workspaces=len(self._cache), hits=self._hits, loads=self._loads)

    def _drop_stale(self) -> None:
        now = self._clock()
        for workspace_id in [w for w, (at, _, _) in self._cache.items() if now - at >= self._cache_seconds]:
            del self._cache[workspace_id]


# -- the stored answers: their rules, adding and listing (the team's changes, audited, are `bot/settings.py`'s) --


class BotAnswerError(OperatorError):
    """A bot answer request that breaks a rule; the message says which. Nothing was written."""


class AnswerView(msgspec.Struct, frozen=True):
    answer_id: int
    keywords: list[str]
    answer: str


def keyword_list(raw: Sequence[str]) -> list[str]:
    """Normalised keywords (lowercase words, one space apart), deduplicated in order; refused when empty,
    too many, too long, or naming a hand-off phrase."""
    keywords: list[str] = []
    for item in raw:
        if not item.strip():
            continue
        normalised = " ".join(words(item))
        if not normalised:
            raise BotAnswerError(f"keyword {item.strip()!r} has no letters or digits")
        if len(normalised) > MAX_KEYWORD_LENGTH:
            raise BotAnswerError(f"a keyword is at most {MAX_KEYWORD_LENGTH} characters: {item.strip()!r}")
        if asks_for_person(normalised):
            raise BotAnswerError(f"keyword {normalised!r} contains a hand-off phrase: a customer writing it is "
                                 "handed to a person, so this answer would never be given")
        if normalised not in keywords:
            keywords.append(normalised)
    if not 1 <= len(keywords) <= MAX_KEYWORDS:
        raise BotAnswerError(f"give 1 to {MAX_KEYWORDS} keywords")
    return keywords


async def add_answer(db: Database, *, workspace_id: int, keywords: Sequence[str], answer: str) -> AnswerView:
    normalised = keyword_list(keywords)
    answer = answer.strip()
    if not 1 <= len(answer) <= MAX_ANSWER_LENGTH:
        raise BotAnswerError(f"the answer must be 1 to {MAX_ANSWER_LENGTH:,} characters")
    async with db.transaction() as tx:
        if await workspace_queries.find_workspace(tx, workspace_id) is None:
            raise BotAnswerError(f"no workspace {workspace_id}")
        row = await answer_queries.insert_answer(tx, workspace_id=workspace_id, keywords=normalised, answer=answer)
    return AnswerView(answer_id=row["id"], keywords=normalised, answer=answer)


async def list_answers(db: Database, *, workspace_id: int) -> list[AnswerView]:
    if await workspace_queries.find_workspace(db, workspace_id) is None:
        raise BotAnswerError(f"no workspace {workspace_id}")
    return [AnswerView(answer_id=r["id"], keywords=list(r["keywords"]), answer=r["answer"])
            for r in await answer_queries.list_answers(db, workspace_id)]

