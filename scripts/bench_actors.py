"""Actor runtime figures: ask round trips per second (one actor, many actors), activation and passivation
cost, and memory per idle actor. In-process, no I/O.

    .venv/bin/python scripts/bench_actors.py [--messages 200000] [--actors 10000]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import trio

from inbox_actors.runtime import Actor, ActorKind, ActorSystem


class Counter(Actor):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.count = 0

    async def receive(self, message: object) -> int:
        self.count += 1
        return self.count


async def bench(messages: int, actors: int) -> None:
    system = ActorSystem([ActorKind(name="counter", factory=Counter, mailbox_capacity=256, idle_timeout=1.0)])
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)

        one = system.ref("counter", "one")
        await one.ask("warm")
        started = time.perf_counter()
        for _ in range(messages):
            await one.ask("tick")
        elapsed = time.perf_counter() - started
        print(f"ask, one actor, one caller       {messages / elapsed:12,.0f} round trips/s")

        async def caller(ref, n):
            for _ in range(n):
                await ref.ask("tick")

        started = time.perf_counter()
        async with trio.open_nursery() as callers:
            for _ in range(16):
                callers.start_soon(caller, one, messages // 16)
        elapsed = time.perf_counter() - started
        print(f"ask, one actor, 16 callers       {messages / elapsed:12,.0f} round trips/s")

        started = time.perf_counter()
        for n in range(actors):
            await system.ref("counter", f"a{n}").ask("tick")
        elapsed = time.perf_counter() - started
        print(f"activate + first ask, {actors} actors {actors / elapsed:10,.0f} actors/s")

        # Measured apart: tracing allocations slows everything it watches several times over.
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for n in range(actors):
            await system.ref("counter", f"m{n}").ask("tick")
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        print(f"memory per live idle actor       {(after - before) / actors:12,.0f} bytes")

        started = time.perf_counter()
        async with trio.open_nursery() as callers:
            for n in range(0, actors, max(1, actors // 64)):
                callers.start_soon(caller, system.ref("counter", f"a{n}"), messages // 64)
        elapsed = time.perf_counter() - started
        print(f"ask, 64 actors, 64 callers       {64 * (messages // 64) / elapsed:12,.0f} round trips/s")

        started = time.perf_counter()
        while system.summary(busiest=0).kinds["counter"].live > 0:
            await trio.sleep(0.05)
        print(f"passivation of {2 * actors + 1} idle actors   {time.perf_counter() - started - 1.0:10.2f} s after the idle timeout")
        await system.shutdown(5)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--actors", type=int, default=10_000)
    args = parser.parse_args()
    trio.run(bench, args.messages, args.actors)


if __name__ == "__main__":
    main()
