"""Customer satisfaction surveys' settings: whether a chat's customer is asked how it went once the chat is resolved,
and in which words (docs/team.md#satisfaction-surveys). A team setting, recorded in the team audit log.

The survey itself is a WhatsApp list message of the five ratings (`domain/satisfaction.py`), made here, and sent and
judged by the chat's conversation actor (`conversations/satisfaction_survey.py`).
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from inbox_actors.domain import team_audit
from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.domain.satisfaction import DEFAULT_QUESTION, DEFAULT_THANKS, RATINGS, choice_id
from inbox_actors.platform.payloads import InteractiveList, ListRow
from persistence.database import Database
from persistence.queries import csat as queries
from persistence.queries import team_audit as audit_queries

SUBJECT = "csat"
BUTTON = "Rate us"
SECTION = "Your rating"


class CsatSettings(msgspec.Struct, frozen=True):
    enabled: bool
    """Whether a chat's customer gets the survey when the chat is resolved."""
    question: str
    """The survey message's text, above the button that opens the five ratings."""
    thanks: str
    """Sent after a rating, inviting a comment (empty: no comment is asked for)."""
    updated_at: datetime | None
    updated_by: MemberRef | None


def survey_message(question: str, survey_id: int) -> InteractiveList:
    """The survey: the question and a list of the five ratings, each choice naming the survey."""
    return InteractiveList(body=question, button=BUTTON, section_title=SECTION, rows=tuple(
        ListRow(id=choice_id(survey_id, rating), title=title, description=stars) for rating, title, stars in RATINGS))


async def read_settings(db: Database, workspace_id: int) -> CsatSettings:
    row = await queries.settings(db, workspace_id)
    if row is None:
        return CsatSettings(False, DEFAULT_QUESTION, DEFAULT_THANKS, None, None)
    by = MemberRef(row["updated_by"], row["updated_by_name"]) if row["updated_by"] else None
    return CsatSettings(row["enabled"], row["question"], row["thanks"], row["updated_at"], by)


async def save_settings(db: Database, workspace_id: int, member_id: int | None, via: str, *, enabled: bool,
                        question: str, thanks: str, now: datetime) -> CsatSettings:
    """Save the settings (recorded in the team audit log); chats resolved from now on follow them."""
    async with db.transaction() as tx:
        await queries.save_settings(tx, workspace_id, enabled, question, thanks, member_id)
        await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=member_id, via=via,
                                   action=team_audit.CSAT_CHANGED, subject=SUBJECT,
                                   details={"enabled": enabled, "question": question, "thanks": thanks})
    return await read_settings(db, workspace_id)
