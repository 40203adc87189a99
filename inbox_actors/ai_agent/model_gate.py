"""The model gate: one actor per workspace owning how many of its model calls run at once.

A chat asks to `Enter` before it calls the model and tells `Leave` after. Under the limit it enters at once; at the
limit it is given a place in line (an event the gate sets when a call leaves and hands its place on). The line is
bounded (`MAX_WAITING`): beyond it a chat is refused at once and hands its customer to a person rather than wait
without end. A chat that stops waiting (its deadline, a person claiming the chat) tells `Leave` with its ticket,
which gives back a place it may have been handed meanwhile. The limit travels with every `Enter`, so a changed
setting applies from the next call. The gate lives on the node holding the workspace, beside the chats it serves;
its receive never awaits, so an idle gate answers in the asker's own task (ActorKind.inline_asks).
"""

from __future__ import annotations

from collections import OrderedDict
from contextlib import asynccontextmanager
from typing import AsyncIterator

import msgspec
import trio

from inbox_actors.runtime import Actor, ActorKind, Directory, workspace_in_key

KIND = "model_gate"
MAX_WAITING = 500


class Enter(msgspec.Struct, frozen=True):
    limit: int


class Leave(msgspec.Struct, frozen=True):
    ticket: int


class Entered(msgspec.Struct, frozen=True):
    ticket: int
    # None: entered; an event: wait for it, then the place is the ticket's.
    turn: trio.Event | None = None


class GateFull(Exception):
    """More chats wait for the model than the gate keeps in line."""


class ModelGate(Actor):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self._inside: set[int] = set()
        self._waiting: OrderedDict[int, trio.Event] = OrderedDict()
        self._next_ticket = 0
        self._limit = 1

    async def receive(self, message: object) -> object:
        match message:
            case Enter(limit=limit):
                self._limit = max(1, limit)
                self._next_ticket += 1
                ticket = self._next_ticket
                if len(self._inside) < self._limit and not self._waiting:
                    self._inside.add(ticket)
                    return Entered(ticket)
                if len(self._waiting) >= MAX_WAITING:
                    return None
                turn = self._waiting[ticket] = trio.Event()
                return Entered(ticket, turn)
            case Leave(ticket=ticket):
                self._waiting.pop(ticket, None)
                self._inside.discard(ticket)
                while self._waiting and len(self._inside) < self._limit:
                    handed, turn = self._waiting.popitem(last=False)
                    self._inside.add(handed)
                    turn.set()
                return None
        raise TypeError(f"model gate cannot handle {type(message).__name__}")


def model_gate_kind() -> ActorKind:
    return ActorKind(name=KIND, factory=ModelGate, mailbox_capacity=1024, idle_timeout=600.0, ask_timeout=5.0,
                     inline_asks=True, workspace_of=workspace_in_key)


@asynccontextmanager
async def model_call_place(actors: Directory, workspace_id: int, limit: int) -> AsyncIterator[None]:
    """Hold one of the workspace's `limit` places for the block; raises GateFull when the line is full."""
    gate = actors.ref(KIND, f"{workspace_id}:model")
    entered = await gate.ask(Enter(limit))
    if entered is None:
        raise GateFull(f"more than {MAX_WAITING} chats of workspace {workspace_id} wait for the model")
    assert isinstance(entered, Entered)
    try:
        if entered.turn is not None:
            await entered.turn.wait()
        yield
    finally:
        # A Leave must reach the gate even when the block was cancelled, or its place would be lost for good.
        with trio.CancelScope(shield=True):
            gate.tell_nowait(Leave(entered.ticket))
