"""The window the effect fence leaves (inbox_actors/cluster/effect_fence.py): how long from the check that the node
still holds the workspace to the send's bytes leaving the process, for platform sends made by the service's own Cloud
API client. A node frozen inside that window past its margin (2 s) could still send after another node took over.

    .venv/bin/python scripts/effect_window.py                      # 2,000 sends one at a time, then 32 at once
    .venv/bin/python scripts/effect_window.py --sends 5000 --concurrency 1,8,32

A platform of the script's own runs in another process (a blocking socket server, one thread per connection): it
stamps each request with CLOCK_MONOTONIC, which every process on the machine shares, as its first bytes reach it, and
answers Meta's success body. The client stamps each send as the fence is checked (the client's own check, right before
its write, wrapped to stamp the time). The difference is an upper bound of the window: it adds the loopback's delivery
and the receiving thread's wake-up to the check-to-write time. A second figure, from the check to the call that
writes (the connection's `send_all`, entered with no scheduling point after the check), is the window's own part in
this process. Prints, per concurrency, the median, the 99th percentile and the largest of both, in microseconds.
"""

from __future__ import annotations

import argparse
import contextvars
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio
from harness.options import script_parser

from inbox_actors.outbound_http import connections
from inbox_actors.platform import client as client_module
from inbox_actors.platform.client import CloudApiClient
from inbox_actors.platform.payloads import SendAccepted, SendRequest
from persistence.statement_fence import StatementFence, fencing_statements

# The platform: stamps every request's arrival (its first bytes) with its id, answers Meta's success body.
PLATFORM = r"""
import socket, sys, threading, time
stamps = open(sys.argv[1], "w", buffering=1)
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", 0))
server.listen(256)
print(server.getsockname()[1], flush=True)
ANSWER = b'{"messaging_product":"whatsapp","contacts":[{"input":"1","wa_id":"1"}],"messages":[{"id":"wamid.w"}]}'
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(ANSWER)
def serve(connection):
    buffer = b""
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            return
        arrived = time.monotonic_ns()
        if not buffer:
            first = arrived
        buffer += chunk
        while b"\r\n\r\n" in buffer:
            head, _, rest = buffer.partition(b"\r\n\r\n")
            length = int([line.split(b":")[1] for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length")][0])
            if len(rest) < length:
                break
            body, buffer = rest[:length], rest[length:]
            marker = body.split(b"window-")[1].split(b'"')[0].decode()
            stamps.write(f"{marker} {first}\n")
            first = arrived
            connection.sendall(HEAD + ANSWER)
while True:
    connection, _ = server.accept()
    threading.Thread(target=serve, args=(connection,), daemon=True).start()
"""

_send_index: contextvars.ContextVar[int] = contextvars.ContextVar("send_index")


def measure(concurrency: int, sends: int, port: int, stamps_path: Path) -> tuple[list[float], list[float]]:
    """(check -> arrival at the platform, check -> send_all) in microseconds, one per send."""
    checked: dict[int, int] = {}
    writing: dict[int, int] = {}
    real_check = client_module.check_effect
    real_exchange = connections.exchange

    def stamped_check() -> None:
        real_check()
        checked[_send_index.get()] = time.monotonic_ns()

    async def stamped_exchange(connection, request, body, **kwargs):
        stream = connection.stream
        original = stream.send_all

        async def send_all(data):
            writing.setdefault(_send_index.get(), time.monotonic_ns())
            stream.send_all = original
            await original(data)

        stream.send_all = send_all
        return await real_exchange(connection, request, body, **kwargs)

    client_module.check_effect = stamped_check
    connections.exchange = stamped_exchange
    offset = int(time.time() * 1000) % 1_000_000 * 1000 + concurrency * 100_000_000

    async def run() -> None:
        # A fence that holds (the node is one of a cluster, so the check runs in full).
        fence = StatementFence(1, 1, lambda workspace: 1, in_database=True)
        async with CloudApiClient(f"http://127.0.0.1:{port}", "token", max_concurrent=concurrency) as platform:
            await platform.open_ahead()
            limiter = trio.Semaphore(concurrency)

            async def one(n: int) -> None:
                async with limiter:
                    _send_index.set(offset + n)
                    with fencing_statements(fence):
                        answer = await platform.send("100", SendRequest(to="1", text=f"window-{offset + n}"))
                    assert isinstance(answer, SendAccepted), answer

            async with trio.open_nursery() as nursery:
                for n in range(sends):
                    nursery.start_soon(one, n)

    try:
        trio.run(run)
    finally:
        client_module.check_effect = real_check
        connections.exchange = real_exchange
    arrived = {}
    for line in stamps_path.read_text().splitlines():
        marker, stamp = line.split()
        arrived[int(marker)] = int(stamp)
    to_platform = [(arrived[n] - checked[n]) / 1000 for n in checked if n in arrived]
    to_write = [(writing[n] - checked[n]) / 1000 for n in checked if n in writing]
    return to_platform, to_write


def describe(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"median {statistics.median(ordered):.0f}, p99 {p99:.0f}, max {ordered[-1]:.0f} µs"


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--sends", type=int, default=2000, help="sends per concurrency (2000)")
    parser.add_argument("--concurrency", default="1,32", help="sends at the platform at once, comma-separated (1,32)")
    args: argparse.Namespace = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="inbox-effect-window-") as work:
        stamps_path = Path(work) / "stamps"
        platform = subprocess.Popen([sys.executable, "-c", PLATFORM, str(stamps_path)], stdout=subprocess.PIPE,
                                    text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        try:
            port = int(platform.stdout.readline())
            print(f"{os.cpu_count()} cores; {args.sends:,} sends per run, plain HTTP on loopback")
            for concurrency in (int(value) for value in args.concurrency.split(",")):
                to_platform, to_write = measure(concurrency, args.sends, port, stamps_path)
                print(f"{concurrency:>3} at once: check -> write call {describe(to_write)}; "
                      f"check -> bytes at the platform {describe(to_platform)} ({len(to_platform):,} sends)")
        finally:
            platform.kill()
            platform.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
