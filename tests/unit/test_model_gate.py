"""The model gate on trio's MockClock: a workspace's model calls stay under its limit whichever chats ask, a place
given up (a deadline, a person claiming the chat) goes to the next in line, and a full line refuses at once."""

import pytest
import trio

from inbox_actors.ai_agent import model_gate
from inbox_actors.ai_agent.model_gate import GateFull, model_call_place, model_gate_kind
from inbox_actors.runtime import ActorSystem


async def test_calls_stay_under_the_limit_and_each_waiting_chat_gets_its_turn(autojump_clock, nursery):
    system = ActorSystem([model_gate_kind()])
    await nursery.start(system.run)
    inside = peak = done = 0

    async def chat() -> None:
        nonlocal inside, peak, done
        async with model_call_place(system, 7, 3):
            inside += 1
            peak = max(peak, inside)
            await trio.sleep(1.0)
            inside -= 1
        done += 1

    started = trio.current_time()
    async with trio.open_nursery() as chats:
        for _ in range(10):
            chats.start_soon(chat)
    assert (peak, done) == (3, 10)
    assert trio.current_time() - started == pytest.approx(4.0)   # ten one-second calls three at a time
    # Another workspace has its own places.
    async with model_call_place(system, 8, 1), model_call_place(system, 7, 1):
        pass
    await system.shutdown()


async def test_a_chat_that_stops_waiting_gives_its_place_back(autojump_clock, nursery):
    system = ActorSystem([model_gate_kind()])
    await nursery.start(system.run)
    order: list[str] = []

    async def holder() -> None:
        async with model_call_place(system, 7, 1):
            await trio.sleep(5.0)
            order.append("holder")

    async def impatient() -> None:
        with trio.move_on_after(1.0):
            async with model_call_place(system, 7, 1):
                order.append("impatient")

    async def patient() -> None:
        await trio.sleep(0.5)
        async with model_call_place(system, 7, 1):
            order.append("patient")

    async with trio.open_nursery() as chats:
        chats.start_soon(holder)
        await trio.sleep(0.1)
        chats.start_soon(impatient)
        chats.start_soon(patient)
    assert order == ["holder", "patient"]
    # Nothing is left inside or waiting: a place is free at once.
    with trio.fail_after(0.1):
        async with model_call_place(system, 7, 1):
            pass
    await system.shutdown()


async def test_a_full_line_refuses_at_once(autojump_clock, nursery, monkeypatch):
    monkeypatch.setattr(model_gate, "MAX_WAITING", 2)
    system = ActorSystem([model_gate_kind()])
    await nursery.start(system.run)
    release = trio.Event()

    async def chat() -> None:
        async with model_call_place(system, 7, 1):
            await release.wait()

    async with trio.open_nursery() as chats:
        for _ in range(3):   # one inside, two in line
            chats.start_soon(chat)
        await trio.sleep(0.1)
        with pytest.raises(GateFull):
            async with model_call_place(system, 7, 1):
                pass
        release.set()
    await system.shutdown()
