"""Driving conversation actors in integration tests: what a customer writes, and chats running beside one of the
service's clocks (the SLA clock, the snooze clock), wired as the service wires them."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime, timezone
from functools import partial

import trio

from inbox_actors.conversations.conversation import ConversationDeps, CustomerWrote, conversation_kind
from inbox_actors.conversations.send_pacer import send_pacer_kind
from inbox_actors.platform.payloads import InboundMessage
from inbox_actors.runtime import ActorKind, ActorSystem
from inbox_actors.runtime.clock import Clock, WallClock
from persistence.database import Database
from tests.integration.test_conversation_actor import RecordingPlatform

_ids = itertools.count(1)


def customer_writes(phone: str, text: str = "hello") -> CustomerWrote:
    """A text from `phone` as the webhook hands it to the chat, with a message id of its own (the platform gives
    every message one)."""
    return CustomerWrote(InboundMessage(message_id=f"wamid.customer-{next(_ids)}", from_phone=phone,
                                        at=datetime.now(timezone.utc), type="text", text=text))


@asynccontextmanager
async def running_chats_with_clock(db: Database, clock_kind: ActorKind,
                                   start_clock: Callable[[ActorSystem], Awaitable[None]], *,
                                   deadline_set: Callable[[ActorSystem, datetime], None] | None = None,
                                   clock: Clock | None = None) -> AsyncIterator[ActorSystem]:
    """The chats and one clock as the service runs them, for tests of what the clock does across a restart: the
    block is one run of the service, so a second block is the service started again on the same database.

    `start_clock` runs once the system does, as at the service's start; with `deadline_set`, chats tell the clock
    each new SLA deadline (the service's wiring in inbox_http/server.py). `clock`: the node's own (the wall clock by
    default)."""
    deps = ConversationDeps(db=db, clock=clock or WallClock(), platform=RecordingPlatform(), responder=None)
    system = ActorSystem()
    for kind in (conversation_kind(deps), send_pacer_kind(), clock_kind):
        system.register(kind)
    if deadline_set is not None:
        deps.on_new_deadline = partial(deadline_set, system)
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        await start_clock(system)
        yield system
        await system.shutdown(2)
