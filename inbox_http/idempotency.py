"""`Idempotency-Key` over HTTP: the header read, and the answer of a keyed send written as the use case hands it
(`use_cases/keyed_sends.py` owns the key's round, from the reservation to the stored answer; the key's record and
rules are `conversations/idempotency_keys.py`'s)."""

from __future__ import annotations

from quart import Response, request

from inbox_actors.conversations import idempotency_keys as keys
from inbox_actors.conversations.idempotency_keys import request_hash  # noqa: F401 (the routes' one import)
from inbox_actors.conversations.send_answers import SendVerdict
from inbox_actors.use_cases import keyed_sends
from inbox_actors.use_cases.outcomes import Done, Outcome, Refused
from inbox_http.encoding import json_response
from inbox_http.errors import ApiError, SentenceError

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
# The refusals of a request that must not send, answered as the spec answers them: a sentence.
_KEY_REFUSALS = (keyed_sends.IN_PROGRESS, keyed_sends.IN_DOUBT, keyed_sends.DIFFERENT_REQUEST,
                 keyed_sends.SEND_IN_DOUBT)


def parse_key(value: str | None) -> str | None:
    """The key of an `Idempotency-Key` header value; None without the header. Raises the 400 sentence."""
    try:
        return keys.parse_key(value)
    except keys.InvalidKey as err:
        raise SentenceError(400, str(err)) from None


def current_key() -> str | None:
    """The current request's key (Quart request context); raises the 400 sentence when malformed."""
    return parse_key(request.headers.get(HEADER))


def keyed_answer(outcome: Outcome) -> Response:
    """A send's outcome in the spec's convention: its verdict, a key's replayed answer (`Idempotent-Replayed`),
    or the sentence of a refusal (with `Retry-After` where waiting helps)."""
    if isinstance(outcome, Refused):
        if outcome.code in _KEY_REFUSALS:
            retry = (outcome.data or {}).get("retry_after")
            return json_response({"error": outcome.message}, outcome.status,
                                 None if retry is None else {"Retry-After": str(retry)})
        if outcome.code == "not_sent":
            raise SentenceError(outcome.status, outcome.message)
        raise ApiError(outcome.status, outcome.code, outcome.message)
    assert isinstance(outcome, Done)
    if isinstance(outcome.data, keyed_sends.Replayed):
        return json_response(outcome.data.body, outcome.data.status, {REPLAYED_HEADER: "true"})
    verdict: SendVerdict = outcome.data
    return json_response(verdict.body, verdict.status)
