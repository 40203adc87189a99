"""Restarts wait, doubling with each crash in the window (bounded, jittered): a cause that lasts a moment does
not spend the restart intensity in milliseconds, and work sent meanwhile waits for the restarted actor."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from inbox_actors.runtime import Actor, ActorCrashed, ActorKind, ActorSystem, ActorSystemStopping


class Flaky(Actor):
    """on_start fails while `down` is set (a database that does not answer); "crash" crashes it."""

    def __init__(self, key: str, world: dict) -> None:
        super().__init__(key)
        self.world = world

    async def on_start(self) -> None:
        self.world["starts"].append(trio.current_time())
        if self.world["down"]:
            raise ConnectionError("database unavailable")

    async def receive(self, message: object) -> object:
        if message == "crash":
            raise RuntimeError("boom")
        return message


def flaky_kind(world: dict, **options) -> ActorKind:
    return ActorKind("flaky", lambda key: Flaky(key, world), **options)


def test_the_delay_doubles_per_crash_is_capped_and_jittered_within_half_to_whole():
    kind = ActorKind("k", lambda key: Actor(key), restart_backoff=0.1, restart_backoff_max=2.0)
    for crashes, nominal in ((1, 0.1), (2, 0.2), (3, 0.4), (4, 0.8), (5, 1.6), (6, 2.0), (20, 2.0)):
        delays = [kind.restart_delay(crashes) for _ in range(200)]
        assert all(nominal / 2 <= d <= nominal for d in delays), crashes
        assert max(delays) - min(delays) > nominal / 10, "jittered"
    with pytest.raises(ValueError):
        ActorKind("k", lambda key: Actor(key), restart_backoff=1.0, restart_backoff_max=0.5)


async def test_a_one_second_outage_costs_restarts_not_the_actor(autojump_clock):
    world = {"starts": [], "down": False}
    system = ActorSystem([flaky_kind(world, max_restarts=5, restart_window=60, restart_backoff=0.1,
                                     restart_backoff_max=5.0)])
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        ref = system.ref("flaky", "a")
        assert await ref.ask("hello") == "hello"
        world["down"] = True
        began = trio.current_time()
        with pytest.raises(ActorCrashed):
            await ref.ask("crash")

        async def back_up():
            await trio.sleep(1.0)
            world["down"] = False

        nursery.start_soon(back_up)
        # Sent during the outage: it waits in the mailbox for the instance that starts once the database is back.
        assert await ref.ask("during the outage", timeout=10) == "during the outage"
        restarts = [t - began for t in world["starts"][1:]]
        assert restarts[-1] >= 1.0, "the instance that started is the one after the outage"
        assert len(restarts) <= 5, "backoff spaced the attempts; without it they would be spent at once"
        gaps = [b - a for a, b in zip(restarts, restarts[1:])]
        assert all(later >= earlier / 2 for earlier, later in zip(gaps, gaps[1:])), "the waits grow"
        stats = system.statistics("flaky", "a")
        assert stats is not None and stats.status == "running"
        await system.shutdown()


async def test_a_stop_during_the_backoff_ends_at_once_and_fails_what_waits(autojump_clock):
    world = {"starts": [], "down": True}
    system = ActorSystem([flaky_kind(world, restart_backoff=30.0, restart_backoff_max=30.0)])
    outcomes: list = []

    async def ask_during_backoff(ref):
        try:
            await ref.ask("waiting", timeout=100)
        except ActorSystemStopping as err:
            outcomes.append(err)

    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        world["down"] = False
        ref = system.ref("flaky", "a")
        await ref.ask("hello")
        world["down"] = True
        with pytest.raises(ActorCrashed):
            await ref.ask("crash")
        nursery.start_soon(ask_during_backoff, ref)
        await trio.testing.wait_all_tasks_blocked()
        began = trio.current_time()
        await system.shutdown(grace=60)
        assert trio.current_time() - began < 1, "the stop did not wait out the 15-30 s backoff"
    assert len(outcomes) == 1 and "restarting" in str(outcomes[0])
