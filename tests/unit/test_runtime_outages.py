"""An outage of a dependency every actor shares (the system is told its exception types: the service's database's)
is no fault of the actors: however long it lasts, no actor escalates and no kind's circuit opens, the actors are
tried again at least every `outage_backoff_max`, and work flows again within that of the dependency's return. A
genuine crash loop still escalates."""

from __future__ import annotations

import logging

import pytest
import trio
import trio.testing

from inbox_actors.runtime import (
    Actor,
    ActorCrashed,
    ActorKind,
    ActorSystem,
    KindUnavailable,
    WaitingOutOutage,
)
from inbox_actors.runtime.outages import caused_by


class Unavailable(ConnectionError):
    """The dependency's "I am out" (the service's is DatabaseUnavailable)."""


class Store(Actor):
    """Loads from and reads the shared `world`, which raises Unavailable while it is down; "bug" is a crash of its
    own."""

    def __init__(self, key: str, world: dict) -> None:
        super().__init__(key)
        self.world = world

    async def on_start(self) -> None:
        self.world["starts"].append(trio.current_time())
        if self.world["down"]:
            raise Unavailable("the database does not answer")

    async def receive(self, message: object) -> object:
        if message == "bug":
            raise ValueError("a bug of the actor's")
        if self.world["down"]:
            raise Unavailable("the database does not answer")
        return message


def store_kind(world: dict, **options) -> ActorKind:
    settings = dict(max_restarts=2, restart_window=60, failed_cooldown=30, circuit_failures=2,
                    restart_backoff=0.1, restart_backoff_max=5.0, outage_backoff_max=1.0, idle_timeout=1000)
    return ActorKind("store", lambda key: Store(key, world), **{**settings, **options})


async def outage_of(system: ActorSystem, world: dict, keys: list[str], seconds: float) -> None:
    """The dependency goes down under work for every key, stays down `seconds`, and comes back."""
    world["down"] = True
    for key in keys:
        with pytest.raises(ActorCrashed) as crashed:
            await system.ref("store", key).ask("read")
        assert isinstance(crashed.value.__cause__, Unavailable)
    await trio.sleep(seconds)
    world["down"] = False


@pytest.mark.parametrize("told", [True, False], ids=["told of the outage", "not told"])
async def test_a_thirty_second_outage_neither_fails_an_actor_nor_opens_the_circuit(autojump_clock, told):
    world = {"starts": [], "down": False}
    system = ActorSystem([store_kind(world)], outages=(Unavailable,) if told else ())
    keys = ["a", "b", "c"]
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        for key in keys:
            assert await system.ref("store", key).ask("hello") == "hello"
        await outage_of(system, world, keys, 30.0)
        back = trio.current_time()
        if not told:
            # What the service did before it told the runtime of its database's outages: every restart spent the
            # intensity, the actors failed, and the kind refused work for its cooldown after the return.
            with pytest.raises(KindUnavailable):
                await system.ref("store", "a").ask("after")
            await system.shutdown()
            return
        counts = system.summary().kinds["store"]
        assert counts.failed == 0 and counts.failed_total == 0 and not counts.circuit_open
        assert counts.restarts > 3 * 10, "tried again all along the outage"
        for key in keys:
            assert await system.ref("store", key).ask("after") == "after"
        assert trio.current_time() - back <= 1.0, "served within outage_backoff_max of the return"
        attempts = [t for t in world["starts"] if t > back - 30.0]
        gaps = [later - earlier for earlier, later in zip(attempts, attempts[1:])]
        assert max(gaps) <= 1.0, "no actor waited longer than outage_backoff_max between two tries"
        await system.shutdown()


async def test_an_ask_during_the_outage_is_refused_at_once_and_a_tell_waits_for_the_instance_after_it(
        autojump_clock):
    """An asker is a request someone waits on: told at once that the dependency is out (its cause chained), it
    can retry, where waiting for a return nobody can promise would outlast its client's patience. A tell is the
    system's own work, and is handled by the instance that starts once the dependency is back."""
    world = {"starts": [], "down": False, "told": []}

    class Remembering(Store):
        async def receive(self, message: object) -> object:
            if isinstance(message, tuple):
                world["told"].append((message[1], trio.current_time()))
                return None
            return await super().receive(message)

    system = ActorSystem([ActorKind("store", lambda key: Remembering(key, world), outage_backoff_max=1.0,
                                    idle_timeout=1000)], outages=(Unavailable,))
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        await system.ref("store", "a").ask("hello")

        async def outage() -> None:
            await outage_of(system, world, ["a"], 5.0)

        nursery.start_soon(outage)
        await trio.sleep(1.0)
        asked = trio.current_time()
        with pytest.raises(WaitingOutOutage) as refused:
            await system.ref("store", "a").ask("during", timeout=20)
        assert trio.current_time() == asked and isinstance(refused.value.__cause__, Unavailable)
        assert caused_by(refused.value, (Unavailable,)), "the HTTP front tells the outage by the chain"
        await system.ref("store", "a").tell(("told", "during"))
        await trio.sleep(6.0)
        assert [what for what, _ in world["told"]] == ["during"]
        assert 4.0 <= world["told"][0][1] - asked <= 5.0, "handled within a second of the return, not before"
        assert await system.ref("store", "a").ask("after") == "after"
        await system.shutdown()


async def test_once_one_actor_starts_again_every_actor_waiting_out_the_outage_tries_at_once(autojump_clock):
    world = {"starts": [], "down": False}
    started_again: dict[str, float] = {}

    class Recording(Store):
        async def on_start(self) -> None:
            await super().on_start()
            started_again.setdefault(self.key, trio.current_time())

    kind = ActorKind("store", lambda key: Recording(key, world), outage_backoff_max=8.0, idle_timeout=1000)
    system = ActorSystem([kind], outages=(Unavailable,))
    keys = [f"k{n}" for n in range(5)]
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        for key in keys:
            await system.ref("store", key).ask("hello")
        started_again.clear()
        await outage_of(system, world, keys, 30.0)
        back = trio.current_time()
        await trio.sleep(10.0)
        first = min(started_again.values())
        assert sorted(started_again) == keys and first - back <= 8.0
        assert max(started_again.values()) - first < 0.01, "the first start after the return woke the others"
        await system.shutdown()


async def test_a_genuine_crash_loop_still_escalates_and_opens_the_circuit(autojump_clock):
    world = {"starts": [], "down": False}
    system = ActorSystem([store_kind(world)], outages=(Unavailable,))
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        for key in ("a", "b"):
            ref = system.ref("store", key)
            await ref.ask("hello")
            await outage_of(system, world, [key], 2.0)        # an outage in between spends nothing
            for _ in range(3):
                with pytest.raises(ActorCrashed):
                    await ref.ask("bug")
            await trio.testing.wait_all_tasks_blocked()
            assert system.statistics("store", key).status == "failed", "the third crash in the window escalated"
        assert system.summary().kinds["store"].circuit_open, "two failed actors opened the kind's circuit"
        with pytest.raises(KindUnavailable):
            await system.ref("store", "c").ask("hello")
        await system.shutdown()


async def test_a_stop_during_the_outage_ends_the_actor_waiting_it_out(autojump_clock):
    world = {"starts": [], "down": False}
    system = ActorSystem([store_kind(world)], outages=(Unavailable,))
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        await system.ref("store", "a").ask("hello")
        world["down"] = True
        with pytest.raises(ActorCrashed):
            await system.ref("store", "a").ask("read")
        await system.ref("store", "a").tell("queued while it waits")
        await trio.sleep(3.0)
        with trio.fail_after(1):
            await system.shutdown()
    assert system.statistics("store", "a") is None or system.statistics("store", "a").status != "running"


async def test_an_outage_is_logged_once_per_actor_not_once_per_try(autojump_clock, caplog):
    world = {"starts": [], "down": False}
    system = ActorSystem([store_kind(world)], outages=(Unavailable,))
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        await system.ref("store", "a").ask("hello")
        with caplog.at_level(logging.DEBUG, logger="inbox_actors.runtime"):
            await outage_of(system, world, ["a"], 20.0)
            assert await system.ref("store", "a").ask("after") == "after"
        warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1 and "store/a crashed of an outage" in warnings[0].getMessage()
        assert len(world["starts"]) > 10, "it was tried again all along, quietly"
        await system.shutdown()


def test_an_outage_is_told_by_the_exception_or_what_it_was_raised_from():
    def raised_from(cause: BaseException) -> BaseException:
        try:
            raise RuntimeError("wrapping") from cause
        except RuntimeError as err:
            return err

    def raised_while_handling(first: BaseException) -> BaseException:
        try:
            try:
                raise first
            except type(first):
                raise ValueError("a bug in the except block")
        except ValueError as err:
            return err

    types = (Unavailable,)
    assert caused_by(Unavailable(), types)
    assert caused_by(raised_from(raised_from(Unavailable())), types)
    assert caused_by(ExceptionGroup("a nursery's", [Unavailable(), raised_from(Unavailable())]), types)
    assert not caused_by(ExceptionGroup("a nursery's", [Unavailable(), ValueError()]), types)
    assert not caused_by(raised_while_handling(Unavailable()), types)
    assert not caused_by(ValueError(), types)
    assert not caused_by(Unavailable(), ())
