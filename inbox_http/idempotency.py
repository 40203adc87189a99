"""`Idempotency-Key` on HTTP sends: the header read, and the round a handler runs: replay the key's answer, or
reserve it, send at most once and answer, releasing the key when nothing was committed. The key's rules and record
are `inbox_actors/conversations/idempotency_keys.py`'s."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Awaitable, Callable

import trio
from quart import Response, request

from inbox_actors.conversations import idempotency_keys as keys
from inbox_actors.conversations.conversation_protocol import KeyReservation
from inbox_actors.conversations.idempotency_keys import (  # noqa: F401 (request_hash: the routes' one import)
    Conflict, InDoubt, InProgress, Replay, Reservation, request_hash,
)
from inbox_http.encoding import json_response
from inbox_http.errors import SentenceError
from persistence.database import Database

log = logging.getLogger("inbox_http.idempotency")

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"


def parse_key(value: str | None) -> str | None:
    """The key of an `Idempotency-Key` header value; None without the header. Raises the 400 sentence."""
    try:
        return keys.parse_key(value)
    except keys.InvalidKey as err:
        raise SentenceError(400, str(err)) from None


def current_key() -> str | None:
    """The current request's key (Quart request context); raises the 400 sentence when malformed."""
    return parse_key(request.headers.get(HEADER))


Send = Callable[[KeyReservation | None], Awaitable[tuple[int, Any]]]


async def answer_once(db: Database, workspace_id: int, key: str | None, request_hash: bytes, send: Send, *,
                      now: datetime | None = None) -> Response:
    """Run `send` at most once per key and answer with what it returned, or with the key's stored answer.
    `send(reservation)` returns (status, body) for a verdict (success, the platform's refusal), which the sender
    has stored on the reservation with the send's outcome; it raises for a refusal that sent nothing
    (SentenceError, ApiError) or a failure, which releases the key unless a message was committed. Without a
    key, `send(None)` simply runs."""
    if key is None:
        status, body = await send(None)
        return json_response(body, status)
    outcome = await keys.replay_or_reserve(db, workspace_id, key, request_hash, now=now)
    if not isinstance(outcome, Reservation):
        return outcome_response(outcome)
    try:
        status, body = await send(outcome.held())
    except trio.Cancelled:
        raise  # nobody knows how far the send got: the key stays, its message (if any) settles it
    except Exception:
        await _release_quietly(db, outcome)
        raise
    return json_response(body, status)


def outcome_response(outcome: Replay | InProgress | InDoubt | Conflict) -> Response:
    """The answer for a request that must not send: the replayed answer, or the 409 / 422 sentence."""
    if isinstance(outcome, Replay):
        return json_response(outcome.body, outcome.status, {REPLAYED_HEADER: "true"})
    if isinstance(outcome, InProgress):
        return json_response({"error": keys.STILL_IN_PROGRESS}, 409, {"Retry-After": "1"})
    if isinstance(outcome, InDoubt):
        return json_response({"error": keys.IN_DOUBT}, 409, {"Retry-After": str(keys.IN_DOUBT_RETRY_AFTER)})
    return json_response({"error": keys.DIFFERENT_REQUEST}, 422)


async def _release_quietly(db: Database, reservation: Reservation) -> None:
    try:
        await keys.release(db, reservation)
    except Exception:  # the original failure is the one to report; the reservation is abandoned in 15 seconds
        log.exception("could not release Idempotency-Key %r of workspace %s", reservation.key,
                      reservation.workspace_id)
