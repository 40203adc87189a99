"""One-for-one supervision: a crash fails what it affects, restarts that actor, and nothing else."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from inbox_actors.runtime import ActorCrashed

from .runtime_harness import Add, Crash, Echo, Hold, Probe, WhoAreYou, running


async def test_crash_fails_the_in_flight_ask_with_the_cause_chained(autojump_clock):
    probe = Probe()
    async with running(probe.kind()) as system:
        with pytest.raises(ActorCrashed) as raised:
            await system.ref("probe", "k").ask(Crash("boom"))
        assert (raised.value.kind, raised.value.key) == ("probe", "k")
        assert isinstance(raised.value.__cause__, ValueError)
        assert str(raised.value.__cause__) == "boom"


async def test_crash_fails_every_queued_ask_and_drops_queued_tells(autojump_clock):
    probe = Probe()
    async with running(probe.kind()) as system:
        ref = system.ref("probe", "k")
        gate = trio.Event()
        outcomes: dict[str, object] = {}

        async def ask(name, message):
            try:
                outcomes[name] = await ref.ask(message)
            except ActorCrashed as exc:
                outcomes[name] = exc

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ask, "held", Hold("held", gate))
            await trio.testing.wait_all_tasks_blocked()
            ref.tell_nowait(Crash("boom"))
            nursery.start_soon(ask, "queued-ask", Echo("queued-ask"))
            await trio.testing.wait_all_tasks_blocked()
            ref.tell_nowait(Echo("queued-tell"))
            gate.set()

        assert outcomes["held"] == "held"
        assert isinstance(outcomes["queued-ask"], ActorCrashed)
        assert isinstance(outcomes["queued-ask"].__cause__, ValueError)
        assert [e[2] for e in probe.events("handled")] == ["held"], "queued messages die with the crash"
        stats = system.statistics("probe", "k")
        assert stats.messages_dropped == 3  # the crashing tell, the queued ask, the queued tell
        assert await ref.ask(Echo("after")) == "after"


async def test_restart_builds_a_fresh_instance_and_reloads_state(autojump_clock):
    probe = Probe()
    async with running(probe.kind()) as system:
        ref = system.ref("probe", "k")
        assert await ref.ask(Add(3)) == 3
        before = await ref.ask(WhoAreYou())
        with pytest.raises(ActorCrashed):
            await ref.ask(Crash("boom"))
        assert await ref.ask(WhoAreYou()) != before
        assert await ref.ask(Add(1)) == 4, "the restarted actor reloads its persisted state in on_start"
        assert probe.events("start") == [("start", "k"), ("start", "k")]
        stats = system.statistics("probe", "k")
        assert stats.restarts == 1
        assert stats.status == "running"
        assert stats.last_error == "ValueError: boom"
        assert 0 < trio.current_time() - stats.last_error_at <= probe.kind().restart_backoff, \
            "restarted after a backoff"


async def test_a_crash_never_touches_another_actor(autojump_clock):
    probe = Probe()
    async with running(probe.kind()) as system:
        other = system.ref("probe", "other")
        assert await other.ask(Add(7)) == 7
        before = await other.ask(WhoAreYou())
        with pytest.raises(ActorCrashed):
            await system.ref("probe", "k").ask(Crash("boom"))
        assert await other.ask(WhoAreYou()) == before
        assert system.statistics("probe", "other").restarts == 0
        assert system.summary().accepting


async def test_a_crash_in_on_start_during_a_restart_counts_and_is_retried(autojump_clock):
    probe = Probe()
    async with running(probe.kind(max_restarts=5)) as system:
        ref = system.ref("probe", "k")
        await ref.ask(Echo("warm-up"))
        probe.start_failures = 2
        with pytest.raises(ActorCrashed):
            await ref.ask(Crash("boom"))
        assert await ref.ask(Echo("after")) == "after"
        stats = system.statistics("probe", "k")
        assert stats.restarts == 3
        assert stats.last_error == "ConnectionError: database unavailable"
        assert stats.status == "running"
