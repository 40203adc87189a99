"""An HTTP/1.1 load client for the benchmarks: `LoadClients` keeps a few worker processes (spawned once, reused for
every phase); a phase splits its concurrent clients over them, each client one keep-alive connection sending one
request at a time as fast as the answers come back. The requests are raw bytes from a picklable `Plan`
(`plan.request(n)`, n unique in a phase across all clients), parsed back by `Connection`: a minimal HTTP/1.1
reader, far cheaper per request than a client library, so on a small machine the figures are the server's, not
the client's. Each worker reports its own CPU time: a phase whose client processes sat near a full core each was
measuring the client."""

from __future__ import annotations

import multiprocessing
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlsplit

import trio


class Plan(Protocol):
    """What a phase sends: the bytes of request number n (n unique across the phase's clients)."""

    def request(self, n: int) -> bytes: ...


@dataclass(frozen=True)
class Get:
    path: str
    host: str
    headers: tuple[tuple[str, str], ...] = ()

    def request(self, n: int) -> bytes:
        return get_request(self.path, self.host, self.headers)


def get_request(path: str, host: str, headers: tuple[tuple[str, str], ...] = ()) -> bytes:
    lines = "".join(f"{name}: {value}\r\n" for name, value in headers)
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{lines}\r\n".encode()


def post_request(path: str, host: str, body: bytes, headers: tuple[tuple[str, str], ...] = ()) -> bytes:
    lines = "".join(f"{name}: {value}\r\n" for name, value in headers)
    return (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{lines}\r\n").encode() + body


class Connection:
    """One HTTP/1.1 keep-alive connection: send a request, read the status and the body (Content-Length).
    `closing` turns true after an answer with `Connection: close` (Hypercorn ends a connection after 1,000
    requests): the caller then opens a new connection instead of writing into one being closed."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.buffer = b""
        self.closing = False

    async def get(self, request: bytes) -> int:
        return (await self.exchange(request))[0]

    async def exchange(self, request: bytes) -> tuple[int, bytes]:
        await self.stream.send_all(request)
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += await self._receive()
        head, _, rest = self.buffer.partition(b"\r\n\r\n")
        length = 0
        for line in head.lower().split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name == b"content-length":
                length = int(value)
            elif name == b"connection" and b"close" in value:
                self.closing = True
        while len(rest) < length:
            rest += await self._receive()
        self.buffer = rest[length:]
        return int(head.split(b" ", 2)[1]), rest[:length]

    async def _receive(self) -> bytes:
        chunk = await self.stream.receive_some(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        return chunk


# -- one phase's outcome ------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What the clients of a phase saw. `seconds`: from the start to the last answer."""

    requests: int = 0
    seconds: float = 0.0
    statuses: Counter = field(default_factory=Counter)
    failures: Counter = field(default_factory=Counter)      # transport errors by type name (request lost)
    samples: dict[int, str] = field(default_factory=dict)   # an answer body per unexpected status
    latencies: array = field(default_factory=lambda: array("d"))
    client_cpu: list[float] = field(default_factory=list)  # CPU seconds of each client process

    @property
    def per_second(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def errors(self) -> int:
        return sum(count for status, count in self.statuses.items() if status >= 400) + sum(self.failures.values())

    def merge(self, other: Outcome) -> None:
        self.requests += other.requests
        self.seconds = max(self.seconds, other.seconds)
        self.statuses.update(other.statuses)
        self.failures.update(other.failures)
        for status, body in other.samples.items():
            self.samples.setdefault(status, body)
        self.latencies.extend(other.latencies)
        self.client_cpu.extend(other.client_cpu)

    def percentile_ms(self, fraction: float) -> float:
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))] * 1e3

    def latency_text(self) -> str:
        return (f"p50 {self.percentile_ms(0.50):.1f} ms, p99 {self.percentile_ms(0.99):.1f} ms, "
                f"max {self.percentile_ms(1.0):.1f} ms")

    def client_text(self) -> str:
        busiest = max(self.client_cpu, default=0.0) / self.seconds if self.seconds else 0.0
        return f"client: {len(self.client_cpu)} processes, the busiest at {busiest:.0%} of a core"

    def problems(self) -> str:
        parts = [f"HTTP {status} x{count:,}" for status, count in sorted(self.statuses.items()) if status >= 400]
        parts += [f"{name} x{count:,}" for name, count in self.failures.most_common()]
        text = ", ".join(parts)
        for status, body in sorted(self.samples.items()):
            text += f"\n    e.g. {status}: {body[:300]}"
        return text


@dataclass(frozen=True)
class Job:
    url: str
    plan: Plan
    seconds: float
    clients: int        # this worker's connections
    first_slot: int     # the worker's first client number in the phase
    slots: int          # the phase's clients in all: request n of client c is number n * slots + c
    timeout: float
    limit: int | None = None    # stop before request number `limit`: each request once


async def drive(job: Job) -> Outcome:
    parts = urlsplit(job.url)
    outcome = Outcome()
    started = trio.current_time()
    deadline = started + job.seconds
    finished = started

    async def client(slot: int) -> None:
        nonlocal finished
        n = 0
        while trio.current_time() < deadline:
            try:
                stream = await trio.open_tcp_stream(parts.hostname, parts.port)
            except OSError as err:
                outcome.failures[type(err).__name__] += 1
                await trio.sleep(0.1)
                continue
            connection = Connection(stream)
            async with stream:
                try:
                    while trio.current_time() < deadline and not connection.closing:
                        number = n * job.slots + slot
                        if job.limit is not None and number >= job.limit:
                            return
                        request = job.plan.request(number)
                        n += 1
                        sent = time.perf_counter()
                        with trio.fail_after(job.timeout):
                            status, body = await connection.exchange(request)
                        outcome.latencies.append(time.perf_counter() - sent)
                        outcome.requests += 1
                        outcome.statuses[status] += 1
                        if status >= 400 and status not in outcome.samples:
                            outcome.samples[status] = body.decode(errors="replace")
                        finished = max(finished, trio.current_time())
                except (ConnectionError, trio.BrokenResourceError, trio.TooSlowError, OSError) as err:
                    outcome.failures[type(err).__name__] += 1   # reconnect (the server ended keep-alive)

    cpu = time.process_time()
    async with trio.open_nursery() as nursery:
        for slot in range(job.first_slot, job.first_slot + job.clients):
            nursery.start_soon(client, slot)
    outcome.seconds = finished - started
    outcome.client_cpu.append(time.process_time() - cpu)
    return outcome


def _worker(pipe) -> None:
    while True:
        job = pipe.recv()
        if job is None:
            return
        pipe.send(trio.run(drive, job))


class LoadClients:
    """`processes` spawned worker processes; `await run(...)` runs one phase on them."""

    def __init__(self, processes: int) -> None:
        context = multiprocessing.get_context("spawn")
        self._pipes = []
        self._processes = []
        for _ in range(processes):
            parent, child = context.Pipe()
            process = context.Process(target=_worker, args=(child,), daemon=True)
            process.start()
            self._pipes.append(parent)
            self._processes.append(process)

    async def run(self, url: str, plan: Plan, seconds: float, clients: int, timeout: float = 60.0,
                  limit: int | None = None) -> Outcome:
        """`clients` keep-alive connections in all, spread over the processes, for `seconds` (or until requests
        0 .. limit - 1 are answered)."""
        workers = min(clients, len(self._pipes))
        jobs, first = [], 0
        for index in range(workers):
            count = clients // workers + (1 if index < clients % workers else 0)
            jobs.append(Job(url, plan, seconds, count, first, clients, timeout, limit))
            first += count
        outcome = Outcome()

        async def one(pipe, job: Job) -> None:
            pipe.send(job)
            outcome.merge(await trio.to_thread.run_sync(pipe.recv, abandon_on_cancel=True))

        async with trio.open_nursery() as nursery:
            for pipe, job in zip(self._pipes, jobs):
                nursery.start_soon(one, pipe, job)
        return outcome

    def close(self) -> None:
        for pipe in self._pipes:
            try:
                pipe.send(None)
            except OSError:
                pass
        for process in self._processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()

    def __enter__(self) -> LoadClients:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
