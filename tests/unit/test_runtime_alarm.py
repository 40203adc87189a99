"""An alarm never oversleeps a due time it was told of: not even one told while a round is under way, after the
round read its store but before it ended (the SLA clock missed a chat's breach by up to its 60 s recheck so, when
the round was the one woken for an earlier deadline)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import trio

from inbox_actors.runtime import ActorKind, ActorSystem
from inbox_actors.runtime.alarm import Alarm, DueAt, Round, Start

EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
RECHECK = 60.0


def store_now() -> datetime:
    """The store's clock: trio's (the mock clock's) as a time of day."""
    return EPOCH + timedelta(seconds=trio.current_time())


class Deadlines:
    """The alarm's store: due times, what was announced and when, and a gate a round can be held at."""

    def __init__(self) -> None:
        self.due: list[datetime] = []
        self.announced: list[tuple[datetime, float]] = []
        self.hold_next_round: trio.Event | None = None
        self.round_read = trio.Event()


class Clock(Alarm):
    def __init__(self, key: str, store: Deadlines) -> None:
        super().__init__(key, RECHECK)
        self.store = store

    async def round(self) -> Round:
        now = store_now()
        for at in [at for at in self.store.due if at <= now]:
            self.store.due.remove(at)
            self.store.announced.append((at, trio.current_time()))
        next_due = min(self.store.due, default=None)
        gate, self.store.hold_next_round = self.store.hold_next_round, None
        if gate is not None:     # read, not yet ended: what is committed now, this round has not seen
            self.store.round_read.set()
            await gate.wait()
        return Round(next_due, now)


async def test_a_due_time_told_while_a_round_runs_is_kept(autojump_clock):
    store = Deadlines()
    first = store_now() + timedelta(seconds=1)
    store.due.append(first)
    system = ActorSystem([ActorKind("clock", lambda key: Clock(key, store))])
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        clock = system.ref("clock", "only")
        await clock.tell(Start())
        await clock.tell(DueAt(first))
        # The round woken for the first deadline is held after reading the store; a later deadline is committed
        # and told meanwhile.
        gate = store.hold_next_round = trio.Event()
        await store.round_read.wait()
        assert [at for at, _ in store.announced] == [first]
        second = store_now() + timedelta(seconds=2)
        store.due.append(second)
        await clock.tell(DueAt(second))
        gate.set()
        with trio.move_on_after(RECHECK / 2):
            while len(store.announced) < 2:
                await trio.sleep(0.1)
        assert [at for at, _ in store.announced] == [first, second]
        announced_at = store.announced[1][1]
        assert (EPOCH + timedelta(seconds=announced_at) - second).total_seconds() < 0.5, "overslept it"
        await system.shutdown()
