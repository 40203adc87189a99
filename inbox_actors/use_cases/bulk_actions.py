"""One action on a selection of chats: assign them to a member, put a label on them, snooze them, resolve them; a
use case each (`RESOLVE`, `ASSIGN`, `LABEL`, `SNOOZE`), each with exactly its own fields.

Each chat's action is the declared use case a member runs on one chat, run through the one runner as the caller
(`use_case.run`): the permissions, the field rules and the chat's own rules are those of one chat, and each chat
answers for itself. The answer is a report: for each chat what was done, or why it was refused (its code and
sentence), and how many of each; a chat refused never stops the others.

- assign: to the caller's member, a claim (a chat another member holds is transferred to them); to another
  member, a transfer of a chat someone holds, else the caller's claim and then the transfer, as a person does it
  in a chat (the trail says both). The member must be an active one of the workspace (`invalid_member`);
- label: a label of the workspace's set; snooze: for some hours from when the request runs (`for_hours`, the
  database's clock), or until each customer writes (left out); resolve: with an optional reason.

At most MAX_CHATS chats a request (`invalid_phones`); a phone given twice is acted on once. With an
`idempotency_key` (the caller's member's own, as a composed message's is: `keyed_sends.member_key`) the request
runs once: a second one with the key (a double click, a retry) answers the first's report and does nothing again,
or, while the first is still running, is refused `idempotency_key_in_progress`; the key with other arguments is
`idempotency_key_reused` (422). The report is kept on the key for its lifetime (24 hours), and the member who made
it reads it again by the key (`REPORT`: what a page shows after the form's redirect).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Annotated, Any

import msgspec
import trio

from inbox_actors.conversations import idempotency_keys as keys
from inbox_actors.domain.conversation_states import State
from inbox_actors.labels.label_set import MAX_NAME as MAX_LABEL_NAME
from inbox_actors.use_cases import chat_organising, chats, keyed_sends, permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import IdempotencyKey, MemberId, Reason
from inbox_actors.use_cases.outcomes import Done, Outcome, Refused
from inbox_actors.use_cases.outcomes import Reason as Why
from inbox_actors.use_cases.use_case import Kind, UseCase, rule, run
from persistence.queries import database_clock
from persistence.queries import idempotency as key_queries
from persistence.queries import workspaces as workspace_queries

MAX_CHATS = 100
MAX_SNOOZE_HOURS = 720
AT_ONCE = 8
"""Chats acted on at the same time: each is its own actor, so a selection goes faster than one by one, without
taking every actor of the workspace at once."""
KEYS = "bulk_actions"
"""The namespace of a member's keys of bulk actions, whichever the action (the same key for another action is
another request: `idempotency_key_reused`)."""


# No control characters: a phone is echoed in the report, which is kept on the request's key as JSON (PostgreSQL's
# jsonb refuses a NUL), and no phone number has one.
Phone = Annotated[str, msgspec.Meta(min_length=1, max_length=40, pattern=r"^[^\x00-\x1f\x7f]+$")]
Phones = Annotated[list[Phone], msgspec.Meta(
    min_length=1, max_length=MAX_CHATS, examples=[["919876543210", "919876543211"]],
    description=f"The chats, by their customer's phone number: 1 to {MAX_CHATS}.",
    extra=rule("invalid_phones", f"phones must name 1 to {MAX_CHATS} chats by their customer's phone number."))]
BulkKeyField = Annotated[IdempotencyKey, msgspec.Meta(
    description="A key of your own for this request (1 to 100 printable characters): a retry with it acts on no "
                "chat again and answers the first request's report, for 24 hours.")]


class BulkResolve(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phones: Phones
    reason: Reason | None = None
    idempotency_key: BulkKeyField | None = None


class BulkAssign(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phones: Phones
    to_user_id: Annotated[MemberId, msgspec.Meta(
        description="The active team member (user id) who gets the chats.",
        extra=rule("invalid_to_user_id", "to_user_id must be a member's user id."))]
    reason: Reason | None = None
    idempotency_key: BulkKeyField | None = None


class BulkLabel(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phones: Phones
    label: Annotated[str, msgspec.Meta(
        min_length=1, max_length=MAX_LABEL_NAME, description="The label's name (one of the workspace's).",
        extra=rule("invalid_label", f"label must be a label's name, 1 to {MAX_LABEL_NAME} characters."))]
    idempotency_key: BulkKeyField | None = None


class BulkSnooze(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phones: Phones
    for_hours: Annotated[int, msgspec.Meta(
        ge=1, le=MAX_SNOOZE_HOURS, description="For this many hours from when the request runs; left out: until "
                                               "each customer writes.",
        extra=rule("invalid_for_hours", f"for_hours must be a whole number of hours from 1 to "
                                        f"{MAX_SNOOZE_HOURS}."))] | None = None
    idempotency_key: BulkKeyField | None = None


BulkAction = BulkResolve | BulkAssign | BulkLabel | BulkSnooze


class BulkKey(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    idempotency_key: IdempotencyKey


class ChatOutcome(msgspec.Struct, frozen=True, omit_defaults=True):
    phone: str
    done: bool
    name: str | None = None
    """The contact's name, for a chat the caller may see."""
    code: str | None = None
    """Why it was refused: the one chat's action's code (`invalid_transition`, `not_found`, ...)."""
    message: str | None = None
    state: str | None = None
    """The chat's state after the action, or the state that refused it."""


class BulkReport(msgspec.Struct, frozen=True):
    action: str
    done: int
    refused: int
    results: list[ChatOutcome]


async def _assign(deps: UseCaseDeps, caller: Caller, a: BulkAssign, phone: str) -> Outcome:
    found = await chats.chat(deps, caller, phone)
    if isinstance(found, Refused):
        return found
    reason = {"reason": a.reason} if a.reason is not None else {}
    transfer = {"phone": phone, "to_user_id": a.to_user_id, **reason}
    if found.state == State.HUMAN_ACTIVE.value:
        return await run(deps, caller, chats.TRANSFER, transfer)
    claimed = await run(deps, caller, chats.CLAIM, {"phone": phone})
    if isinstance(claimed, Refused) or a.to_user_id == caller.member_id:
        return claimed
    return await run(deps, caller, chats.TRANSFER, transfer)


async def _single(deps: UseCaseDeps, caller: Caller, a: BulkAction, phone: str, until: datetime | None) -> Outcome:
    """One chat's action: the use case a member runs on that chat alone."""
    if isinstance(a, BulkAssign):
        return await _assign(deps, caller, a, phone)
    if isinstance(a, BulkLabel):
        return await run(deps, caller, chat_organising.ADD_LABEL, {"phone": phone, "label": a.label})
    if isinstance(a, BulkSnooze):
        return await run(deps, caller, chat_organising.SNOOZE, {"phone": phone, **({"until": until} if until else {})})
    reason = {"reason": a.reason} if a.reason is not None else {}
    return await run(deps, caller, chats.RESOLVE, {"phone": phone, **reason})


async def _one(deps: UseCaseDeps, caller: Caller, a: BulkAction, phone: str, until: datetime | None) -> ChatOutcome:
    outcome = await _single(deps, caller, a, phone, until)
    if isinstance(outcome, Refused):
        name = None
        if outcome.code != "not_found":
            seen = await chats.chat(deps, caller, phone)
            name = None if isinstance(seen, Refused) else seen.contact_name
        return ChatOutcome(phone, False, name, outcome.code, outcome.message, outcome.state)
    detail = outcome.data
    return ChatOutcome(phone, True, detail.contact_name, state=detail.state)


async def _each(deps: UseCaseDeps, caller: Caller, action: str, a: BulkAction,
                until: datetime | None) -> BulkReport:
    phones = list(dict.fromkeys(phone.strip() for phone in a.phones))
    results: list[ChatOutcome | None] = [None] * len(phones)
    limiter = trio.CapacityLimiter(AT_ONCE)

    async def act(index: int, phone: str) -> None:
        async with limiter:
            results[index] = await _one(deps, caller, a, phone, until)

    async with trio.open_nursery() as nursery:
        for index, phone in enumerate(phones):
            nursery.start_soon(act, index, phone)
    outcomes = [result for result in results if result is not None]
    done = sum(1 for result in outcomes if result.done)
    return BulkReport(action, done, len(outcomes) - done, outcomes)


def _bulk(action: str):
    """The handler of one action on a selection: the whole request refused before any chat is touched when the
    member to assign to cannot take chats; else each chat's own use case, once per key."""

    async def handler(deps: UseCaseDeps, caller: Caller, a: BulkAction) -> Outcome:
        if isinstance(a, BulkAssign):
            member = await workspace_queries.find_member(deps.db, a.to_user_id)
            if member is None or member["workspace_id"] != caller.workspace_id or member["status"] != "active":
                return Refused(Why.INVALID, f"No active member {a.to_user_id} in this workspace.", 400,
                               "invalid_member")

        async def once() -> Outcome:
            until = None
            if isinstance(a, BulkSnooze) and a.for_hours is not None:
                until = await database_clock.now(deps.db) + timedelta(hours=a.for_hours)
            return Done(await _each(deps, caller, action, a, until))

        if a.idempotency_key is None:
            return await once()
        arguments = {"action": action, **msgspec.to_builtins(msgspec.structs.replace(a, idempotency_key=None))}
        return await _keyed(deps, caller, a.idempotency_key, arguments, once)

    return handler


async def _keyed(deps: UseCaseDeps, caller: Caller, key: str, arguments: Mapping[str, Any], once) -> Outcome:
    """`once()` run at most once per key of the member's: the key's stored report, or a refusal while the first
    request still runs (or the key was used with other arguments)."""
    held = await keys.replay_or_reserve(deps.db, caller.workspace_id,
                                        keyed_sends.member_key(caller, KEYS, key),
                                        keyed_sends.fingerprint(KEYS, dict(arguments)))
    if isinstance(held, keys.Replay):
        return Done(msgspec.convert(held.body, BulkReport))
    if not isinstance(held, keys.Reservation):
        return _key_refusal(held)
    try:
        outcome = await once()
    except trio.Cancelled:
        raise  # some chats may have been acted on: the key stays reserved, and a retry after 15 s runs again
    except Exception:
        await keys.release(deps.db, held)
        raise
    await keys.remember(deps.db, held, 200, outcome.data)
    return outcome


def _key_refusal(held: object) -> Refused:
    if isinstance(held, keys.Conflict):
        return Refused(Why.INVALID, keys.DIFFERENT_REQUEST, 422, keyed_sends.DIFFERENT_REQUEST)
    return Refused(Why.REFUSED, "This selection is still being acted on; its report follows in a moment.", 409,
                   keyed_sends.IN_PROGRESS, data={"retry_after": 1})


async def _report(deps: UseCaseDeps, caller: Caller, a: BulkKey) -> Outcome:
    """The report a bulk action of the caller's member answered with this key (another's key is none of theirs)."""
    found = await key_queries.find(deps.db, caller.workspace_id, keyed_sends.member_key(caller, KEYS,
                                                                                        a.idempotency_key))
    if found is None or found["response_status"] != 200:
        return Refused(Why.NOT_FOUND, "No report of a bulk action of yours with this key (a report is kept for 24 "
                       "hours).", 404, "not_found")
    return Done(msgspec.json.decode(found["response_body"], type=BulkReport))


# -- the declarations ----------------------------------------------------------------------------------------

RESOLVE = UseCase("resolve_conversations", BulkResolve, permissions.CHAT_ACTIONS, Kind.WRITE, _bulk("resolve"))
ASSIGN = UseCase("assign_conversations", BulkAssign, permissions.CHAT_ACTIONS, Kind.WRITE, _bulk("assign"))
LABEL = UseCase("label_conversations", BulkLabel, permissions.CHAT_ACTIONS, Kind.WRITE, _bulk("label"))
SNOOZE = UseCase("snooze_conversations", BulkSnooze, permissions.CHAT_ACTIONS, Kind.WRITE, _bulk("snooze"))
BY_ACTION = {"resolve": RESOLVE, "assign": ASSIGN, "label": LABEL, "snooze": SNOOZE}
REPORT = UseCase("bulk_action_report", BulkKey, permissions.CHAT_ACTIONS, Kind.READ, _report)
