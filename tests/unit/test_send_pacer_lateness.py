"""A send that wakes long after its pacer slot (the process was busy) asks for another slot, so sends that woke
late together do not leave together, closer than the schedule spaced them (conversations/send_pacer.py)."""

import trio

from inbox_actors.conversations.send_pacer import MAX_WAIT, wait_for_slot
from inbox_actors.domain.send_pacing import SendSchedule


class CountingPacer:
    """The pacer's schedule behind the `Directory` face `wait_for_slot` uses, counting the asks."""

    def __init__(self, limit: int) -> None:
        self.schedule = SendSchedule(limit)
        self.asks = 0

    def ref(self, kind: str, key: str) -> "CountingPacer":
        return self

    async def ask(self, message: object) -> float | None:
        self.asks += 1
        return self.schedule.reserve(trio.current_time(), MAX_WAIT)


async def test_sends_that_wake_on_time_ask_once_each(autojump_clock):
    pacer = CountingPacer(2)
    for _ in range(5):
        assert await wait_for_slot(pacer, 7, "number", 2)
    assert pacer.asks == 5


async def test_a_send_that_wakes_long_after_its_slot_asks_for_another(autojump_clock, nursery):
    pacer = CountingPacer(2)
    assert await wait_for_slot(pacer, 7, "number", 2) and await wait_for_slot(pacer, 7, "number", 2)

    async def busy_process():
        await trio.sleep(1.0)
        autojump_clock.jump(0.5)  # the third send's slot (1.1 s) passes while nothing runs

    nursery.start_soon(busy_process)
    assert await wait_for_slot(pacer, 7, "number", 2)
    assert pacer.asks == 4  # the late one asked again, and got a slot at once
