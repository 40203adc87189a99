"""`Idempotency-Key` on sends: a retried request gets the first answer back instead of sending again.

The rules (the sentences are the send route's error convention):

- The header is optional; without it every request is handled afresh. With it, its value must be 1 to 200
  printable ASCII characters (space to `~`), else 400 "Idempotency-Key must be 1 to 200 printable ASCII
  characters.".
- Keys belong to the workspace: two workspaces may use the same key independently.
- A request is identified by SHA-256 of its method, its path (without the query string) and its canonical
  body (the JSON re-encoded with sorted keys and no insignificant whitespace; a body that is not JSON counts
  byte for byte). The same key with another request: 422 "This Idempotency-Key was used with a different
  request.", and nothing is sent.
- The first request reserves the key (a row in progress) before it sends. A request arriving while the
  reservation is held: 409 "A request with this Idempotency-Key is still in progress." with `Retry-After: 1`
  (it does not wait; nothing is sent).
- When the send answers, the answer (status and JSON body) is remembered on the key: a success, and also a
  failed send (the platform refused: the spec's HTTP 500 with errorCode...). A retry gets that answer again,
  with the header `Idempotent-Replayed: true`, and nothing is sent a second time.
- A refusal raised before anything reached the platform (a 4xx such as a missing field, an opted-out contact)
  and our own unexpected failure (500 internal error) release the reservation: nothing was sent, so a retry
  with the same key is handled afresh.
- A reservation still in progress after ABANDONED_AFTER (2 minutes: its process died mid-send, or the send
  was cancelled) is taken over by a retry of the same request.
- A key lives KEY_LIFETIME (24 hours) from its first use: after that the same key is a new key, whatever the
  request. `prune_idempotency` deletes expired rows (schedule it, e.g. hourly); reuse replaces them lazily.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime, timedelta, timezone
from typing import Any, Awaitable, Callable

import msgspec
import trio
from quart import Response, request

from inbox_http.encoding import json_response
from inbox_http.errors import SentenceError
from persistence.database import Database, UnitOfWork
from persistence.queries import idempotency as queries

log = logging.getLogger("inbox_http.idempotency")

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_LENGTH = 200
KEY_LIFETIME = timedelta(hours=24)
ABANDONED_AFTER = timedelta(minutes=2)

INVALID_KEY = f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} printable ASCII characters."
STILL_IN_PROGRESS = "A request with this Idempotency-Key is still in progress."
DIFFERENT_REQUEST = "This Idempotency-Key was used with a different request."

_canonical = msgspec.json.Encoder(order="sorted")


class Replay(msgspec.Struct, frozen=True):
    """The key already answered this request: answer the same again."""

    status: int
    body: Any


class Reservation(msgspec.Struct, frozen=True):
    """The key is the caller's: send, then `remember` the answer (or `release` the key)."""

    workspace_id: int
    key: str
    request_hash: bytes
    reserved_at: datetime


class InProgress(msgspec.Struct, frozen=True):
    """Another request holds the key and has not answered yet (409)."""


class Conflict(msgspec.Struct, frozen=True):
    """The key was used with a different request (422)."""


Outcome = Replay | Reservation | InProgress | Conflict


# -- the request --------------------------------------------------------------------------------------------


def parse_key(value: str | None) -> str | None:
    """The key of an `Idempotency-Key` header value; None without the header. Raises the 400 sentence."""
    if value is None:
        return None
    if not 1 <= len(value) <= MAX_KEY_LENGTH or not all(" " <= ch <= "~" for ch in value):
        raise SentenceError(400, INVALID_KEY)
    return value


def canonical_body(body: bytes) -> bytes:
    """The body as it counts for identity: JSON re-encoded with sorted keys; anything else as it is."""
    if not body.strip():
        return b""
    try:
        return _canonical.encode(msgspec.json.decode(body))
    except msgspec.DecodeError:
        return body


def request_hash(method: str, path: str, body: bytes) -> bytes:
    """SHA-256 of method, path and canonical body: what must match for a key to be replayed."""
    return hashlib.sha256(b"%s\n%s\n%s" % (method.upper().encode(), path.encode(), canonical_body(body))).digest()


def current_key() -> str | None:
    """The current request's key (Quart request context); raises the 400 sentence when malformed."""
    return parse_key(request.headers.get(HEADER))


# -- the key's record ---------------------------------------------------------------------------------------


async def replay_or_reserve(db: Database | UnitOfWork, workspace_id: int, key: str, request_hash: bytes, *,
                            now: datetime | None = None) -> Outcome:
    """Reserve the key for this request, or say why not. Exactly one of concurrent callers gets the
    Reservation."""
    now = now or datetime.now(timezone.utc)
    for _ in range(3):
        reserved_at = await queries.reserve(
            db, workspace_id=workspace_id, key=key, request_hash=request_hash, now=now,
            expired_before=now - KEY_LIFETIME, abandoned_before=now - ABANDONED_AFTER)
        if reserved_at is not None:
            return Reservation(workspace_id=workspace_id, key=key, request_hash=request_hash,
                               reserved_at=reserved_at)
        row = await queries.find(db, workspace_id, key)
        if row is None:
            continue  # released or pruned between the two statements: try again
        if bytes(row["request_hash"]) != request_hash:
            return Conflict()
        if row["response_status"] == queries.IN_PROGRESS:
            return InProgress()
        return Replay(status=row["response_status"], body=msgspec.json.decode(row["response_body"]))
    return InProgress()


async def remember(db: Database | UnitOfWork, reservation: Reservation, status: int, body: Any) -> bool:
    """Keep the answer (`body` is anything msgspec encodes: a dict, a struct) for retries of the request.
    False when the reservation was no longer the caller's (taken over after ABANDONED_AFTER)."""
    if not 100 <= status <= 599:
        raise ValueError(f"not an HTTP status: {status}")
    return await queries.complete(db, workspace_id=reservation.workspace_id, key=reservation.key,
                                  reserved_at=reservation.reserved_at, status=status,
                                  body_json=msgspec.json.encode(body).decode())


async def release(db: Database | UnitOfWork, reservation: Reservation) -> bool:
    """Give the key back unanswered, so a retry is handled afresh."""
    return await queries.release(db, workspace_id=reservation.workspace_id, key=reservation.key,
                                 reserved_at=reservation.reserved_at)


async def prune_idempotency(db: Database | UnitOfWork, older_than: datetime) -> int:
    """Delete keys first used before `older_than` (pass now - KEY_LIFETIME); how many went."""
    return await queries.delete_older_than(db, older_than)


# -- the whole round, for a handler -------------------------------------------------------------------------


Send = Callable[[], Awaitable[tuple[int, Any]]]


async def answer_once(db: Database, workspace_id: int, key: str | None, request_hash: bytes, send: Send, *,
                      now: datetime | None = None) -> Response:
    """Run `send` at most once per key and answer with what it returned, or with what it returned the first
    time. `send()` returns (status, body) for an answer to remember (success, the platform's refusal); it
    raises for a refusal that sent nothing (SentenceError, ApiError) or a failure, which releases the key.
    Without a key, `send` simply runs."""
    if key is None:
        status, body = await send()
        return json_response(body, status)
    outcome = await replay_or_reserve(db, workspace_id, key, request_hash, now=now)
    if not isinstance(outcome, Reservation):
        return outcome_response(outcome)
    try:
        status, body = await send()
    except trio.Cancelled:
        raise  # nobody knows whether the platform got it: the reservation stays, abandoned after 2 minutes
    except Exception:
        await _release_quietly(db, outcome)
        raise
    try:
        await remember(db, outcome, status, body)
    except Exception:  # the send happened: answer it; a retry after ABANDONED_AFTER may send again
        log.exception("could not remember the answer to Idempotency-Key %r of workspace %s", key, workspace_id)
    return json_response(body, status)


def outcome_response(outcome: Replay | InProgress | Conflict) -> Response:
    """The answer for a request that must not send: the replayed answer, or the 409 / 422 sentence."""
    if isinstance(outcome, Replay):
        return json_response(outcome.body, outcome.status, {REPLAYED_HEADER: "true"})
    if isinstance(outcome, InProgress):
        return json_response({"error": STILL_IN_PROGRESS}, 409, {"Retry-After": "1"})
    return json_response({"error": DIFFERENT_REQUEST}, 422)


async def _release_quietly(db: Database, reservation: Reservation) -> None:
    try:
        await release(db, reservation)
    except Exception:  # the original failure is the one to report; the reservation is abandoned in 2 minutes
        log.exception("could not release Idempotency-Key %r of workspace %s", reservation.key,
                      reservation.workspace_id)
