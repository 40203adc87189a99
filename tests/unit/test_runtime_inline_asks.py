"""Inline asks: a kind whose receive never awaits answers an ask that finds it parked in the asker's own task,
with everything else about an actor unchanged: order, counters, the idle clock, crashes and restarts."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from inbox_actors.runtime import ActorCrashed, ActorKind, ActorStatus

from .runtime_harness import Add, Crash, Echo, Hold, Probe, WhoAreYou, running


class WhichTask:
    """Reply the trio task the actor handled this message in."""


class TaskProbe(Probe):
    def kind(self, name: str = "probe", **options) -> ActorKind:
        from .runtime_harness import ProbeActor

        class Actor(ProbeActor):
            async def receive(self, message: object) -> object:
                if isinstance(message, WhichTask):
                    return trio.lowlevel.current_task()
                return await super().receive(message)

        return ActorKind(name=name, factory=lambda key: Actor(key, self), **options)


async def test_a_parked_actor_answers_in_the_askers_task_and_counts_it(autojump_clock):
    probe = TaskProbe()
    async with running(probe.kind(inline_asks=True)) as system:
        ref = system.ref("probe", "k")
        assert await ref.ask(Add(1)) == 1   # activation goes through the mailbox
        await trio.testing.wait_all_tasks_blocked()
        handled_before = system.statistics("probe", "k").messages_handled

        assert await ref.ask(WhichTask()) is trio.lowlevel.current_task()
        assert await ref.ask(Add(2)) == 3, "the same instance and state"
        statistics = system.statistics("probe", "k")
        assert statistics.messages_handled == handled_before + 2
        assert statistics.last_activity_at == trio.current_time()


async def test_a_kind_without_inline_asks_answers_in_its_own_task(autojump_clock):
    probe = TaskProbe()
    async with running(probe.kind()) as system:
        ref = system.ref("probe", "k")
        await ref.ask(Add(1))
        await trio.testing.wait_all_tasks_blocked()
        assert await ref.ask(WhichTask()) is not trio.lowlevel.current_task()


async def test_an_ask_finding_the_actor_busy_waits_its_turn_in_the_mailbox(autojump_clock):
    probe = Probe()
    async with running(probe.kind(inline_asks=True)) as system:
        ref = system.ref("probe", "k")
        await ref.ask(Echo("first"))
        await trio.testing.wait_all_tasks_blocked()
        ref.tell_nowait(Echo("queued"))   # queued, not yet handled: the actor is no longer parked
        assert await ref.ask(Echo("after")) == "after"
        assert [e[2] for e in probe.events("handled")] == ["first", "queued", "after"]


async def test_inline_answers_keep_the_idle_clock_running_from_the_last_one(autojump_clock):
    probe = Probe()
    async with running(probe.kind(inline_asks=True, idle_timeout=10)) as system:
        ref = system.ref("probe", "k")
        await ref.ask(Add(1))
        for _ in range(5):
            await trio.sleep(6)
            assert await ref.ask(Add(1)) > 1
        assert probe.events("stop") == [], "each inline answer restarted the idle clock"
        await trio.sleep(11)
        assert probe.events("stop") == [("stop", "k")]


async def test_a_crash_inline_fails_the_ask_and_restarts_the_actor_with_its_state_reloaded(autojump_clock):
    probe = Probe()
    async with running(probe.kind(inline_asks=True)) as system:
        ref = system.ref("probe", "k")
        assert await ref.ask(Add(5)) == 5
        await trio.testing.wait_all_tasks_blocked()

        with pytest.raises(ActorCrashed) as raised:
            await ref.ask(Crash("boom"))
        assert isinstance(raised.value.__cause__, ValueError)
        # As after a crash in the loop: what arrives before the restart is failed with it.
        await trio.testing.wait_all_tasks_blocked()

        assert await ref.ask(WhoAreYou()) == 2, "a fresh instance"
        assert await ref.ask(Add(1)) == 6, "state reloaded from the store"
        statistics = system.statistics("probe", "k")
        assert (statistics.restarts, statistics.status) == (1, ActorStatus.RUNNING)
        assert statistics.messages_dropped == 1


async def test_a_receive_that_awaits_after_all_is_a_crash_not_a_hang(autojump_clock):
    probe = Probe()
    async with running(probe.kind(inline_asks=True)) as system:
        ref = system.ref("probe", "k")
        await ref.ask(Add(1))
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(ActorCrashed, match="inline_asks"):
            await ref.ask(Hold("waits", trio.Event()))
        await trio.testing.wait_all_tasks_blocked()
        assert await ref.ask(Add(1)) == 2
        assert system.statistics("probe", "k").restarts == 1


async def test_inline_asks_are_refused_with_batches():
    with pytest.raises(ValueError, match="batch_limit"):
        Probe().kind(inline_asks=True, batch_limit=10)
