"""A webhook receiver of a test's own on a real socket: records every request it gets and answers as scripted."""

from __future__ import annotations

import hashlib
import hmac
from collections import deque
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import AsyncIterator

import msgspec
import trio
from quart import request
from quart_trio import QuartTrio

from tests.local_http import serve_on_free_port


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: bytes
    at: float  # trio.current_time() on arrival

    @property
    def envelope(self) -> dict:
        return msgspec.json.decode(self.body)

    @property
    def event(self) -> str:
        return self.headers["x-webhook-event"]

    def signed_by(self, secret: str) -> bool:
        expected = "sha256=" + hmac.new(secret.encode(), self.body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected, self.headers["x-webhook-signature"])


@dataclass
class Receiver:
    url: str = ""
    received: list[Received] = field(default_factory=list)
    answers: deque[int] = field(default_factory=deque)
    """Statuses to answer, in order; 200 once they run out."""
    hold: trio.Event | None = None
    """While set to an unset Event, requests wait for it (a slow receiver)."""
    arrived: trio.Event = field(default_factory=trio.Event)

    async def answer(self, received: Received) -> int:
        """The status to answer `received` with, once it is recorded: scripted by `hold` and `answers`. A subclass
        answers its own way where a test needs more (tests/integration/test_simulator.py)."""
        if self.hold is not None:
            await self.hold.wait()
        return self.answers.popleft() if self.answers else 200

    def events(self, name: str | None = None) -> list[Received]:
        return [r for r in self.received if name is None or r.event == name]

    async def wait_for(self, count: int, *, timeout: float = 10.0) -> list[Received]:
        """Wait until at least `count` requests have arrived."""
        with trio.fail_after(timeout):
            while len(self.received) < count:
                self.arrived = trio.Event()
                await self.arrived.wait()
        return self.received


def _app(receiver: Receiver) -> QuartTrio:
    app = QuartTrio("webhook-receiver")

    @app.post("/hook")
    async def hook():
        body = await request.get_data()
        received = Received(headers={k.lower(): v for k, v in request.headers.items()}, body=body,
                            at=trio.current_time())
        receiver.received.append(received)
        receiver.arrived.set()
        status = await receiver.answer(received)
        if 300 <= status < 400:
            return "", status, {"Location": "/elsewhere"}
        return "", status

    return app


async def serve_receiver(receiver: Receiver, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Serve `receiver` until cancelled, started once `receiver.url` is set: for `nursery.start` in a fixture whose
    receiver lives as long as the test's nursery rather than a block."""
    async with trio.open_nursery() as nursery:
        base = await nursery.start(serve_on_free_port, _app(receiver))
        receiver.url = f"{base}/hook"
        task_status.started()


@asynccontextmanager
async def webhook_receiver() -> AsyncIterator[Receiver]:
    """A receiver at `receiver.url` (http://127.0.0.1:<port>/hook) for the block's duration."""
    receiver = Receiver()
    async with trio.open_nursery() as nursery:
        await nursery.start(serve_receiver, receiver)
        yield receiver
        nursery.cancel_scope.cancel()
