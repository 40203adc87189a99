"""Actor runtime figures: memory per live idle actor, ask round trips per second (one actor, many actors),
activation and passivation cost. In-process, no I/O.

    .venv/bin/python scripts/bench_actors.py [--actors 100000] [--messages 200000]
    .venv/bin/python scripts/bench_actors.py --small          # 10,000 actors, 20,000 asks: a quicker run

Memory is the growth of the process's resident set (VmRSS, after gc.collect()) across activating `--actors`
actors of a kind whose idle timeout is far longer than the run, each after one ask: every one of them is
live when it is read (the system's own live count is checked and printed beside it). It is measured first,
in a process that has done little else, so memory freed by earlier phases cannot hide the growth. Those
actors stay live for the rest of the run, as a loaded service's would. Where the bytes go:
scripts/actor_memory.py.
"""

from __future__ import annotations

import argparse
import gc
import os
import time

import trio
from harness.meters import rss_bytes

from inbox_actors.runtime import Actor, ActorKind, ActorSystem

# Longer than any run: not one of the measured actors may passivate before memory is read.
RESIDENT_IDLE_TIMEOUT = 24 * 3600.0
SMALL = (20_000, 10_000)
FULL = (200_000, 100_000)


class Counter(Actor):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.count = 0

    async def receive(self, message: object) -> int:
        self.count += 1
        return self.count


def resident_bytes() -> int:
    """VmRSS of this process (/proc/self/status) once the cyclic garbage is collected."""
    gc.collect()
    rss = rss_bytes(os.getpid())
    if rss is None:
        raise SystemExit("no VmRSS in /proc/self/status: the memory figure needs Linux")
    return rss


async def measure_memory(system: ActorSystem, actors: int) -> None:
    before = resident_bytes()
    started = time.perf_counter()
    for n in range(actors):
        await system.ref("resident", f"r{n}").ask("tick")
    elapsed = time.perf_counter() - started
    after = resident_bytes()
    live = system.summary(busiest=0).kinds["resident"].live
    if live != actors:
        raise SystemExit(f"only {live:,} of {actors:,} actors are live: the memory figure would be meaningless")
    print(f"activate + first ask, {actors:,} resident actors {actors / elapsed:10,.0f} actors/s")
    print(f"memory per live idle actor       {(after - before) / actors:12,.0f} bytes"
          f"   (RSS {before / 2**20:,.1f} -> {after / 2**20:,.1f} MiB: +{(after - before) / 2**20:,.1f} MiB"
          f" for {actors:,} actors, {live:,} of them live when read)")


async def bench(messages: int, actors: int) -> None:
    system = ActorSystem([
        ActorKind(name="counter", factory=Counter, mailbox_capacity=256, idle_timeout=1.0),
        ActorKind(name="resident", factory=Counter, mailbox_capacity=256, idle_timeout=RESIDENT_IDLE_TIMEOUT),
    ])
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)

        one = system.ref("counter", "one")
        await one.ask("warm")
        await measure_memory(system, actors)

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
        print(f"activate + first ask, {actors:,} actors {actors / elapsed:10,.0f} actors/s (idle timeout 1 s)")

        started = time.perf_counter()
        async with trio.open_nursery() as callers:
            for n in range(0, actors, max(1, actors // 64)):
                callers.start_soon(caller, system.ref("counter", f"a{n}"), messages // 64)
        elapsed = time.perf_counter() - started
        print(f"ask, 64 actors, 64 callers       {64 * (messages // 64) / elapsed:12,.0f} round trips/s")

        started = time.perf_counter()
        while system.summary(busiest=0).kinds["counter"].live > 0:
            await trio.sleep(0.05)
        print(f"passivation of {actors + 1:,} idle actors   {time.perf_counter() - started - 1.0:10.2f} s"
              " after the idle timeout")
        # The resident actors stop here, all at once, each draining its (empty) mailbox.
        await system.shutdown(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, help=f"asks per round-trip figure (default {FULL[0]:,})")
    parser.add_argument("--actors", type=int, help=f"actors activated per figure (default {FULL[1]:,})")
    parser.add_argument("--small", action="store_true", help=f"defaults of {SMALL[0]:,} asks, {SMALL[1]:,} actors")
    args = parser.parse_args()
    messages, actors = SMALL if args.small else FULL
    trio.run(bench, args.messages or messages, args.actors or actors)


if __name__ == "__main__":
    main()
