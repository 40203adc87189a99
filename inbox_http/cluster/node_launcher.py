"""`inbox-actors serve --nodes N`: N node processes on this machine, one database, one platform, one service port.

The `serve` process becomes their parent. It opens the database once (migrating it, seeding the demo), runs the one
built-in simulator all nodes send through, and starts each node as `inbox-actors serve` of its own, told by its
environment to bind the shared service port with SO_REUSEPORT (the kernel spreads connections over the nodes) and a
port of its own, which names it in the workspace leases (Settings.node_name). A node that dies is started again on
the same port, so under the same name, and takes its workspaces back at once instead of after their leases expire.
On SIGINT or SIGTERM every node gets SIGTERM and drains; then the simulator and the database stop.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import partial

import msgspec
import trio

from inbox_actors.access.demo_workspace import DemoAccess, seed_demo
from inbox_actors.platform.simulator.model import Simulator, SimulatorConfig
from inbox_actors.platform.simulator.rules import StatusDelays
from inbox_actors.platform.simulator.server import serve_simulator
from inbox_actors.platform.stored_templates import StoredTemplateCatalog
from inbox_actors.runtime.stop_signal import set_on_stop_signal
from inbox_http.settings import Settings
from persistence.database import Database, open_database_loop
from persistence.startup import open_database

log = logging.getLogger("inbox_http.cluster.node_launcher")

NODE_COMMAND = [sys.executable, "-m", "inbox_http.cli", "serve"]
# The parent's own queries are few (the demo seed, the simulator's template look-ups): a small pool.
PARENT_POOL_SIZE = 4
FIRST_RESTART_DELAY = 1.0
MAX_RESTART_DELAY = 30.0
# Beyond the nodes' own grace and drain periods, time to start up the shutdown and release their leases.
STOP_MARGIN_SECONDS = 10.0
# A line of a node's output is passed on whole up to this size, in pieces beyond (the buffer stays bounded).
MAX_LINE_BYTES = 64 * 1024


@dataclass
class Node:
    index: int
    port: int
    url: str                        # its own address, and its name in the workspace leases
    pid: int | None = None
    ready_once: bool = False        # it has been ready at least once: from then on, an exit means a restart

    @property
    def label(self) -> str:
        return f"node-{self.index}"


@dataclass
class Launch:
    """What every node's supervisor shares: how to start a node, and how the whole run is going."""
    environment: dict[str, str]     # of every node, but its own port
    stop_timeout: float
    count: int
    stop: trio.Event = field(default_factory=trio.Event)
    # Every node ready, or the start given up (a node exited before it was ever ready, or a stop signal came).
    settled: trio.Event = field(default_factory=trio.Event)
    failure: str | None = None
    ready_lines: list[dict] = field(default_factory=list)

    def node_ready(self, node: Node, line: dict) -> None:
        if node.ready_once:
            log.info("%s is serving again on %s (pid %s)", node.label, node.url, node.pid)
            return
        node.ready_once = True
        self.ready_lines.append(line)
        if len(self.ready_lines) == self.count:
            self.settled.set()

    def fail(self, reason: str) -> None:
        if self.failure is None and not self.stop.is_set():
            self.failure = reason
        self.stop.set()
        self.settled.set()


async def run_nodes(settings: Settings, count: int, *, demo: bool = False,
                    on_ready: Callable[[dict], None] | None = None) -> str | None:
    """Run `count` nodes until SIGINT or SIGTERM (None then), or until one fails to start (why, then)."""
    async with open_database_loop():
        # The embedded server, when there is no DATABASE_URL, is started (and migrated) here, once; the nodes get its
        # URL and so leave its start and stop to this process.
        async with open_database(url=settings.database_url, data_dir=settings.data_dir,
                                 pool_size=PARENT_POOL_SIZE) as db:
            demo_access = await seed_demo(db) if demo else None
            async with trio.open_nursery() as nursery:
                stop_timeout = settings.shutdown_grace_seconds + settings.drain_seconds + STOP_MARGIN_SECONDS
                launch = Launch(environment={}, stop_timeout=stop_timeout, count=count)
                nursery.start_soon(set_on_stop_signal, launch.stop)
                reservation, service_port = reserve_service_port(settings.host, settings.port)
                try:
                    platform = await start_platform(nursery, settings, db, service_port)
                    launch.environment = node_environment(settings, db.url, service_port, platform)
                    nodes = [Node(index, port, settings.node_name(f"http://{settings.host}:{port}"))
                             for index, port in enumerate(free_ports(settings.host, count), start=1)]
                    async with trio.open_nursery() as supervision:
                        for node in nodes:
                            supervision.start_soon(supervise, node, launch)
                        await launch.settled.wait()
                        # Every node listens on the service port now: it cannot be taken from them.
                        if reservation is not None:
                            reservation.close()
                        if not launch.stop.is_set() and on_ready is not None:
                            on_ready(ready_line(settings, launch, nodes, platform, demo_access))
                    # Every node has stopped: the simulator and the database can go.
                finally:
                    if reservation is not None:
                        reservation.close()
                nursery.cancel_scope.cancel()
    log.info("stopped")
    return launch.failure


def reserve_service_port(host: str, port: int) -> tuple[socket.socket | None, int]:
    """Port 0 means any free port: one is bound here, SO_REUSEPORT like the nodes' (so they can bind it too) but not
    listening (so it takes no connections), and held until the nodes hold it, so nothing else takes it meanwhile."""
    if port != 0:
        return None, port
    reserved = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    reserved.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    reserved.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    reserved.bind((host.strip("[]"), 0))
    return reserved, reserved.getsockname()[1]


def free_ports(host: str, count: int) -> list[int]:
    """`count` distinct ports free now on `host` (all bound at once, so the kernel gives different ones). Each node
    keeps its port for the life of the parent: the port is its name."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    probes = [socket.socket(family, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for probe in probes:
            probe.bind((host.strip("[]"), 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


async def start_platform(nursery: trio.Nursery, settings: Settings, db: Database, service_port: int) -> dict[str, str]:
    """The WHATSAPP_* variables of the nodes: the configured platform's (already in the environment), or those of one
    built-in simulator started here for all of them, with secrets made for this run. It posts to the service port,
    which any node answers (a node relays a webhook to the holder of its number's workspace)."""
    if not settings.uses_simulator:
        return {}
    app_secret, access_token = secrets.token_hex(32), secrets.token_urlsafe(32)
    sent, delivered, read = settings.simulator_status_delays
    webhook_url = f"http://{loopback(settings.host)}:{service_port}/webhooks/whatsapp"
    simulator = Simulator(SimulatorConfig(app_secret=app_secret, access_token=access_token, webhook_url=webhook_url,
                                          delays=StatusDelays(sent=sent, delivered=delivered, read=read),
                                          throughput_per_second=settings.simulator_throughput),
                          catalog=StoredTemplateCatalog(db))
    url = await nursery.start(partial(serve_simulator, simulator, "127.0.0.1", settings.simulator_port))
    log.info("built-in WhatsApp simulator listening on %s, for every node", url)
    return {"WHATSAPP_API_URL": url, "WHATSAPP_APP_SECRET": app_secret, "WHATSAPP_ACCESS_TOKEN": access_token,
            "WHATSAPP_VERIFY_TOKEN": secrets.token_urlsafe(24)}


def loopback(host: str) -> str:
    """Where this machine reaches a service listening on `host` (a wildcard address is no destination)."""
    return {"0.0.0.0": "127.0.0.1", "::": "[::1]", "[::]": "[::1]"}.get(host, host)


def node_environment(settings: Settings, database_url: str, service_port: int,
                     platform: dict[str, str]) -> dict[str, str]:
    """The parent's environment, with what makes each child one node of this run (its own port is added at start)."""
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "INBOX_HOST": settings.host,
        "INBOX_PORT": str(service_port),
        "INBOX_REUSE_PORT": "1",
        "INBOX_NODES": "1",
        # Same on every node (it signs the requests they relay to each other); made up for this run when not set.
        "INBOX_CLUSTER_SECRET": settings.cluster_secret or secrets.token_urlsafe(32),
        **platform,
    }


def ready_line(settings: Settings, launch: Launch, nodes: list[Node], platform: dict[str, str],
               demo_access: DemoAccess | None) -> dict:
    """The lone service's ready line, with the nodes'."""
    url = launch.ready_lines[0]["url"]   # every node reports the shared address it serves
    ready: dict = {"status": "ready", "url": url, "inbox": f"{url}/app/inbox",
                   "database": "external" if settings.database_url else "embedded",
                   "platform": platform.get("WHATSAPP_API_URL", settings.whatsapp_api_url),
                   "simulator": settings.uses_simulator,
                   "nodes": [{"url": node.url, "pid": node.pid} for node in nodes]}
    if demo_access is not None:
        ready["demo"] = msgspec.structs.asdict(demo_access)
    return ready


async def supervise(node: Node, launch: Launch) -> None:
    """Run the node until the stop; started again, on the same port, each time it exits (after a back-off that
    doubles while it keeps failing quickly). A node that exits before it was ever ready fails the whole start: its
    settings or its port are wrong, and trying again would not change that."""
    delay = FIRST_RESTART_DELAY
    while not launch.stop.is_set():
        began = trio.current_time()
        status = await run_once(node, launch)
        if launch.stop.is_set():
            break
        if not node.ready_once:
            launch.fail(f"{node.label} exited {describe(status)} before it was ready (its log above says why)")
            return
        if trio.current_time() - began >= MAX_RESTART_DELAY:
            delay = FIRST_RESTART_DELAY   # it had been running well: a new failure starts the back-off afresh
        log.warning("%s (%s, pid %s) exited %s: starting it again in %g s", node.label, node.url, node.pid,
                    describe(status), delay)
        with trio.move_on_after(delay):
            await launch.stop.wait()
        delay = min(delay * 2, MAX_RESTART_DELAY)
    # Stopped, perhaps during the start, before every node was ready: the start is over either way.
    launch.settled.set()


async def run_once(node: Node, launch: Launch) -> int:
    """One life of the node's process: start it, pass its output on, stop it at the stop; its exit status."""
    process = await trio.lowlevel.open_process(
        NODE_COMMAND, env={**launch.environment, "INBOX_NODE_PORT": str(node.port)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        # Its own process group: a Ctrl-C in the terminal reaches the parent alone, which then stops each node with
        # one SIGTERM (a second signal would end a draining node at once).
        process_group=0)
    node.pid = process.pid
    prefix = f"{node.label}: ".encode()
    try:
        async with trio.open_nursery() as pipes:
            pipes.start_soon(echo_lines, process.stderr, prefix)
            pipes.start_soon(watch_stdout, process.stdout, prefix, partial(launch.node_ready, node))
            async with trio.open_nursery() as stopper:
                stopper.start_soon(stop_at, launch.stop, process, launch.stop_timeout)
                await process.wait()
                stopper.cancel_scope.cancel()
        # The pipes have reached their end: the process's output is all passed on.
    finally:
        with trio.CancelScope(shield=True):
            if process.returncode is None:   # cancelled by a failure of the parent itself: the node goes too
                await stop_process(process, launch.stop_timeout)
            await process.stdout.aclose()
            await process.stderr.aclose()
    return process.returncode


async def stop_at(stop: trio.Event, process: trio.Process, timeout: float) -> None:
    await stop.wait()
    await stop_process(process, timeout)


async def stop_process(process: trio.Process, timeout: float) -> None:
    """SIGTERM: the node drains, then releases its workspaces' leases. SIGKILL if that takes longer than `timeout`:
    its leases then expire instead."""
    process.terminate()
    with trio.move_on_after(timeout):
        await process.wait()
        return
    log.warning("node pid %d still running %g s after SIGTERM: killing it", process.pid, timeout)
    process.kill()
    await process.wait()


async def watch_stdout(stdout: trio.abc.ReceiveStream, prefix: bytes, on_ready: Callable[[dict], None]) -> None:
    """A node prints its ready line on stdout (one JSON object, print_json), and nothing else; anything else is passed
    on to stderr, since the parent's stdout carries its own ready line only."""
    async for line in lines(stdout):
        try:
            parsed = json.loads(line)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("status") == "ready":
            on_ready(parsed)
        else:
            write_stderr(prefix + line + b"\n")


async def echo_lines(stream: trio.abc.ReceiveStream, prefix: bytes) -> None:
    """A node's log, line by line with its prefix, onto the parent's stderr (one write each, so the nodes' lines do
    not interleave mid-line)."""
    async for line in lines(stream):
        write_stderr(prefix + line + b"\n")


async def lines(stream: trio.abc.ReceiveStream) -> AsyncIterator[bytes]:
    """The lines of `stream` without their ends, until it closes; a line longer than MAX_LINE_BYTES in pieces."""
    pending = b""
    async for chunk in stream:
        pending += chunk
        while b"\n" in pending:
            line, _, pending = pending.partition(b"\n")
            yield line
        while len(pending) > MAX_LINE_BYTES:
            yield pending[:MAX_LINE_BYTES]
            pending = pending[MAX_LINE_BYTES:]
    if pending:
        yield pending


def write_stderr(data: bytes) -> None:
    # A blocking write, as the parent's own log lines are: stderr is a terminal or a pipe somebody reads.
    sys.stderr.buffer.write(data)
    sys.stderr.buffer.flush()


def describe(status: int) -> str:
    if status < 0:
        return f"on {signal.Signals(-status).name}"
    return f"with status {status}"
