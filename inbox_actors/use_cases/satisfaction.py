"""Customer satisfaction surveys as use cases: their settings (whether a resolved chat's customer is asked, and in
which words), read and saved as a team setting (`team_management`, reads also `:read`; audited), and the responses
that came in, read as team data (like the team report). The survey itself is the chat's conversation actor's
(`conversations/satisfaction_survey.py`); the choices and defaults are `team/csat.py`'s.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from inbox_actors.domain.satisfaction import DEFAULT_QUESTION, DEFAULT_THANKS
from inbox_actors.platform.payloads import MAX_LIST_BODY, MAX_TEXT
from inbox_actors.reporting import csat_responses
from inbox_actors.team import csat
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.chat_reads import NoArguments
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import FILLED_LINE, MULTI_LINE
from inbox_actors.use_cases.outcomes import Done, Outcome
from inbox_actors.use_cases.team import TeamQuery
from inbox_actors.use_cases.use_case import Kind, UseCase, rule

# Sent as a list message's body (one line: WhatsApp shows it above the button).
Question = Annotated[str, msgspec.Meta(
    min_length=1, max_length=MAX_LIST_BODY, pattern=FILLED_LINE, examples=[DEFAULT_QUESTION],
    description="The survey's question, above the button that opens the five ratings.",
    extra=rule("invalid_question", f"question must be 1 to {MAX_LIST_BODY:,} characters on one line, not blank."))]
Thanks = Annotated[str, msgspec.Meta(
    max_length=MAX_TEXT, pattern=MULTI_LINE, examples=[DEFAULT_THANKS],
    description="Sent after a rating, inviting a comment: the customer's next message within 30 minutes is their "
                "comment. Empty: no thanks, and no comment is asked for.",
    extra=rule("invalid_thanks", f"thanks must be at most {MAX_TEXT:,} characters, with no control characters but "
                                 "line breaks and tabs."))]


class CsatChoice(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    enabled: Annotated[bool, msgspec.Meta(
        description="Send the survey when a chat is resolved.",
        extra=rule("invalid_enabled", "enabled is true or false."))]
    question: Question = DEFAULT_QUESTION
    thanks: Thanks = DEFAULT_THANKS


async def _settings(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(await csat.read_settings(deps.db, caller.workspace_id))


async def _save(deps: UseCaseDeps, caller: Caller, a: CsatChoice) -> Outcome:
    member = None if caller.is_operator else caller.member_id
    return Done(await csat.save_settings(deps.db, caller.workspace_id, member, caller.author, enabled=a.enabled,
                                         question=a.question.strip(), thanks=a.thanks.strip(), now=deps.clock.now()))


async def _responses(deps: UseCaseDeps, caller: Caller, a: TeamQuery) -> Outcome:
    return Done(await csat_responses.responses(deps.db, caller.workspace_id, a.query, deps.clock.now()))


# -- the declarations ----------------------------------------------------------------------------------------

SETTINGS = UseCase("get_csat_settings", NoArguments, permissions.TEAM_SETTINGS, Kind.READ, _settings)
SAVE_SETTINGS = UseCase("save_csat_settings", CsatChoice, permissions.TEAM_SETTINGS, Kind.WRITE, _save)
RESPONSES = UseCase("list_csat_responses", TeamQuery, permissions.TEAM_DATA, Kind.READ, _responses)
