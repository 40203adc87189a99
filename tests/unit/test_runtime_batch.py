"""Group commit: a kind with batch_limit > 1 gets the messages queued behind the first in one receive_batch."""

import pytest
import trio

from inbox_actors.runtime import Actor, ActorCrashed, ActorKind, ActorSystem


class Batcher(Actor):
    def __init__(self, key: str, batches: list[list[object]], gate: trio.Event) -> None:
        super().__init__(key)
        self.batches, self.gate = batches, gate

    async def receive_batch(self, messages: list[object]) -> list[object]:
        self.batches.append(list(messages))
        await self.gate.wait()
        if "boom" in messages:
            raise ValueError("boom")
        return [f"ok:{m}" for m in messages]

    async def receive(self, message: object) -> object:
        return (await self.receive_batch([message]))[0]


async def run_batcher(nursery, batch_limit: int):
    batches: list[list[object]] = []
    gate = trio.Event()
    system = ActorSystem([ActorKind(name="batcher", factory=lambda key: Batcher(key, batches, gate),
                                    mailbox_capacity=100, batch_limit=batch_limit)])
    await nursery.start(system.run)
    return system, batches, gate


async def test_queued_messages_are_handled_together_with_replies_in_order(autojump_clock, nursery):
    system, batches, gate = await run_batcher(nursery, batch_limit=4)
    ref = system.ref("batcher", "k")
    replies: dict[int, object] = {}

    async def ask(i: int) -> None:
        replies[i] = await ref.ask(i)

    async with trio.open_nursery() as askers:
        askers.start_soon(ask, 0)
        await trio.sleep(1)  # the first message is being handled, held at the gate
        for i in range(1, 7):
            askers.start_soon(ask, i)
            await trio.sleep(0.01)
        gate.set()
    assert [len(b) for b in batches] == [1, 4, 2]
    assert replies == {i: f"ok:{i}" for i in range(7)}
    assert system.statistics("batcher", "k").messages_handled == 7
    await system.shutdown()


async def test_a_crash_fails_every_message_of_the_batch(autojump_clock, nursery):
    system, batches, gate = await run_batcher(nursery, batch_limit=10)
    ref = system.ref("batcher", "k")
    outcomes: dict[str, object] = {}

    async def ask(message: str) -> None:
        try:
            outcomes[message] = await ref.ask(message)
        except ActorCrashed as err:
            outcomes[message] = err

    async with trio.open_nursery() as askers:
        askers.start_soon(ask, "first")
        await trio.sleep(1)
        for message in ("a", "boom", "b"):
            askers.start_soon(ask, message)
            await trio.sleep(0.01)
        gate.set()
    assert outcomes["first"] == "ok:first"
    assert all(isinstance(outcomes[m], ActorCrashed) for m in ("a", "boom", "b"))
    await trio.sleep(1)  # the restart's backoff
    assert system.statistics("batcher", "k").restarts == 1
    await system.shutdown()


def test_batch_limit_must_be_positive():
    with pytest.raises(ValueError):
        ActorKind(name="x", factory=Actor, batch_limit=0)


async def test_linger_lets_messages_arriving_shortly_after_join_the_batch(autojump_clock, nursery):
    batches: list[list[object]] = []
    gate = trio.Event()
    gate.set()
    system = ActorSystem([ActorKind(name="batcher", factory=lambda key: Batcher(key, batches, gate),
                                    batch_limit=10, batch_linger=0.05)])
    await nursery.start(system.run)
    ref = system.ref("batcher", "k")
    for n in range(3):
        await ref.tell(n)
        await trio.sleep(0.01)  # each arrives within the linger of the first
    await trio.sleep(0.1)
    await ref.tell("late")
    assert await ref.ask("barrier") == "ok:barrier"
    assert batches == [[0, 1, 2], ["late", "barrier"]]
    await system.shutdown()


async def test_shutdown_while_lingering_still_handles_the_batch(autojump_clock, nursery):
    batches: list[list[object]] = []
    gate = trio.Event()
    gate.set()
    system = ActorSystem([ActorKind(name="batcher", factory=lambda key: Batcher(key, batches, gate),
                                    batch_limit=10, batch_linger=60)])
    await nursery.start(system.run)
    await system.ref("batcher", "k").tell("only")
    await trio.sleep(1)
    await system.shutdown(grace=5)
    assert batches == [["only"]]
