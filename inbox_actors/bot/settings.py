"""The bot's settings and knowledge as the team manages them: its FAQ answers (`conversations/bot.py` holds the
matching and the answer rules), its persona and hand-off words, on or off, and the trail of the chats it handed
to a person. A per-workspace setting written in one transaction each and recorded in the team audit log (the
operator's command line as no member: `member_id` None); the bot reads it through its cache, so a change reaches
it within that cache's time (10 s). Who may change what, and the arguments' rules, are the use cases'
(`use_cases/bot.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import msgspec

from inbox_actors.conversations import bot
from inbox_actors.domain import team_audit
from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.paging import cursors, parameters
from inbox_actors.paging.windows import REPLIES_AND_MESSAGES, Window, window
from persistence.database import Database
from persistence.queries import bot_answers as answer_queries
from persistence.queries import bot_settings as queries
from persistence.queries import team_audit as audit_queries

MAX_PERSONA = 60
MAX_HANDOFF_MESSAGE = 1024
MAX_SYSTEM_PROMPT = 4000
MAX_MODEL_NAME = 100
MAX_BOT_TURNS = 50
MAX_MONTHLY_BUDGET_USD = 1_000_000
TONES = ("friendly", "formal", "casual", "professional")
# PostgreSQL's built-in text search configurations: the languages the knowledge can be stemmed in.
LANGUAGES = ("simple", "arabic", "armenian", "basque", "catalan", "danish", "dutch", "english", "finnish", "french",
             "german", "greek", "hindi", "hungarian", "indonesian", "irish", "italian", "lithuanian", "nepali",
             "norwegian", "portuguese", "romanian", "russian", "serbian", "spanish", "swedish", "tamil", "turkish",
             "yiddish")
ANSWER_LENGTHS = ("short", "medium", "long")
CURSOR_KIND = "bot_handoffs"
DEFAULT_LIMIT = 50


class BotSettings(bot.AgentBehaviour, frozen=True, kw_only=True):
    enabled: bool
    persona: str
    """The name the bot's answers carry (`sender_label`); "" for "bot"."""
    handoff_message: str
    """Sent to the customer as the bot hands a chat to a person; "" for none."""
    updated_at: datetime | None
    updated_by: MemberRef | None
    monthly_budget_usd: float | None = None
    """Model cost the agent may spend in a calendar month (UTC); past it chats go to a person. None: no limit."""


class AnswerList(msgspec.Struct, frozen=True):
    data: list[bot.AnswerView]


class AnswerRemoved(msgspec.Struct, frozen=True):
    answer_id: int
    removed: bool


class Handoff(msgspec.Struct, frozen=True):
    phone: str
    reason: str
    at: datetime


class HandoffPage(msgspec.Struct, frozen=True):
    data: list[Handoff]
    next_cursor: str | None
    window: Window


class BotRefusal(Exception):
    """A change the bot's rules refused, nothing written: the status, code and sentence every door answers
    (`outcomes.judged` makes it the use case's `Refused`)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


async def settings(db: Database, workspace_id: int) -> BotSettings:
    row = await queries.find_settings(db, workspace_id)
    profile = bot.NO_PROFILE if row is None else bot.profile_of(row)
    by = MemberRef(row["updated_by"], row["updated_by_name"]) if row is not None and row["updated_by"] else None
    budget = profile.monthly_budget_micros
    behaviour = {name: getattr(profile, name) for name in bot.AgentBehaviour.__struct_fields__}
    return BotSettings(
        **behaviour | {"temperature": round(profile.temperature, 3)}, enabled=profile.enabled,
        persona=profile.persona, handoff_message=profile.handoff_message,
        updated_at=row["updated_at"] if row else None, updated_by=by,
        monthly_budget_usd=budget / 1_000_000 if budget is not None else None)


async def change(db: Database, workspace_id: int, member_id: int | None, via: str, now: datetime,
                 **given: object) -> BotSettings:
    """Save what is given (a BotProfile field's name, or monthly_budget_usd; left out: kept), in one transaction
    with its audit entry. A language PostgreSQL has no text search configuration for is refused."""
    if "persona" in given:
        given["persona"] = " ".join(str(given["persona"]).split())
    for name in ("handoff_message", "system_prompt", "model"):
        if name in given:
            given[name] = str(given[name]).strip()
    if "monthly_budget_usd" in given:
        usd = given.pop("monthly_budget_usd")
        given["monthly_budget_micros"] = round(float(usd) * 1_000_000) if usd is not None else None
    async with db.transaction() as tx:
        if "language" in given and not await queries.language_known(tx, str(given["language"])):
            raise BotRefusal(400, "invalid_language", f"PostgreSQL has no text search configuration "
                                                      f"{given['language']!r}; it knows english, german, french, "
                                                      "spanish, simple and others (pg_ts_config).")
        row = await queries.find_settings(tx, workspace_id)
        current = bot.NO_PROFILE if row is None else bot.profile_of(row)
        saved = msgspec.structs.replace(current, **given)
        await queries.save_settings(tx, workspace_id, msgspec.structs.asdict(saved), member_id=member_id, at=now)
        await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=member_id, via=via,
                                   action=team_audit.BOT_CHANGED, subject="bot", details=given)
    return await settings(db, workspace_id)


async def answers(db: Database, workspace_id: int) -> AnswerList:
    return AnswerList(await bot.list_answers(db, workspace_id=workspace_id))


async def add_answer(db: Database, workspace_id: int, member_id: int | None, via: str, keywords: Sequence[str],
                     answer: str, now: datetime) -> bot.AnswerView:
    try:
        added = await bot.add_answer(db, workspace_id=workspace_id, keywords=keywords, answer=answer)
    except bot.BotAnswerError as err:
        raise BotRefusal(400, "invalid_answer", f"{str(err)[:1].upper()}{str(err)[1:]}.") from None
    await audit_queries.record(db, workspace_id=workspace_id, at=now, member_id=member_id, via=via,
                               action=team_audit.BOT_ANSWER_ADDED, subject=f"bot_answer:{added.answer_id}",
                               details={"keywords": added.keywords})
    return added


async def remove_answer(db: Database, workspace_id: int, member_id: int | None, via: str, answer_id: int,
                        now: datetime) -> AnswerRemoved:
    async with db.transaction() as tx:
        if not await answer_queries.delete_answer(tx, workspace_id, answer_id):
            raise BotRefusal(404, "not_found", f"This workspace's bot has no answer {answer_id}.")
        await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=member_id, via=via,
                                   action=team_audit.BOT_ANSWER_REMOVED, subject=f"bot_answer:{answer_id}")
    return AnswerRemoved(answer_id, True)


async def handoffs(db: Database, workspace_id: int, args: Mapping[str, str | None], now: datetime) -> HandoffPage:
    """The chats the bot handed to a person, newest first (window default 7 days, at most 90)."""
    limit = parameters.limit(args.get("limit"), DEFAULT_LIMIT)
    position = cursors.decode(args, CURSOR_KIND, datetime, datetime, datetime, int)
    span = Window(position[0], position[1]) if position else window(args, now, REPLIES_AND_MESSAGES)
    after = (position[2], position[3]) if position else None
    rows = await queries.handoffs(db, workspace_id, start=span.start, end=span.end, after=after, limit=limit + 1)
    page, more = rows[:limit], len(rows) > limit
    next_cursor = (cursors.encode(CURSOR_KIND, args, span.start, span.end, page[-1]["at"], page[-1]["id"])
                   if more else None)
    return HandoffPage([Handoff(row["phone"], row["reason"], row["at"]) for row in page], next_cursor, span)
