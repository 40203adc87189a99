"""The answer to a request that meets the database out: 503 with `Retry-After` and the error body, never a bare 500.

The app's error handlers (errors.py) answer it in the route's convention; whatever meets the outage before or beside
the app (the routing's look-up of a request's workspace by its key, session, MCP token or number, the OAuth
endpoints) is answered here, in the stable-code convention, as the other answers given in front of the app are
(`shutting_down`, `node_unavailable`). An actor's refusal counts when the outage is what it was raised from (an
actor that crashed of it, or could not start).
"""

from __future__ import annotations

import logging

import msgspec

from inbox_actors.runtime.outages import caused_by
from inbox_http.cluster.asgi import App, Receive, Scope, Send
from persistence.database import DatabaseUnavailable

log = logging.getLogger("inbox_http.database_outage")

CODE = "service_unavailable"
MESSAGE = "The service's database is not answering for a moment; retry with backoff."
SENTENCE = "The service is unavailable for a moment. Please try again."
RETRY_AFTER = "1"
"""Seconds: the actors are tried again at least every second once the database is back (actor_kinds.OUTAGES)."""

_BODY = msgspec.json.encode({"error": CODE, "message": MESSAGE})


def during_outage(err: BaseException) -> bool:
    """Whether `err` is the database's unavailability, or was raised from it."""
    return caused_by(err, (DatabaseUnavailable,))


class AnsweringOutages:
    """ASGI middleware: a request whose handling raised the database's unavailability before any answer began is
    answered 503 here. Costs nothing until something raises."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except Exception as err:
            if scope["type"] != "http" or not during_outage(err):
                raise
            log.debug("%s %s: 503 while the database is out (%s)", scope["method"], scope["path"], err)
            if not await _answered(send):
                raise       # an answer had begun: the client sees the connection cut, as before


async def answer(send: Send) -> None:
    """503 `service_unavailable` with Retry-After."""
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(_BODY)).encode()),
        (b"retry-after", RETRY_AFTER.encode())]})
    await send({"type": "http.response.body", "body": _BODY, "more_body": False})


async def _answered(send: Send) -> bool:
    try:
        await answer(send)
    except Exception:
        return False
    return True
