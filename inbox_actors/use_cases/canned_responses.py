"""A workspace's canned responses as use cases: listing them, adding, changing and removing one.

Reading them needs what replying does (`inbox`, or `inbox:read` to look), since a member inserts one in the reply
box; changing the set is a setting (`settings`), as the label set is. The fields' rules are the structs' here, each
with its own code and sentence; the set's (a shortcut unique whatever its case, at most MAX_CANNED, a text of more
than spaces) are `canned_responses/canned_set.py`'s. Inserting one sends nothing: the reply is sent as any reply.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from inbox_actors.canned_responses import canned_set
from inbox_actors.canned_responses.canned_set import MAX_SHORTCUT, MAX_TITLE, SHORTCUT_PATTERN, CannedRefusal
from inbox_actors.platform.payloads import MAX_TEXT
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.chat_reads import NoArguments
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import BIGINT_MAX, FILLED_LINE, MULTI_LINE
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused, judged
from inbox_actors.use_cases.use_case import Kind, UseCase, done, rule

Shortcut = Annotated[str, msgspec.Meta(
    min_length=1, max_length=MAX_SHORTCUT, pattern=SHORTCUT_PATTERN, examples=["hello"],
    description="What a member types after / in the reply box: letters, digits, - and _ (unique in the workspace "
                "whatever its case).",
    extra=rule("invalid_shortcut", f"A shortcut is 1 to {MAX_SHORTCUT} letters, digits, - or _, starting with a "
                                   "letter or a digit (as in hello or order-late)."))]
Title = Annotated[str, msgspec.Meta(
    min_length=1, max_length=MAX_TITLE, pattern=FILLED_LINE, examples=["Greeting"],
    description="What the composer's list shows beside the shortcut.",
    extra=rule("invalid_title", f"A title is 1 to {MAX_TITLE} characters on one line."))]
Text = Annotated[str, msgspec.Meta(
    min_length=1, max_length=MAX_TEXT, pattern=MULTI_LINE, examples=["Hello {{first_name}}, {{agent}} here."],
    description="The text inserted (up to 4,096 characters). {{name}}, {{first_name}} and {{agent}} are filled as "
                "it is inserted: the contact's name (\"there\" when unknown), its first word, the member's name.",
    extra=rule("invalid_text", f"A canned response's text is 1 to {MAX_TEXT:,} characters, with no control "
                               "characters but line breaks and tabs."))]
# Any whole number: one no canned response has (0, beyond bigint) is answered as any missing one is, 404.
CannedId = Annotated[int, msgspec.Meta(description="The canned response's id.")]
NO_SUCH_CANNED = Refused(Reason.NOT_FOUND, canned_set.NOT_FOUND.message, 404, "not_found")


class NewCanned(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    shortcut: Shortcut
    title: Title
    text: Text


class CannedChange(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A field left out keeps its value."""

    canned_id: CannedId
    shortcut: Shortcut | msgspec.UnsetType = msgspec.UNSET
    title: Title | msgspec.UnsetType = msgspec.UNSET
    text: Text | msgspec.UnsetType = msgspec.UNSET


class OneCanned(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    canned_id: CannedId


async def _list(deps: UseCaseDeps, caller: Caller, a: NoArguments) -> Outcome:
    return Done(await canned_set.canned_responses(deps.db, caller.workspace_id))


async def _add(deps: UseCaseDeps, caller: Caller, a: NewCanned) -> Outcome:
    return done(await judged(canned_set.add(deps.db, caller.workspace_id, _member(caller), caller.author,
                                            a.shortcut, a.title, a.text, deps.clock.now()), CannedRefusal))


async def _change(deps: UseCaseDeps, caller: Caller, a: CannedChange) -> Outcome:
    if not _may_exist(a.canned_id):
        return NO_SUCH_CANNED
    return done(await judged(canned_set.change(deps.db, caller.workspace_id, _member(caller), caller.author,
                                               a.canned_id, _given(a.shortcut), _given(a.title), _given(a.text),
                                               deps.clock.now()), CannedRefusal))


async def _remove(deps: UseCaseDeps, caller: Caller, a: OneCanned) -> Outcome:
    if not _may_exist(a.canned_id):
        return NO_SUCH_CANNED
    return done(await judged(canned_set.remove(deps.db, caller.workspace_id, _member(caller), caller.author,
                                               a.canned_id, deps.clock.now()), CannedRefusal))


def _member(caller: Caller) -> int | None:
    """Who the records name: the member, or nobody for the operator's command line."""
    return None if caller.is_operator else caller.member_id


def _given(value: str | msgspec.UnsetType) -> str | None:
    return None if value is msgspec.UNSET else value


def _may_exist(canned_id: int) -> bool:
    return 1 <= canned_id <= BIGINT_MAX


# -- the declarations ----------------------------------------------------------------------------------------

LIST = UseCase("list_canned_responses", NoArguments, permissions.REPLY_AIDS, Kind.READ, _list)
ADD = UseCase("add_canned_response", NewCanned, permissions.SETTINGS, Kind.WRITE, _add)
CHANGE = UseCase("change_canned_response", CannedChange, permissions.SETTINGS, Kind.WRITE, _change)
REMOVE = UseCase("remove_canned_response", OneCanned, permissions.SETTINGS, Kind.WRITE, _remove)
