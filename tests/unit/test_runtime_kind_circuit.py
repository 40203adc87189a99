"""A kind's supervisor: when several of its actors fail within the window (a dependency they share is down),
the whole kind refuses work fast with a clear error until its cooldown ends, operators see it, and a vital
kind's failure is the service's (readiness)."""

from __future__ import annotations

import pytest
import trio

from inbox_actors.runtime import ActorCrashed, ActorFailed, ActorSystem, KindUnavailable

from .runtime_harness import Crash, Echo, Probe, running


async def fail(system: ActorSystem, kind: str, key: str) -> None:
    with pytest.raises(ActorCrashed):
        await system.ref(kind, key).ask(Crash("dependency down"))


async def test_the_third_failed_actor_opens_the_kind_s_circuit_until_its_cooldown(autojump_clock):
    probe, other = Probe(), Probe()
    async with running(probe.kind(max_restarts=0, failed_cooldown=30, circuit_failures=3, vital=True),
                       other.kind("other")) as system:
        await fail(system, "probe", "a")
        await fail(system, "probe", "b")
        assert await system.ref("probe", "c").ask(Echo("still served")) == "still served"
        assert system.failing_vital_kinds() == []
        await fail(system, "probe", "c")

        began = trio.current_time()
        with pytest.raises(KindUnavailable, match="refusing for 30s"):
            await system.ref("probe", "never-seen").ask(Echo("refused at once"))
        assert trio.current_time() == began, "refused fast, not after an ask deadline"
        counts = system.summary().kinds["probe"]
        assert counts.circuit_open and counts.recent_failures == 3 and counts.failed == 3
        assert system.failing_vital_kinds() == ["probe"]
        assert await system.ref("other", "x").ask(Echo("other kinds unaffected")) == "other kinds unaffected"

        await trio.sleep(31)
        assert await system.ref("probe", "a").ask(Echo("back")) == "back", "the cooldown ended: work flows again"
        assert system.failing_vital_kinds() == [] and not system.summary().kinds["probe"].circuit_open


async def test_failures_spread_beyond_the_window_do_not_open_the_circuit(autojump_clock):
    probe = Probe()
    async with running(probe.kind(max_restarts=0, failed_cooldown=5, restart_window=60,
                                  circuit_failures=2)) as system:
        await fail(system, "probe", "a")
        await trio.sleep(61)
        await fail(system, "probe", "b")
        with pytest.raises(ActorFailed):  # b itself is failed, but the kind is not
            await system.ref("probe", "b").ask(Echo("x"))
        assert await system.ref("probe", "c").ask(Echo("served")) == "served"
