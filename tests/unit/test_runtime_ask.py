"""ask(): one reply under one deadline, and no late side effects for a caller told "timeout"."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from inbox_actors.runtime import AskTimeout

from .runtime_harness import Echo, Hold, Probe, running


async def open_later(gate: trio.Event, seconds: float) -> None:
    await trio.sleep(seconds)
    gate.set()


async def test_ask_returns_the_reply(autojump_clock):
    probe = Probe()
    async with running(probe.kind()) as system:
        assert await system.ref("probe", "k").ask(Echo("hello")) == "hello"


async def test_deadline_covers_waiting_for_mailbox_space_and_the_message_never_runs(autojump_clock):
    probe = Probe()
    async with running(probe.kind(mailbox_capacity=1)) as system:
        ref = system.ref("probe", "k")
        gate = trio.Event()
        ref.tell_nowait(Hold("held", gate))
        await trio.testing.wait_all_tasks_blocked()
        ref.tell_nowait(Echo("fills-the-mailbox"))

        began = trio.current_time()
        with pytest.raises(AskTimeout) as raised:
            await ref.ask(Echo("too-late"), timeout=3)
        assert trio.current_time() - began == pytest.approx(3)
        assert (raised.value.kind, raised.value.key) == ("probe", "k")
        assert "probe/k" in str(raised.value)

        gate.set()
        assert await ref.ask(Echo("after")) == "after"
        assert [e[2] for e in probe.events("handled")] == ["held", "fills-the-mailbox", "after"]


async def test_message_queued_when_the_asker_gave_up_is_skipped(autojump_clock):
    probe = Probe()
    async with running(probe.kind()) as system:
        ref = system.ref("probe", "k")
        gate = trio.Event()
        ref.tell_nowait(Hold("held", gate))
        await trio.testing.wait_all_tasks_blocked()

        with pytest.raises(AskTimeout):
            await ref.ask(Echo("abandoned"), timeout=2)
        assert system.statistics("probe", "k").mailbox_used == 1

        gate.set()
        assert await ref.ask(Echo("next")) == "next"
        handled = [e[2] for e in probe.events("handled")]
        assert handled == ["held", "next"], "a caller told 'timeout' must never see the effect happen later"
        assert system.statistics("probe", "k").messages_dropped == 1


async def test_message_already_being_handled_completes_and_its_reply_is_dropped(autojump_clock):
    probe = Probe()
    async with running(probe.kind()) as system:
        ref = system.ref("probe", "k")
        gate = trio.Event()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(open_later, gate, 5)
            with pytest.raises(AskTimeout):
                await ref.ask(Hold("slow", gate), timeout=1)
        await trio.testing.wait_all_tasks_blocked()
        assert probe.events("handled") == [("handled", "k", "slow")]
        assert system.statistics("probe", "k").messages_handled == 1


async def test_default_deadline_is_the_kinds_ask_timeout(autojump_clock):
    probe = Probe()
    async with running(probe.kind(ask_timeout=7)) as system:
        began = trio.current_time()
        with pytest.raises(AskTimeout):
            await system.ref("probe", "k").ask(Hold("never", trio.Event()))
        assert trio.current_time() - began == pytest.approx(7)


async def test_outer_cancellation_propagates_and_the_queued_message_is_skipped(autojump_clock):
    probe = Probe()
    async with running(probe.kind()) as system:
        ref = system.ref("probe", "k")
        gate = trio.Event()
        ref.tell_nowait(Hold("held", gate))
        await trio.testing.wait_all_tasks_blocked()

        reached_end = False
        with trio.move_on_after(1) as outer:
            await ref.ask(Echo("cancelled"), timeout=100)
            reached_end = True
        assert outer.cancelled_caught, "the caller's own Cancelled must propagate, not become AskTimeout"
        assert not reached_end

        gate.set()
        assert await ref.ask(Echo("next")) == "next"
        assert [e[2] for e in probe.events("handled")] == ["held", "next"]


async def test_an_ask_ends_at_its_deadline_even_while_its_message_is_being_handled(autojump_clock):
    probe = Probe()
    async with running(probe.kind()) as system:
        ref = system.ref("probe", "k")
        gate = trio.Event()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(open_later, gate, 5)
            started = trio.current_time()
            with pytest.raises(AskTimeout):
                await ref.ask(Hold("slow", gate), timeout=1)
            assert trio.current_time() - started == 1, "the deadline held; nothing waited for the stuck actor"
        # The work under way still completed (the caller learns it by reading, as after any lost answer).
        await trio.testing.wait_all_tasks_blocked()
        assert [e[2] for e in probe.events("handled")] == ["slow"]
