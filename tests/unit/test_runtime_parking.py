"""Parking: a live actor with nothing queued holds no trio task; the next envelope wakes it with its state."""

from __future__ import annotations

import trio
import trio.testing

from .runtime_harness import Add, Echo, Hold, Probe, WhoAreYou, running


def tasks_named(prefix: str) -> list[str]:
    """Names of the running tasks that start with `prefix`, anywhere in the task tree."""
    found: list[str] = []
    pending = [trio.lowlevel.current_root_task()]
    while pending:
        task = pending.pop()
        if task.name.startswith(prefix):
            found.append(task.name)
        for nursery in task.child_nurseries:
            pending.extend(nursery.child_tasks)
    return found


async def test_an_idle_live_actor_holds_no_task_and_keeps_its_state(autojump_clock):
    probe = Probe()
    async with running(probe.kind(idle_timeout=300)) as system:
        refs = [system.ref("probe", f"k{n}") for n in range(50)]
        for ref in refs:
            assert await ref.ask(Add(2)) == 2
        await trio.testing.wait_all_tasks_blocked()
        assert tasks_named("actor probe/") == []
        assert system.summary().kinds["probe"].live == 50
        await trio.sleep(100)
        for ref in refs:
            assert await ref.ask(Add(3)) == 5, "the same instance, woken, not a reloaded one"
        assert probe.instances == 50
        assert probe.events("stop") == []


async def test_a_woken_actor_serves_what_arrived_in_order_then_parks_again(autojump_clock):
    probe = Probe()
    async with running(probe.kind()) as system:
        ref = system.ref("probe", "k")
        await ref.ask(Echo("first"))
        await trio.testing.wait_all_tasks_blocked()
        gate = trio.Event()
        ref.tell_nowait(Hold("held", gate))
        for n in range(5):
            ref.tell_nowait(Echo(f"m{n}"))
        await trio.testing.wait_all_tasks_blocked()
        assert tasks_named("actor probe/k") == ["actor probe/k"], "one task serves the burst"
        gate.set()
        await trio.testing.wait_all_tasks_blocked()
        assert [e[2] for e in probe.events("handled")] == ["first", "held", "m0", "m1", "m2", "m3", "m4"]
        assert tasks_named("actor probe/") == []
        assert await ref.ask(WhoAreYou()) == 1


async def test_a_parked_actor_still_passivates_after_its_idle_timeout(autojump_clock):
    probe = Probe()
    async with running(probe.kind(idle_timeout=30)) as system:
        for n in range(3):
            await system.ref("probe", f"k{n}").ask(Echo("hi"))
            await trio.sleep(10)
        # Parked at 0, 10 and 20 s: each leaves 30 s after its own last message.
        await trio.sleep(5)  # t = 35
        assert [e[1] for e in probe.events("stop")] == ["k0"]
        await trio.sleep(20)  # t = 55
        assert [e[1] for e in probe.events("stop")] == ["k0", "k1", "k2"]
        assert system.summary().kinds["probe"].live == 0
        assert tasks_named("sweep idle probe") == [], "the sweeper ends when nothing is parked"


async def test_shutdown_stops_parked_actors_cleanly(autojump_clock):
    probe = Probe()
    async with running(probe.kind()) as system:
        for n in range(10):
            await system.ref("probe", f"k{n}").ask(Add(1))
        await trio.testing.wait_all_tasks_blocked()
        assert tasks_named("actor probe/") == []
    assert sorted(e[1] for e in probe.events("stop")) == sorted(f"k{n}" for n in range(10))
