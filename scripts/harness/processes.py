"""The processes a script starts (the service, the platform simulator, a bare app): started with the command and
environment they need, ready once they print their ready line, stopped with SIGINT and waited for, their stderr
kept in a log whose warnings are shown. Every script stops what it started, Ctrl-C and failures included."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import trio

from harness.meters import psutil_cpu_seconds

ROOT = Path(__file__).resolve().parents[2]


class CannotRun(RuntimeError):
    """The load cannot start: the service or the simulator did not start, or the simulator does not answer."""


@dataclass
class Child:
    """A process the script starts and stops: its ready line read from stdout, its stderr kept in a log."""

    name: str                        # "service" or "simulator", in messages
    command: list[str]
    env: dict[str, str]
    log_path: Path
    process: trio.Process | None = None
    ready: dict = field(default_factory=dict)
    killed: bool = False             # it did not stop by itself

    async def start(self, startup_timeout: float) -> None:
        """Started and ready (its ready line read); stopping it is the caller's."""
        with open(self.log_path, "wb") as log:
            self.process = await trio.lowlevel.open_process(self.command, stdout=subprocess.PIPE, stderr=log,
                                                            env=self.env, cwd=ROOT)
        self.ready = await read_ready_line(self, startup_timeout)

    @contextlib.asynccontextmanager
    async def running(self, startup_timeout: float) -> AsyncIterator[Child]:
        """Started and ready; on the way out (cancelled too) stopped with SIGINT and waited for."""
        try:
            await self.start(startup_timeout)
            yield self
        finally:
            if self.process is not None:
                with trio.CancelScope(shield=True):
                    self.killed = not await stop_process(self.process)
                show_log_problems(self)

    def cpu_seconds(self) -> float | None:
        return None if self.process is None else psutil_cpu_seconds(self.process.pid)


async def read_ready_line(child: Child, timeout: float) -> dict:
    buffer = b""
    with trio.move_on_after(timeout):
        while b"\n" not in buffer:
            chunk = await child.process.stdout.receive_some(65536)
            if not chunk:
                break
            buffer += chunk
    line = buffer.split(b"\n", 1)[0]
    try:
        ready = json.loads(line)
        if ready.get("status") == "ready":
            return ready
    except json.JSONDecodeError:
        pass
    tail = child.log_path.read_text(errors="replace")[-2000:]
    raise CannotRun(f"no ready line from the {child.name} within {timeout:g} s (got {line[:200]!r}); "
                    f"log:\n{tail}")


async def stop_process(process: trio.Process) -> bool:
    """SIGINT, then wait (the service: grace for requests and actors, then PostgreSQL's stop); SIGTERM after a
    minute, SIGKILL after another half minute. True when it stopped by itself."""
    for stop, patience in ((signal.SIGINT, 60), (signal.SIGTERM, 30)):
        if process.returncode is None:
            process.send_signal(stop)
            with trio.move_on_after(patience):
                await process.wait()
    if process.returncode is None:
        process.kill()
        await process.wait()
        return False
    return True


def show_log_problems(child: Child) -> None:
    try:
        lines = [line for line in child.log_path.read_text(errors="replace").splitlines()
                 if " WARNING " in line or " ERROR " in line or "Traceback" in line]
    except OSError:
        return
    lines = [line for line in lines if "granting other users traversal" not in line]
    if lines:
        print(f"the {child.name} logged {len(lines)} warnings or errors; the last ones:", file=sys.stderr)
        for line in lines[-5:]:
            print(f"  {line[:300]}", file=sys.stderr)


def free_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1 just now, all different (held open together); should another process take one
    before its server binds it, that server does not start and says so in its log."""
    with contextlib.ExitStack() as held:
        sockets = [held.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]


# -- the service ----------------------------------------------------------------------------------------------


def cli_command() -> list[str]:
    for candidate in (ROOT / ".venv" / "bin" / "inbox-actors", Path(sys.executable).with_name("inbox-actors")):
        if candidate.exists():
            return [str(candidate)]
    return [sys.executable, "-m", "inbox_http.cli"]


def service_env(data_dir: Path, platform_env: dict[str, str] | None = None) -> dict[str, str]:
    """The caller's environment less its database, platform, port and nodes (a script's service must not reach the
    caller's), plus `platform_env` (a separate simulator's URL and secrets)."""
    env = {**os.environ, "INBOX_DATA_DIR": str(data_dir),
           "INBOX_LOG_LEVEL": os.environ.get("INBOX_LOG_LEVEL", "WARNING")}
    for name in ("DATABASE_URL", "WHATSAPP_API_URL", "INBOX_PORT", "INBOX_NODES", "INBOX_NODE_URL", "INBOX_NODE_PORT",
                 "INBOX_REUSE_PORT"):
        env.pop(name, None)
    return {**env, **(platform_env or {})}


def service_child(url: str, work_dir: Path, name: str = "service", port: int = 0,
                  extra_env: dict[str, str] | None = None) -> Child:
    """`inbox-actors serve --port <port>` (0: one picked at start) on `url`, allowed to post to 127.0.0.1, log in
    `<work_dir>/<name>.log`; `extra_env` on top (a cluster's secret, say)."""
    env = {**service_env(work_dir / "service"), "DATABASE_URL": url,
           "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8", "INBOX_IP_LIMIT_PER_MINUTE": "1000000", **(extra_env or {})}
    return Child(name, [*cli_command(), "serve", "--port", str(port)], env, work_dir / f"{name}.log")


@dataclass
class RestartableService:
    """The service on a fixed port (a separate simulator posts there), started again after each SIGKILL: the
    crash checks' service, one log per start."""

    port: int
    env: dict[str, str]
    work_dir: Path
    startup_timeout: float = 120.0
    child: Child | None = None
    starts: int = 0
    started_at: float = 0.0             # trio time the current incarnation answered ready
    up: trio.Event = field(default_factory=trio.Event)

    async def start(self) -> None:
        self.starts += 1
        self.child = Child(f"service (start {self.starts})", [*cli_command(), "serve", "--port", str(self.port)],
                           self.env, self.work_dir / f"service-{self.starts}.log")
        await self.child.start(self.startup_timeout)
        self.started_at = trio.current_time()
        self.up.set()

    async def kill(self) -> None:
        self.up = trio.Event()
        self.child.process.kill()           # SIGKILL: no shutdown, no drain
        await self.child.process.wait()

    async def stop(self) -> None:
        if self.child is not None and self.child.process.returncode is None:
            self.child.killed = not await stop_process(self.child.process)
            show_log_problems(self.child)
