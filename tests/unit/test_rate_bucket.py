"""The rate bucket actors on trio's MockClock: accuracy of the per-key limit under concurrent callers."""

import trio

from inbox_actors.access.rate_bucket import KEY_BUCKET, admit_ip, admit_key, rate_bucket_kinds
from inbox_actors.runtime import ActorSystem


async def test_four_clients_at_3000_per_minute_never_get_more_than_the_limit(autojump_clock, nursery):
    system = ActorSystem(rate_bucket_kinds())
    await nursery.start(system.run)
    accepted: list[float] = []
    attempts = 0

    async def client(offset: float) -> None:
        nonlocal attempts
        await trio.sleep(offset)
        for _ in range(750 * 3):  # 750 a minute each, for three minutes: 3,000 a minute in all
            attempts += 1
            if (await admit_key(system, 7, 42, 600)).allowed:
                accepted.append(trio.current_time())
            await trio.sleep(0.08)

    async with trio.open_nursery() as clients:
        for n in range(4):
            clients.start_soon(client, n * 0.02)
    assert attempts == 9_000
    # Slide a 60-second window over every accepted request: never more than the limit, no burst at all.
    accepted.sort()
    start, busiest = 0, 0
    for end, at in enumerate(accepted):
        while at - accepted[start] >= 60.0:
            start += 1
        busiest = max(busiest, end - start + 1)
    assert busiest == 600
    # And the allowance is used: three full minutes' worth.
    assert len(accepted) >= 3 * 600 - 5
    await system.shutdown()


async def test_buckets_are_separate_and_leave_memory_when_idle(autojump_clock, nursery):
    system = ActorSystem(rate_bucket_kinds())
    await nursery.start(system.run)
    for _ in range(3):
        await admit_key(system, 7, 1, 3)
    assert not (await admit_key(system, 7, 1, 3)).allowed
    assert (await admit_key(system, 7, 2, 3)).allowed
    assert (await admit_ip(system, "10.0.0.1", 3)).allowed
    assert system.statistics(KEY_BUCKET, "7:1") is not None
    await trio.sleep(121)  # two empty windows
    assert system.statistics(KEY_BUCKET, "7:1") is None
    # Nothing was lost by leaving: the window had emptied.
    assert (await admit_key(system, 7, 1, 3)).remaining == 2
    await system.shutdown()
