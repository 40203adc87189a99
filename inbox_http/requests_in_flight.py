"""Counts the HTTP requests the app is answering, so shutdown can end as soon as none is left.

Hypercorn waits for every connection to close before it returns, idle keep-alive ones included; with
quart-trio the idle timer of a kept-alive connection is restarted inside the request's own nursery, which
quart-trio cancels once the response is sent, so an idle connection is never closed and shutdown always ran
out the whole grace period. The server watches this count instead and stops serving once it reaches zero.

While the service drains (`closing()` true: SIGTERM received) every response says `Connection: close`, so
clients stop reusing connections before the listener goes away instead of sending a request on a connection
the server is about to drop. Once HTTP stops (`refuse_new()`: no new connection is accepted and the requests
under way finish) a request arriving on a connection kept alive from before is answered 503 `shutting_down` without
reaching the app, rather than being taken and then cut off when the server closes the connection. It also counts
what shutdown must account for: requests answered while draining, requests refused so, and requests the app took
but never finished answering (`unanswered`, which a clean drain leaves at 0). A HEAD request is answered once its
answer's head is sent: the server sends no body to it, and a client (`curl -I`) may close the connection at once,
which cancels the app still handing over a body nobody reads.
"""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable

import trio

log = logging.getLogger("inbox_http.requests_in_flight")

Asgi = Callable[[dict, Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]], Awaitable[Any]]


class RequestsInFlight:
    """An ASGI wrapper around `app` that counts HTTP requests under way."""

    def __init__(self, app: Asgi, closing: Callable[[], bool] = lambda: False) -> None:
        self.app = app
        self._closing = closing
        self.active = 0
        self.answered_draining = 0
        self.unanswered = 0
        self.refused_stopping = 0
        self._stopping = False
        self._none_active = trio.Event()
        self._none_active.set()

    def refuse_new(self) -> None:
        """From now on a request that arrives (on a connection kept alive from before) is answered 503 at once and
        never reaches the app: HTTP is finishing the requests under way and will close every connection next."""
        self._stopping = True

    async def __call__(self, scope: dict, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if self._stopping:
            self.refused_stopping += 1
            return await _refuse(send)
        self.active += 1
        if self._none_active.is_set():
            self._none_active = trio.Event()
        answered = False
        status: int | None = None
        length: int | None = None   # the response's Content-Length, when it declares one
        body_sent = 0
        # An event stream has no last part: the client leaving is how it ends, not a request left unanswered.
        event_stream = False
        closes = False              # the answer says Connection: close
        head_only = scope.get("method") == "HEAD"

        async def answer(message: dict) -> None:
            nonlocal answered, status, length, body_sent, event_stream, closes
            if message["type"] == "http.response.start":
                status = message["status"]
                length = _content_length(message.get("headers", ()))
                event_stream = _header(message.get("headers", ()), b"content-type").startswith(b"text/event-stream")
                if self._closing():
                    message = {**message, "headers": [*message.get("headers", ()), (b"connection", b"close")]}
                closes = _header(message.get("headers", ()), b"connection").lower() == b"close"
            # Answered once the client has every byte: the last body part, or as many bytes as Content-Length
            # said. Quart sends the body with more_body and then an empty last part; a client told to close reads
            # the body, closes, and quart-trio cancels the request on that disconnect, sometimes before the empty
            # last part is sent. Counting that as unanswered would report a loss the client never saw.
            final = message["type"] == "http.response.body" and not message.get("more_body", False)
            try:
                if final and closes:
                    # Hypercorn closes the connection inside this send, once it has handed the app the client's
                    # leaving, which makes quart-trio cancel the request: unshielded, the close could be cut off
                    # and the connection left open, its next request never read (a body refused 413 half read).
                    with trio.CancelScope(shield=True):
                        await send(message)
                else:
                    await send(message)
            except trio.Cancelled:
                # quart-trio cancels the request's nursery as soon as the last body part is handed over.
                answered = answered or final
                raise
            if message["type"] == "http.response.body":
                body_sent += len(message.get("body", b""))
            answered = answered or final or head_only or (length is not None and body_sent >= length)

        try:
            return await self.app(scope, receive, answer)
        finally:
            if not answered and not event_stream:
                self.unanswered += 1
                log.warning("%s %s left unanswered: %s", scope.get("method"), scope.get("path"),
                            "no response begun" if status is None else
                            f"{status} begun, {body_sent} of {length if length is not None else '?'} body bytes sent")
            elif self._closing():
                self.answered_draining += 1
            self.active -= 1
            if self.active == 0:
                self._none_active.set()

    async def wait_none_active(self) -> None:
        await self._none_active.wait()


def _header(headers, wanted: bytes) -> bytes:
    for name, value in headers:
        if name.lower() == wanted:
            return value
    return b""


def _content_length(headers) -> int | None:
    value = _header(headers, b"content-length")
    return int(value) if value.isdigit() else None


_SHUTTING_DOWN = b'{"error":"shutting_down","message":"The service is shutting down; retry the request."}'


async def _refuse(send) -> None:
    """503 shutting_down, Retry-After: 1, Connection: close. If the server is already closing the connection
    (cancelled), the client sees it closed: either way the app never took the request."""
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(_SHUTTING_DOWN)).encode()),
        (b"retry-after", b"1"), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": _SHUTTING_DOWN, "more_body": False})
