"""A balancer that knows workspaces, in front of a script's nodes: Debian's HAProxy sending each request to the node
that holds its workspace, as docs/nodes.md ("Sending each workspace to its node") sets it up, so that few requests
are relayed from node to node.

A node of a cluster names itself in `X-Inbox-Node` on every answer it serves for a workspace it holds (relayed or
not: inbox_http/cluster/routing.py). HAProxy reads what it can of a request's workspace (the platform's webhook by
its `phone_number_id`, an API call by its key, hashed), remembers from the answer which node served it, and sends
that workspace's next requests to that node; a request it knows nothing of yet goes to the node with the fewest
connections, which relays it if need be. No health checks here: a script's nodes stay up, and the one-node runs it
is compared with have none either.

Its CPU is measured with the rest (psutil): the balancer is part of what a second node costs.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import trio

from harness.meters import psutil_cpu_seconds
from harness.processes import ROOT, CannotRun

BALANCER = "balancer"
STARTUP_SECONDS = 10.0
# Where scripts/haproxy leaves one it unpacked without root.
_UNPACKED = ROOT / ".venv" / "share" / "haproxy" / "haproxy"


def find_haproxy() -> str | None:
    for candidate in (shutil.which("haproxy"), "/usr/sbin/haproxy", str(_UNPACKED)):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def config(port: int, node_urls: list[str], workspaces_map: Path) -> str:
    """HAProxy listening on 127.0.0.1:`port` in front of the nodes (their own addresses, which are also their
    names), sending each workspace's requests to the node that last named itself on one of its answers."""
    servers = [(f"node{n}", url) for n, url in enumerate(node_urls, start=1)]
    lines = [
        "global",
        "    maxconn 4096",
        "defaults",
        "    mode http",
        "    timeout connect 5s",
        "    timeout client 60s",
        "    timeout server 60s",
        "    timeout http-request 10s",
        "    timeout http-keep-alive 10s",
        "frontend inbox",
        f"    bind 127.0.0.1:{port}",
        *ROUTING_FRONTEND,
        "    default_backend nodes",
        "backend nodes",
        "    balance leastconn",
        *routing_backend(workspaces_map, servers),
        *(f"    server {name} {url.removeprefix('http://')}" for name, url in servers),
    ]
    return "\n".join(lines) + "\n"


# The lines docs/nodes.md adds to its HAProxy example, in the frontend and the backend.
ROUTING_FRONTEND = [
    "    option http-buffer-request",
    "    http-request set-var(txn.workspace) req.body,json_query('$.entry[0].changes[0].value.metadata."
    "phone_number_id') if METH_POST { path /webhooks/whatsapp }",
    "    http-request set-var(txn.workspace) req.hdr(authorization),xxh3 if !{ var(txn.workspace) -m found }"
    " { req.hdr(authorization) -m beg \"Bearer inbox_\" }",
]


def routing_backend(workspaces_map: Path, servers: list[tuple[str, str]]) -> list[str]:
    return [
        f"    http-request set-var(txn.node) var(txn.workspace),map({workspaces_map}) if {{ var(txn.workspace)"
        " -m found }",
        *(f"    use-server {name} if {{ var(txn.node) -m str {url} }}" for name, url in servers),
        f"    http-response set-map({workspaces_map}) %[var(txn.workspace)] %[res.hdr(x-inbox-node)] if"
        " { var(txn.workspace) -m found } { res.hdr(x-inbox-node) -m found }",
        "    http-response del-header x-inbox-node",
    ]


@dataclass
class Balancer:
    url: str
    process: trio.Process

    def cpu_seconds(self) -> float | None:
        return psutil_cpu_seconds(self.process.pid)


@contextlib.asynccontextmanager
async def running_balancer(port: int, node_urls: list[str], work_dir: Path) -> AsyncIterator[Balancer]:
    """HAProxy up on `port` (accepting connections), in front of the nodes; stopped on the way out."""
    binary = find_haproxy()
    if binary is None:
        raise CannotRun("--balancer needs HAProxy: apt-get install haproxy (or scripts/haproxy)")
    work_dir.mkdir(parents=True, exist_ok=True)
    workspaces_map = work_dir / "workspaces.map"
    workspaces_map.write_text("")
    path = work_dir / "haproxy.cfg"
    path.write_text(config(port, node_urls, workspaces_map))
    with open(work_dir / "haproxy.log", "wb") as log:
        process = await trio.lowlevel.open_process([binary, "-f", str(path), "-db"], stdout=log,
                                                   stderr=subprocess.STDOUT)
    try:
        await _accepting(port, process, work_dir / "haproxy.log")
        yield Balancer(f"http://127.0.0.1:{port}", process)
    finally:
        with trio.CancelScope(shield=True):
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
                with trio.move_on_after(10):
                    await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


async def _accepting(port: int, process: trio.Process, log: Path) -> None:
    with trio.move_on_after(STARTUP_SECONDS):
        while process.returncode is None:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    return
            await trio.sleep(0.05)
    raise CannotRun(f"HAProxy did not listen on {port} within {STARTUP_SECONDS:g} s:\n"
                    f"{log.read_text(errors='replace')[-2000:]}")
