"""Passivation: an idle actor stops cleanly and leaves the registry; the next message brings it back."""

from __future__ import annotations

import math

import pytest
import trio
import trio.testing

from inbox_actors.runtime import Actor, ActorKind

from .runtime_harness import Add, Echo, Probe, running


async def test_idle_actor_passivates_after_idle_timeout(autojump_clock):
    probe = Probe()
    async with running(probe.kind(idle_timeout=30)) as system:
        ref = system.ref("probe", "k")
        await ref.ask(Add(5))
        await trio.sleep(29)
        assert system.statistics("probe", "k") is not None
        assert probe.events("stop") == []
        await trio.sleep(2)
        assert probe.events("stop") == [("stop", "k")]
        assert system.statistics("probe", "k") is None
        assert system.summary().kinds["probe"].live == 0


async def test_each_message_resets_the_idle_timer(autojump_clock):
    probe = Probe()
    async with running(probe.kind(idle_timeout=30)) as system:
        ref = system.ref("probe", "k")
        for _ in range(5):
            await ref.ask(Echo("ping"))
            await trio.sleep(20)
        assert probe.events("stop") == []
        assert probe.events("start") == [("start", "k")]


async def test_ref_outlives_passivation_and_reactivates_with_state_reloaded(autojump_clock):
    probe = Probe()
    async with running(probe.kind(idle_timeout=30)) as system:
        ref = system.ref("probe", "k")
        assert await ref.ask(Add(5)) == 5
        await trio.sleep(60)
        assert system.statistics("probe", "k") is None
        assert await ref.ask(Add(1)) == 6
        assert probe.events("start") == [("start", "k"), ("start", "k")]
        assert probe.instances == 2


async def test_reactivation_waits_for_the_previous_on_stop(autojump_clock):
    order: list[str] = []
    flush_done = trio.Event()

    class SlowToStop(Actor):
        async def on_start(self) -> None:
            order.append("start")

        async def receive(self, message: object) -> object:
            return message

        async def on_stop(self) -> None:
            order.append("stop-begin")
            await flush_done.wait()
            order.append("stop-end")

    kind = ActorKind(name="slow", factory=SlowToStop, idle_timeout=10)
    async with running(kind) as system:
        ref = system.ref("slow", "k")
        await ref.ask("one")
        await trio.sleep(11)
        assert order == ["start", "stop-begin"]

        async def release_later():
            await trio.sleep(3)
            flush_done.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(release_later)
            assert await ref.ask("two") == "two"
        assert order == ["start", "stop-begin", "stop-end", "start"]


@pytest.mark.parametrize("count", [1000])
async def test_a_thousand_actors_activate_and_passivate(autojump_clock, count):
    probe = Probe()
    async with running(probe.kind(idle_timeout=30)) as system:
        async with trio.open_nursery() as nursery:
            for n in range(count):
                nursery.start_soon(system.ref("probe", f"k{n}").ask, Echo("hi"))
        assert system.summary().kinds["probe"].live == count
        await trio.sleep(31)
        assert system.summary().kinds["probe"].live == 0
        assert len(probe.events("stop")) == count


async def test_message_sent_as_the_idle_timer_fires_is_never_stranded(autojump_clock):
    # Trio wakes the tasks whose deadlines passed in deadline order, then runs that batch forwards or
    # backwards at random. Senders due just before and just after the actors' idle deadline are woken by one
    # clock jump together with the kind's sweeper, so some sends land as their actor is being passivated.
    probe = Probe()
    autojump_clock.autojump_threshold = math.inf  # the clock moves only when this test says so
    async with running(probe.kind(idle_timeout=30)) as system:
        early = [f"early{n}" for n in range(20)]
        late = [f"late{n}" for n in range(20)]
        async with trio.open_nursery() as nursery:
            for key in early + late:
                nursery.start_soon(system.ref("probe", key).ask, Echo("first"))
        idle_deadline = trio.current_time() + 30
        replies: dict[str, object] = {}

        async def send_at(when, key):
            await trio.sleep_until(when)
            replies[key] = await system.ref("probe", key).ask(Echo("at-deadline"), timeout=5)

        async with trio.open_nursery() as nursery:
            for key in early:
                nursery.start_soon(send_at, idle_deadline - 0.0005, key)
            for key in late:
                nursery.start_soon(send_at, idle_deadline + 0.0005, key)
            await trio.testing.wait_all_tasks_blocked()
            autojump_clock.jump(30.001)
            autojump_clock.autojump_threshold = 0  # a stranded message now fails by AskTimeout, not a hang
        assert replies == {key: "at-deadline" for key in early + late}
        assert len([e for e in probe.events("handled") if e[2] == "at-deadline"]) == len(early + late)
        # Each actor either woke for its message before the sweeper reached it, or was passivated and came
        # back for it: whichever order trio ran them in, every stop is matched by a re-activation.
        stops, starts = len(probe.events("stop")), len(probe.events("start"))
        assert starts == 40 + stops, (starts, stops)


async def test_an_actor_that_leaves_soon_passivates_after_the_brief_timeout_and_one_message_keeps_it(autojump_clock):
    """Actor.leaves_soon, set by what it last handled, takes the kind's brief_idle_timeout; another message that
    clears it brings back the full idle timeout."""
    stops: list[str] = []

    class Quiet(Actor):
        async def receive(self, message: object) -> object:
            self.leaves_soon = message == "broadcast"
            return message

        async def on_stop(self) -> None:
            stops.append(self.key)

    kind = ActorKind(name="quiet", factory=Quiet, idle_timeout=300, brief_idle_timeout=10)
    async with running(kind) as system:
        await system.ref("quiet", "reached").ask("broadcast")
        await system.ref("quiet", "chatting").ask("broadcast")
        await system.ref("quiet", "chatting").ask("hello")
        await trio.sleep(11)
        assert stops == ["reached"]
        await trio.sleep(290)
        assert stops == ["reached", "chatting"]


def test_brief_idle_timeout_must_be_positive():
    with pytest.raises(ValueError):
        ActorKind(name="x", factory=Actor, brief_idle_timeout=0)
