"""Restart intensity: a crash loop escalates to "failed", refuses work for a cooldown, then starts afresh."""

from __future__ import annotations

import logging

import pytest
import trio
import trio.testing

from inbox_actors.runtime import ActorCrashed, ActorFailed

from .runtime_harness import Crash, Echo, Hold, Probe, running


async def crash(ref, times: int) -> None:
    for _ in range(times):
        with pytest.raises(ActorCrashed):
            await ref.ask(Crash("boom"))


async def test_more_than_max_restarts_within_the_window_escalates(autojump_clock, caplog):
    probe = Probe()
    async with running(probe.kind(max_restarts=3, restart_window=60)) as system:
        ref = system.ref("probe", "k")
        await crash(ref, 3)
        assert system.statistics("probe", "k").status != "failed"

        with caplog.at_level(logging.ERROR, logger="inbox_actors.runtime"):
            with pytest.raises(ActorCrashed):
                await ref.ask(Crash("boom"))
        await trio.testing.wait_all_tasks_blocked()
        stats = system.statistics("probe", "k")
        assert stats.status == "failed"
        assert stats.restarts == 3
        assert any(r.levelno == logging.ERROR and "probe/k failed" in r.getMessage() for r in caplog.records)
        assert [s.key for s in system.summary().failing] == ["k"]
        assert system.summary().kinds["probe"].failed == 1


async def test_crashes_spread_wider_than_the_window_do_not_escalate(autojump_clock):
    probe = Probe()
    async with running(probe.kind(max_restarts=2, restart_window=10, idle_timeout=1000)) as system:
        ref = system.ref("probe", "k")
        for _ in range(6):
            await crash(ref, 1)
            await trio.sleep(6)  # at most two crashes fall inside any 10-second window
        stats = system.statistics("probe", "k")
        assert stats.status == "running"
        assert stats.restarts == 6


async def test_failed_actor_fails_fast_during_cooldown_then_activates_afresh(autojump_clock):
    probe = Probe()
    kind = probe.kind(max_restarts=0, failed_cooldown=30, idle_timeout=1000)
    async with running(kind) as system:
        ref = system.ref("probe", "k")
        await crash(ref, 1)
        began = trio.current_time()

        with pytest.raises(ActorFailed) as raised:
            await ref.ask(Echo("refused"))
        assert trio.current_time() == began, "a failed actor must refuse at once, not at the ask deadline"
        assert (raised.value.kind, raised.value.key) == ("probe", "k")
        with pytest.raises(ActorFailed):
            await ref.tell(Echo("refused"))
        with pytest.raises(ActorFailed):
            ref.tell_nowait(Echo("refused"))

        await trio.sleep(29)
        with pytest.raises(ActorFailed):
            await ref.ask(Echo("still refused"))
        assert system.statistics("probe", "k").status == "failed"

        await trio.sleep(2)
        assert await ref.ask(Echo("afresh")) == "afresh"
        stats = system.statistics("probe", "k")
        assert (stats.status, stats.restarts, stats.last_error) == ("running", 0, None)
        assert [e[2] for e in probe.events("handled")] == ["afresh"]


async def test_escalation_fails_queued_asks_with_actor_failed(autojump_clock):
    probe = Probe()
    async with running(probe.kind(max_restarts=0)) as system:
        ref = system.ref("probe", "k")
        gate = trio.Event()
        ref.tell_nowait(Hold("held", gate))
        await trio.testing.wait_all_tasks_blocked()
        ref.tell_nowait(Crash("boom"))
        outcome: list[BaseException] = []

        async def ask_queued():
            try:
                await ref.ask(Echo("queued"))
            except ActorFailed as exc:
                outcome.append(exc)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ask_queued)
            await trio.testing.wait_all_tasks_blocked()
            gate.set()
        # max_restarts=0: the first crash escalates, so what was queued behind it is refused as failed.
        assert len(outcome) == 1
        assert isinstance(outcome[0].__cause__, ValueError)


async def test_on_start_crash_loop_during_restart_escalates(autojump_clock):
    probe = Probe()
    async with running(probe.kind(max_restarts=3)) as system:
        ref = system.ref("probe", "k")
        await ref.ask(Echo("warm-up"))
        probe.start_failures = 100
        await crash(ref, 1)
        await trio.sleep(5)  # the restarts' backoff (0.1, 0.2, 0.4 s at most) runs out
        stats = system.statistics("probe", "k")
        assert stats.status == "failed"
        assert stats.last_error == "ConnectionError: database unavailable"
        with pytest.raises(ActorFailed):
            await ref.ask(Echo("refused"))
