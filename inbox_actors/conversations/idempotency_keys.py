"""Idempotency keys on sends, their whole life in one place: a retried request gets the first answer back, and a
message goes to the platform at most once per key, whatever crashes in between. The HTTP front reads the
`Idempotency-Key` header and answers (`inbox_http/idempotency.py`); the send's records link the key to its pending
message and store its answer through `link_answer` and `settle_answer` below.

The rules (the sentences are the send route's error convention):

- The header is optional; without it every request is handled afresh. With it, its value must be 1 to 200
  printable ASCII characters (space to `~`), else 400 "Idempotency-Key must be 1 to 200 printable ASCII
  characters.".
- Keys belong to the workspace: two workspaces may use the same key independently.
- A request is identified by SHA-256 of its method, its path (without the query string) and its canonical
  body (the JSON re-encoded with sorted keys and no insignificant whitespace; a body that is not JSON counts
  byte for byte). The same key with another request: 422 "This Idempotency-Key was used with a different
  request.", and nothing is sent.
- The first request reserves the key (a row in progress). Before it calls the platform, the send commits its
  message as pending, linked to the reservation in the same statement, only while the request still holds it.
  A request arriving while the reservation is held and no message is linked yet: 409 "A request with this
  Idempotency-Key is still in progress." with `Retry-After: 1` (it does not wait; nothing is sent).
- Once a message is linked, the key is the message's: while its outcome is not known (the platform is being
  asked, or the service stopped between the platform's answer and recording it), a retry gets 409 IN_DOUBT with
  `Retry-After: 5`, and nothing is sent again, ever. The outcome is recorded on the message and the answer
  stored on the key in one transaction: when the platform answers, or, after a crash, when the platform's
  status webhook for the message (carrying its id as callback data) settles it (200 with the platform's
  messageId), or when nothing has settled it after IN_DOUBT_LIFETIME (6 hours): 500 with errorCode 131000
  "Send outcome unknown" (it may or may not have been delivered).
- The answer, a success or a failed send (the platform refused: the spec's HTTP 500 with errorCode...), is
  replayed to every retry with the header `Idempotent-Replayed: true`; a key whose message is settled but whose
  answer was never stored is answered from the message.
- A refusal raised before any message was committed (a 4xx such as a missing field, an opted-out contact) and
  our own unexpected failure (500 internal error) before that point release the reservation: nothing was sent,
  so a retry with the same key is handled afresh. After the message is committed nothing releases the key.
- A reservation still in progress with no message after ABANDONED_AFTER (15 seconds: its process died before
  committing a message, or its request is still queued) is taken over by a retry of the same request; one with
  a message is never taken over. Taking over is safe at any age, because a send commits its message only while
  its request still holds the reservation: a request overtaken later sends nothing and answers 409 "still in
  progress". The wait only spares a request that is merely slow.
- A key lives KEY_LIFETIME (24 hours) from its first use: after that the same key is a new key, whatever the
  request. `prune` deletes expired rows (the service runs it hourly); reuse replaces them lazily.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

import msgspec

from inbox_actors.conversations.conversation_protocol import KeyReservation
from inbox_actors.conversations.send_answers import KEY_IN_PROGRESS, SendVerdict, message_verdict
from persistence.database import Database, UnitOfWork
from persistence.queries import idempotency as queries

MAX_KEY_LENGTH = 200
KEY_LIFETIME = timedelta(hours=24)
ABANDONED_AFTER = timedelta(seconds=15)

INVALID_KEY = f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} printable ASCII characters."
STILL_IN_PROGRESS = KEY_IN_PROGRESS
IN_PROGRESS_CODE = "idempotency_key_in_progress"
IN_DOUBT = ("The message of this Idempotency-Key was handed to the platform and its outcome is not known yet; it will "
            "not be sent again. Retry later for its answer.")
IN_DOUBT_RETRY_AFTER = 5
DIFFERENT_REQUEST = "This Idempotency-Key was used with a different request."

_canonical = msgspec.json.Encoder(order="sorted")


class Replay(msgspec.Struct, frozen=True):
    """The key already answered this request: answer the same again."""

    status: int
    body: Any


class Reservation(msgspec.Struct, frozen=True):
    """The key is the caller's: send with `held()` (the sender stores the answer on it with the outcome, or
    `remember` does), or `release` the key."""

    workspace_id: int
    key: str
    request_hash: bytes
    reserved_at: datetime


    def held(self) -> KeyReservation:
        """What the send carries to the conversation actor."""
        return KeyReservation(key=self.key, reserved_at=self.reserved_at)


class InProgress(msgspec.Struct, frozen=True):
    """Another request holds the key and has not committed a message yet (409)."""


class InDoubt(msgspec.Struct, frozen=True):
    """The key's message was committed and its outcome is not known yet (409; never sent again)."""


class Conflict(msgspec.Struct, frozen=True):
    """The key was used with a different request (422)."""


Outcome = Replay | Reservation | InProgress | InDoubt | Conflict


# -- the request --------------------------------------------------------------------------------------------


class InvalidKey(ValueError):
    """A key outside the rules (its sentence is INVALID_KEY)."""


def parse_key(value: str | None) -> str | None:
    """The key a caller gave; None when it gave none. Raises InvalidKey."""
    if value is None:
        return None
    if not 1 <= len(value) <= MAX_KEY_LENGTH or not all(" " <= ch <= "~" for ch in value):
        raise InvalidKey(INVALID_KEY)
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


# -- the key's record ---------------------------------------------------------------------------------------


async def replay_or_reserve(db: Database | UnitOfWork, workspace_id: int, key: str, request_hash: bytes, *,
                            now: datetime | None = None) -> Outcome:
    """Reserve the key for this request, or say why not. Exactly one of concurrent callers gets the
    Reservation. The key's ages are PostgreSQL's clock's (`now` only for a test that moves time)."""
    for _ in range(3):
        reserved_at = await queries.reserve(
            db, workspace_id=workspace_id, key=key, request_hash=request_hash, now=now, lifetime=KEY_LIFETIME,
            abandoned_after=ABANDONED_AFTER)
        if reserved_at is not None:
            return Reservation(workspace_id=workspace_id, key=key, request_hash=request_hash,
                               reserved_at=reserved_at)
        row = await queries.find(db, workspace_id, key)
        if row is None:
            continue  # released or pruned between the two statements: try again
        if bytes(row["request_hash"]) != request_hash:
            return Conflict()
        if row["response_status"] != queries.IN_PROGRESS:
            return Replay(status=row["response_status"], body=msgspec.json.decode(row["response_body"]))
        if row["message_id"] is None:
            return InProgress()
        verdict = message_verdict(row["status"], row["platform_message_id"], row["source"], row["error_code"],
                                  row["error_text"])
        return InDoubt() if verdict is None else Replay(status=verdict.status, body=msgspec.to_builtins(verdict.body))
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
    """Give the key back unanswered, so a retry is handled afresh; False (and kept) once a message is linked."""
    return await queries.release(db, workspace_id=reservation.workspace_id, key=reservation.key,
                                 reserved_at=reservation.reserved_at)


async def prune(db: Database | UnitOfWork, *, now: datetime | None = None) -> int:
    """Delete keys past their KEY_LIFETIME by PostgreSQL's clock (or `now`, a test's); how many went. A node whose
    own clock runs ahead forgets no workspace's key early."""
    return await queries.delete_older_than(db, KEY_LIFETIME, now)


async def link_answer(q: Database | UnitOfWork, workspace_id: int, reservation: KeyReservation,
                      verdict: SendVerdict) -> None:
    """Store a send's verdict on the reservation it held, in the transaction that records the send's outcome."""
    await queries.complete(q, workspace_id=workspace_id, key=reservation.key, reserved_at=reservation.reserved_at,
                           status=verdict.status, body_json=msgspec.json.encode(verdict.body).decode())


async def answer(tx: UnitOfWork, workspace_id: int, reservation: KeyReservation, status: int, body: Any) -> bool:
    """Store the answer of a keyed write that is no send (a member's note) on the reservation it held, in the
    transaction that makes the write; False when the reservation is no longer the request's (the write must then
    roll back: another request owns the key)."""
    return await queries.complete(tx, workspace_id=workspace_id, key=reservation.key,
                                  reserved_at=reservation.reserved_at, status=status,
                                  body_json=msgspec.json.encode(body).decode())


async def settle_answer(tx: UnitOfWork, workspace_id: int, key: str, message_id: int, verdict: SendVerdict) -> None:
    """Store the verdict of a send settled later (by the platform's status, or given up) on its message's key."""
    await queries.complete_for_message(tx, workspace_id=workspace_id, key=key, message_id=message_id,
                                       status=verdict.status, body_json=msgspec.json.encode(verdict.body).decode())
