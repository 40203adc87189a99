"""Counts the HTTP requests the app is answering, so shutdown can end as soon as none is left.

Hypercorn waits for every connection to close before it returns, idle keep-alive ones included; with
quart-trio the idle timer of a kept-alive connection is restarted inside the request's own nursery, which
quart-trio cancels once the response is sent, so an idle connection is never closed and shutdown always ran
out the whole grace period. The server watches this count instead and stops serving once it reaches zero.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

import trio

Asgi = Callable[[dict, Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]], Awaitable[Any]]


class RequestCount:
    """An ASGI wrapper around `app` that counts HTTP requests under way."""

    def __init__(self, app: Asgi) -> None:
        self.app = app
        self.active = 0
        self._none_active = trio.Event()
        self._none_active.set()

    async def __call__(self, scope: dict, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        self.active += 1
        if self._none_active.is_set():
            self._none_active = trio.Event()
        try:
            return await self.app(scope, receive, send)
        finally:
            self.active -= 1
            if self.active == 0:
                self._none_active.set()

    async def wait_none_active(self) -> None:
        await self._none_active.wait()
