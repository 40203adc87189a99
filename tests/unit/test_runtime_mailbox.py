"""Bounded mailbox: a full mailbox pushes back on senders instead of growing."""

from __future__ import annotations

import math

import pytest
import trio
import trio.testing

from inbox_actors.runtime import ActorKind, MailboxFull

from .runtime_harness import Echo, Hold, Probe, running


async def fill_mailbox(system, probe: Probe, capacity: int) -> trio.Event:
    """Park the actor on a Hold and queue `capacity` more messages behind it; returns the gate."""
    gate = trio.Event()
    ref = system.ref("probe", "k")
    ref.tell_nowait(Hold("held", gate))
    await trio.testing.wait_all_tasks_blocked()
    assert probe.events("began") == [("began", "k", "held")]
    for n in range(capacity):
        ref.tell_nowait(Echo(f"queued-{n}"))
    return gate


async def test_tell_nowait_raises_mailbox_full_when_full_and_sends_nothing(autojump_clock):
    probe = Probe()
    async with running(probe.kind(mailbox_capacity=2)) as system:
        gate = await fill_mailbox(system, probe, 2)
        with pytest.raises(MailboxFull) as raised:
            system.ref("probe", "k").tell_nowait(Echo("overflow"))
        assert (raised.value.kind, raised.value.key) == ("probe", "k")
        assert system.statistics("probe", "k").mailbox_used == 2

        gate.set()
        await trio.testing.wait_all_tasks_blocked()
        assert [e[2] for e in probe.events("handled")] == ["held", "queued-0", "queued-1"]


async def test_tell_waits_for_space_then_delivers(autojump_clock):
    probe = Probe()
    async with running(probe.kind(mailbox_capacity=1)) as system:
        gate = await fill_mailbox(system, probe, 1)
        delivered = trio.Event()

        async def tell_when_room():
            await system.ref("probe", "k").tell(Echo("waited"))
            delivered.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(tell_when_room)
            await trio.testing.wait_all_tasks_blocked()
            assert not delivered.is_set(), "tell must wait while the mailbox is full"
            assert system.statistics("probe", "k").mailbox_used == 1
            gate.set()
        assert delivered.is_set()
        await trio.testing.wait_all_tasks_blocked()
        assert [e[2] for e in probe.events("handled")] == ["held", "queued-0", "waited"]


async def test_ask_waits_for_space_then_gets_its_reply(autojump_clock):
    probe = Probe()
    async with running(probe.kind(mailbox_capacity=1, ask_timeout=60)) as system:
        gate = await fill_mailbox(system, probe, 1)
        replies = []

        async def ask_when_room():
            replies.append(await system.ref("probe", "k").ask(Echo("asked")))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ask_when_room)
            await trio.testing.wait_all_tasks_blocked()
            assert replies == []
            assert system.statistics("probe", "k").mailbox_used == 1
            await trio.sleep(5)
            gate.set()
        assert replies == ["asked"]


@pytest.mark.parametrize("capacity", [0, -1, math.inf, 2.5])
def test_kind_refuses_an_unbounded_or_rendezvous_mailbox(capacity):
    with pytest.raises(ValueError, match="mailbox_capacity"):
        ActorKind(name="probe", factory=Probe().kind().factory, mailbox_capacity=capacity)


async def test_a_full_mailbox_is_a_trio_would_block_as_trio_nowait_calls_raise(autojump_clock):
    probe = Probe()
    async with running(probe.kind(mailbox_capacity=1)) as system:
        ref = system.ref("probe", "k")
        gate = trio.Event()
        ref.tell_nowait(Hold("held", gate))
        await trio.testing.wait_all_tasks_blocked()
        ref.tell_nowait(Echo("fills the mailbox"))
        with pytest.raises(trio.WouldBlock):
            ref.tell_nowait(Echo("no room"))
        gate.set()


async def test_senders_waiting_for_room_are_served_first_come_first_served(autojump_clock):
    probe = Probe()
    async with running(probe.kind(mailbox_capacity=1)) as system:
        gate = await fill_mailbox(system, probe, 1)
        ref = system.ref("probe", "k")
        async with trio.open_nursery() as nursery:
            for n in range(5):
                nursery.start_soon(ref.tell, Echo(f"waiting-{n}"))
                await trio.testing.wait_all_tasks_blocked()  # each blocks in turn, in this order
            gate.set()
        await trio.testing.wait_all_tasks_blocked()
        assert [e[2] for e in probe.events("handled")] == [
            "held", "queued-0", "waiting-0", "waiting-1", "waiting-2", "waiting-3", "waiting-4"]


async def test_a_sender_that_gives_up_waiting_for_room_leaves_nothing_behind(autojump_clock):
    probe = Probe()
    async with running(probe.kind(mailbox_capacity=1)) as system:
        gate = await fill_mailbox(system, probe, 1)
        ref = system.ref("probe", "k")
        with trio.move_on_after(1):
            await ref.tell(Echo("gave up"))
        gate.set()
        await trio.testing.wait_all_tasks_blocked()
        assert [e[2] for e in probe.events("handled")] == ["held", "queued-0"]
        assert system.statistics("probe", "k").mailbox_used == 0
