"""An Idempotency-Key's round for a send, owned here from the reservation to the stored answer: replay the key's
answer, or reserve the key, send at most once, and release it when nothing was committed. Every door that sends
with a key (the spec's `POST /api/send-message`; a member's reply, template or note, whose key is an argument of
its use case) hands the key and the request's fingerprint to the use case and writes the answer it is handed; the
key's record and its rules are `conversations/idempotency_keys.py`'s, and the conversation actor stores the answer
on the key in the transaction that records the send's outcome (a note's: the note's own transaction).

A member's key (`member_key`) is the member's and the use case's alone: the workspace's keys hold it prefixed with
both, so another member's key, an API key's and the same key on another use case are other keys. Its request is
known by the use case's arguments (`fingerprint`), the key aside.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import trio

from inbox_actors.conversations import idempotency_keys as keys
from inbox_actors.conversations.conversation_protocol import KeyReservation
from inbox_actors.conversations.send_answers import IN_DOUBT_SENTENCE
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused

log = logging.getLogger("inbox_actors.use_cases.keyed_sends")

# The refusals of a request that must not send, by the spec's convention a sentence (`{"error": ...}`).
IN_PROGRESS = keys.IN_PROGRESS_CODE
IN_DOUBT = "idempotency_key_in_doubt"
DIFFERENT_REQUEST = "idempotency_key_reused"
# A send without a key whose outcome is not known (the node lost the workspace mid-send): it may have gone out.
SEND_IN_DOUBT = "send_in_doubt"


class Replayed(msgspec.Struct, frozen=True):
    """The first request's answer, given again: its status and body as the spec answered them."""

    status: int
    body: Any


def member_key(caller: Caller, use_case: str, key: str | None) -> str | None:
    """The key a member gave a message they composed, as the workspace's keys hold it (None: no key)."""
    return None if key is None else f"member:{caller.member_id}:{use_case}:{key}"


def fingerprint(use_case: str, arguments: dict[str, Any]) -> bytes:
    """What must match for a member's key to be replayed: the use case and its arguments, the key aside."""
    return keys.request_hash("RUN", use_case, msgspec.json.encode(arguments))


async def send_once(deps: UseCaseDeps, workspace_id: int, key: str | None, request_hash: bytes | None,
                    send: Callable[[KeyReservation | None], Awaitable[Outcome]]) -> Outcome:
    """`send(reservation)`'s outcome, run at most once per key, or the key's stored answer (`Done(Replayed)`),
    or a refusal while another request holds the key or its send's outcome is not known yet. A refusal by
    `send` (nothing went out), or its failure, releases the key; a cancelled send keeps it, since nobody knows
    how far it got (its message, if any, settles the key)."""
    if key is None:
        return await send(None)
    assert request_hash is not None, "a key's request is known by its fingerprint"
    # The key's ages are PostgreSQL's clock's, never this node's (`idempotency_keys.replay_or_reserve`).
    held = await keys.replay_or_reserve(deps.db, workspace_id, key, request_hash)
    if not isinstance(held, keys.Reservation):
        return _without_sending(held)
    try:
        outcome = await send(held.held())
    except trio.Cancelled:
        raise
    except Exception:
        await _release_quietly(deps, held)
        raise
    if isinstance(outcome, Refused) and outcome.code != IN_DOUBT:
        await _release_quietly(deps, held)
    return outcome


def in_doubt(keyed: bool) -> Refused:
    """The answer to a send committed as pending whose outcome is not known: with a key, what a retry of the key
    answers until the message is settled (its key stays linked to it); without one, a 409 that says the message
    may have gone out, with no Retry-After: a retry without a key is a new send."""
    if keyed:
        return _without_sending(keys.InDoubt())
    return Refused(Reason.REFUSED, IN_DOUBT_SENTENCE, 409, SEND_IN_DOUBT)


def _without_sending(held: keys.Replay | keys.InProgress | keys.InDoubt | keys.Conflict) -> Outcome:
    if isinstance(held, keys.Replay):
        return Done(Replayed(held.status, held.body))
    if isinstance(held, keys.InProgress):
        return Refused(Reason.REFUSED, keys.STILL_IN_PROGRESS, 409, IN_PROGRESS, data={"retry_after": 1})
    if isinstance(held, keys.InDoubt):
        return Refused(Reason.REFUSED, keys.IN_DOUBT, 409, IN_DOUBT,
                       data={"retry_after": keys.IN_DOUBT_RETRY_AFTER})
    return Refused(Reason.INVALID, keys.DIFFERENT_REQUEST, 422, DIFFERENT_REQUEST)


async def _release_quietly(deps: UseCaseDeps, reservation: keys.Reservation) -> None:
    try:
        await keys.release(deps.db, reservation)
    except Exception:  # the original failure is the one to report; the reservation is abandoned in 15 seconds
        log.exception("could not release Idempotency-Key %r of workspace %s", reservation.key,
                      reservation.workspace_id)
