"""ActorTasks: long work beside the message loop, owned by one actor instance."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from inbox_actors.runtime import Actor, ActorCrashed, ActorFailed, ActorKind, ActorSystem


class Pumping(Actor):
    """Starts a pump task in on_start; messages: "start" (another pump), "crash-pump", "finish", "count"."""

    def __init__(self, key: str, journal: list, switches: dict) -> None:
        super().__init__(key)
        self.journal = journal
        self.switches = switches
        self.instance = sum(1 for entry in journal if entry[0] == "start") + 1
        self.finish = trio.Event()
        self.ticks = 0
        self.crash_me = False

    async def on_start(self) -> None:
        self.journal.append(("start", self.instance))
        if self.switches.get("pump_on_start", True):
            self.tasks.start_soon(self._pump)

    async def _pump(self) -> None:
        try:
            while not self.finish.is_set():
                if self.crash_me or self.switches.get("pump_crashes") \
                        or self.switches.get("crash_instance") == self.instance:
                    raise RuntimeError(f"pump of instance {self.instance} broke")
                self.ticks += 1
                with trio.move_on_after(1):
                    await self.finish.wait()
            self.journal.append(("pump finished", self.instance))
        except trio.Cancelled:
            self.journal.append(("pump cancelled", self.instance))
            raise

    async def receive(self, message: object) -> object:
        if message == "crash-pump":
            self.crash_me = True
            return "ok"
        if message == "finish":
            self.finish.set()
            return "ok"
        if message == "hold":
            await trio.sleep_forever()
        if message == "instance":
            return self.instance
        return message

    async def on_stop(self) -> None:
        self.journal.append(("stop", self.instance, self.tasks.running))


def kind(journal: list, switches: dict, **options) -> ActorKind:
    return ActorKind("pumping", lambda key: Pumping(key, journal, switches), **options)


async def test_a_running_task_keeps_the_actor_from_passivating_until_it_returns(autojump_clock):
    journal: list = []
    system = ActorSystem([kind(journal, {}, idle_timeout=5)])
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        ref = system.ref("pumping", "a")
        assert await ref.ask("instance") == 1
        await trio.sleep(60)
        stats = system.statistics("pumping", "a")
        assert stats is not None and stats.status == "running" and stats.tasks_running == 1
        await ref.ask("finish")
        await trio.sleep(6)
        assert system.statistics("pumping", "a") is None, "idle once the task ended"
        assert ("pump finished", 1) in journal and ("stop", 1, 0) in journal
        await system.shutdown()


async def test_a_failing_task_crashes_the_actor_which_restarts_with_a_fresh_instance(autojump_clock):
    journal: list = []
    switches: dict = {}
    system = ActorSystem([kind(journal, switches, max_restarts=5)])
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        ref = system.ref("pumping", "a")
        assert await ref.ask("instance") == 1
        await ref.ask("crash-pump")
        await trio.sleep(1.5)  # the pump's next round fails; the restarted instance's pump works
        assert await ref.ask("instance") == 2
        stats = system.statistics("pumping", "a")
        assert stats is not None and stats.restarts == 1 and "pump of instance 1 broke" in stats.last_error
        await system.shutdown()


async def test_a_task_crash_fails_the_message_being_handled_and_cancels_the_instance_tasks(autojump_clock):
    journal: list = []
    switches: dict = {"pump_on_start": True}
    system = ActorSystem([kind(journal, switches, ask_timeout=100)])
    outcome: list = []

    async def ask_hold():
        try:
            await system.ref("pumping", "a").ask("hold")
        except ActorCrashed as exc:
            outcome.append(exc)

    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        ref = system.ref("pumping", "a")
        assert await ref.ask("instance") == 1
        nursery.start_soon(ask_hold)
        await trio.testing.wait_all_tasks_blocked()
        switches["crash_instance"] = 1
        await trio.sleep(1.5)
        assert len(outcome) == 1 and "broke" in str(outcome[0])
        assert await ref.ask("instance") == 2
        await system.shutdown()


async def test_a_task_that_keeps_failing_escalates_like_a_crashing_receive(autojump_clock):
    journal: list = []
    switches: dict = {"pump_crashes": True}
    system = ActorSystem([kind(journal, switches, max_restarts=2, restart_window=60)])
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        ref = system.ref("pumping", "a")
        await ref.tell("nothing")
        await trio.sleep(1)
        with pytest.raises(ActorFailed):
            await ref.ask("instance")
        assert [entry for entry in journal if entry[0] == "start"] == [("start", 1), ("start", 2), ("start", 3)]
        await system.shutdown()


async def test_a_clean_stop_cancels_the_tasks_before_on_stop(autojump_clock):
    journal: list = []
    system = ActorSystem([kind(journal, {})])
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        await system.ref("pumping", "a").ask("instance")
        await system.shutdown()
    assert journal[-2:] == [("pump cancelled", 1), ("stop", 1, 0)]
