"""Shutdown: refuse new work, stop kinds dependants first (each kind's actors together, draining), under one
deadline; cancel the rest."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from inbox_actors.runtime import Actor, ActorCrashed, ActorKind, ActorSystem, ActorSystemStopping

from .runtime_harness import Crash, Echo, Hold, Probe


async def test_the_actors_of_a_kind_stop_together_each_draining_its_mailbox(autojump_clock):
    probe = Probe()
    system = ActorSystem([probe.kind(idle_timeout=1000)])
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        for key in ("first", "second", "third"):
            await system.ref("probe", key).ask(Echo("hello"))
        # "first" is busy with a slow message and has more queued behind it.
        gate = trio.Event()
        first = system.ref("probe", "first")
        first.tell_nowait(Hold("slow", gate))
        first.tell_nowait(Echo("queued-1"))
        first.tell_nowait(Echo("queued-2"))
        await trio.testing.wait_all_tasks_blocked()

        async def release_later():
            await trio.sleep(3)
            gate.set()

        nursery.start_soon(release_later)
        journal_before_shutdown = len(probe.journal)
        began = trio.current_time()
        await system.shutdown(grace=10)
        assert trio.current_time() - began == 3, "the idle ones did not wait for the busy one, nor it for them"

    after = probe.journal[journal_before_shutdown:]
    assert after[-4:] == [("handled", "first", "slow"), ("handled", "first", "queued-1"),
                          ("handled", "first", "queued-2"), ("stop", "first")]
    assert sorted(after[:2]) == [("stop", "second"), ("stop", "third")], "stopped at once, not after first"
    assert not system.summary().accepting


async def test_kinds_stop_dependants_first_each_kind_whole_before_the_next(autojump_clock):
    order: list[str] = []
    releases: dict[str, trio.Event] = {}

    class Flushing(Actor):
        async def receive(self, message: object) -> object:
            return message

        async def on_stop(self) -> None:
            order.append(f"stop-begin {self.key}")
            releases[self.key] = trio.Event()
            await releases[self.key].wait()
            order.append(f"stop-end {self.key}")

    # Registered in dependency order: the pacer first, the conversations that use it after.
    system = ActorSystem([ActorKind("pacer", Flushing, idle_timeout=1000),
                          ActorKind("chat", Flushing, idle_timeout=1000)])

    async def release_each():
        for key in ("chat-1", "chat-2", "pacer"):
            while key not in releases:
                await trio.sleep(1)
            releases[key].set()

    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        await system.ref("pacer", "pacer").ask("hi")
        for key in ("chat-1", "chat-2"):
            await system.ref("chat", key).ask("hi")
        nursery.start_soon(release_each)
        await system.shutdown(grace=60)
    assert sorted(order[:2]) == ["stop-begin chat-1", "stop-begin chat-2"], "a kind's actors stop together"
    assert order.index("stop-begin pacer") > max(order.index("stop-end chat-1"), order.index("stop-end chat-2"))


async def test_new_work_is_refused_as_soon_as_shutdown_begins(autojump_clock):
    probe = Probe()
    system = ActorSystem([probe.kind()])
    refused: list[BaseException] = []
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        gate = trio.Event()
        ref = system.ref("probe", "k")
        ref.tell_nowait(Hold("held", gate))
        await trio.testing.wait_all_tasks_blocked()

        async def try_sending_during_shutdown():
            began = trio.current_time()
            for send in (ref.ask(Echo("x")), ref.tell(Echo("x")), system.ref("probe", "new").ask(Echo("x"))):
                with pytest.raises(ActorSystemStopping) as raised:
                    await send
                refused.append(raised.value)
            with pytest.raises(ActorSystemStopping):
                ref.tell_nowait(Echo("x"))
            assert trio.current_time() == began, "refused immediately, not after a deadline"
            gate.set()

        nursery.start_soon(system.shutdown)
        await trio.testing.wait_all_tasks_blocked()
        assert not system.summary().accepting
        nursery.start_soon(try_sending_during_shutdown)
    assert len(refused) == 3
    assert [e[2] for e in probe.events("handled")] == ["held"]


async def test_grace_expiry_cancels_stragglers_and_fails_their_pending_asks(autojump_clock):
    probe = Probe()
    system = ActorSystem([probe.kind(ask_timeout=1000)])
    outcomes: dict[str, BaseException] = {}
    run_returned_at: list[float] = []

    async def run_system(task_status=trio.TASK_STATUS_IGNORED):
        await system.run(task_status=task_status)
        run_returned_at.append(trio.current_time())

    async def ask(name, message):
        try:
            await system.ref("probe", "stuck").ask(message)
        except ActorSystemStopping as exc:
            outcomes[name] = exc

    async with trio.open_nursery() as nursery:
        await nursery.start(run_system)
        nursery.start_soon(ask, "in-flight", Hold("forever", trio.Event()))
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(ask, "queued", Echo("never"))
        await trio.testing.wait_all_tasks_blocked()

        began = trio.current_time()
        with trio.fail_after(60):  # a shutdown that ignores its grace would otherwise hang the test
            await system.shutdown(grace=5)
        assert trio.current_time() - began == pytest.approx(5)
        assert run_returned_at, "run() returns once shutdown completes"

    assert set(outcomes) == {"in-flight", "queued"}
    assert probe.events("stop") == [], "a cancelled actor gets no clean on_stop"
    assert probe.events("handled") == []


async def test_ask_to_an_actor_cancelled_by_shutdown_fails_as_stopping(autojump_clock):
    probe = Probe()
    system = ActorSystem([probe.kind(mailbox_capacity=1, ask_timeout=1000)])
    outcome: list[BaseException] = []

    async def ask_waiting_for_space():
        try:
            await system.ref("probe", "k").ask(Echo("blocked"))
        except ActorSystemStopping as exc:
            outcome.append(exc)

    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        ref = system.ref("probe", "k")
        ref.tell_nowait(Hold("forever", trio.Event()))
        await trio.testing.wait_all_tasks_blocked()
        ref.tell_nowait(Echo("fills-the-mailbox"))
        nursery.start_soon(ask_waiting_for_space)
        await trio.testing.wait_all_tasks_blocked()
        await system.shutdown(grace=1)
    assert len(outcome) == 1
    assert (outcome[0].kind, outcome[0].key) == ("probe", "k")


async def test_a_crash_while_draining_ends_the_actor_without_reloading_it(autojump_clock):
    probe = Probe()
    system = ActorSystem([probe.kind()])
    outcome: list[BaseException] = []

    async def ask_behind_the_crash():
        try:
            await system.ref("probe", "k").ask(Echo("behind"))
        except ActorCrashed as exc:
            outcome.append(exc)

    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        ref = system.ref("probe", "k")
        gate = trio.Event()
        ref.tell_nowait(Hold("held", gate))
        await trio.testing.wait_all_tasks_blocked()
        ref.tell_nowait(Crash("boom"))
        nursery.start_soon(ask_behind_the_crash)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(system.shutdown)
        await trio.testing.wait_all_tasks_blocked()
        gate.set()
    assert len(outcome) == 1
    assert probe.events("start") == [("start", "k")], "no state reload just to stop"
    assert probe.events("stop") == [], "a crashed instance gets no clean on_stop"
