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
CURSOR_KIND = "bot_handoffs"
DEFAULT_LIMIT = 50


class BotSettings(msgspec.Struct, frozen=True):
    enabled: bool
    persona: str
    """The name the bot's answers carry (`sender_label`); "" for "bot"."""
    handoff_message: str
    """Sent to the customer as the bot hands a chat to a person; "" for none."""
    updated_at: datetime | None
    updated_by: MemberRef | None


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
    if row is None:
        profile = bot.NO_PROFILE
        return BotSettings(profile.enabled, profile.persona, profile.handoff_message, None, None)
    by = MemberRef(row["updated_by"], row["updated_by_name"]) if row["updated_by"] else None
    return BotSettings(row["enabled"], row["persona"], row["handoff_message"], row["updated_at"], by)


async def change(db: Database, workspace_id: int, member_id: int | None, via: str, now: datetime, *,
                 enabled: bool | None = None, persona: str | None = None,
                 handoff_message: str | None = None) -> BotSettings:
    """Save what is given (None: kept), in one transaction with its audit entry."""
    async with db.transaction() as tx:
        row = await queries.find_settings(tx, workspace_id)
        current = bot.NO_PROFILE if row is None else bot.BotProfile(row["enabled"], row["persona"],
                                                                    row["handoff_message"])
        saved = bot.BotProfile(
            enabled=current.enabled if enabled is None else enabled,
            persona=current.persona if persona is None else " ".join(persona.split()),
            handoff_message=current.handoff_message if handoff_message is None else handoff_message.strip())
        await queries.save_settings(tx, workspace_id, enabled=saved.enabled, persona=saved.persona,
                                    handoff_message=saved.handoff_message, member_id=member_id, at=now)
        await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=member_id, via=via,
                                   action=team_audit.BOT_CHANGED, subject="bot",
                                   details=msgspec.structs.asdict(saved))
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
