"""The service as a load script starts it itself, and what the script reads of it besides its answers.

Two ways to start it:

- `spawned_demo`: `inbox-actors serve --demo --port 0` alone, on a fresh embedded PostgreSQL of its own (durable, as
  the service runs it) in a temporary INBOX_DATA_DIR, removed once PostgreSQL has stopped; its demo workspace.
- `spawned_nodes`: `inbox-actors serve --nodes N` on a database of the run's own on harness.postgres's server
  (embedded, durability off, or --database-url's), migrated and dropped, holding W workspaces: each a Scale
  workspace with its own business number (phone_number_id, which the simulator takes as it comes), a full-access key
  whose limit nothing reaches (harness.workspace) and the bot's FAQ answers given (the demo's), added the way the
  demo and `inbox-actors bot add` add them. With N = 1 the service is one process; with N > 1 a parent (its small
  pool, the built-in simulator if any) and N node processes behind one port, which its ready line lists with their
  pids (inbox_http/cluster/node_launcher.py). `each_node_count` runs one of these for each N of a comparison in turn.

Either way the platform is `inbox-actors simulator` in a process of its own (harness.simulator's SeparateSimulator),
started after the service and stopped before it (it holds keep-alive connections to the service, which would wait
its whole shutdown grace for them), or the service's built-in one; both accept the given sends a second per business
number, the service's pace (WHATSAPP_SENDS_PER_SECOND).

What is read of them (`SpawnedService.measured`): the CPU time each process started spent (psutil; PostgreSQL with
its backends), and from each node's own /metrics the requests it relayed to another node, those its app answered,
and the workspaces it holds.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import httpx
import trio_asyncio

from harness.meters import psutil_cpu_seconds, tree_cpu_seconds
from harness.postgres import bench_database
from harness.processes import Child, cli_command, service_env
from harness.simulator import SeparateSimulator
from harness.workspace import Workspace, make_workspace
from inbox_actors.conversations import bot
from persistence.database import Database

POSTGRES = "PostgreSQL"
SIMULATOR = "simulator"
T = TypeVar("T")


@dataclass(frozen=True)
class NodesPlan:
    """The runs a script asks for: `serve --nodes N` for each of `counts` in turn, each with `workspaces`."""

    counts: tuple[int, ...]
    workspaces: int
    separate_simulator: bool
    sends_per_second: int
    startup_timeout: float


@dataclass(frozen=True)
class NodeFigures:
    """Summed over the nodes: requests relayed to the workspace's node, and requests their apps answered (each
    request once, on the node that served it); the workspaces each node holds, in the ready line's order."""

    relayed: int = 0
    answered: int = 0
    held: tuple[int, ...] = ()

    def since(self, before: NodeFigures) -> NodeFigures:
        return NodeFigures(self.relayed - before.relayed, self.answered - before.answered, self.held)


@dataclass(frozen=True)
class Spent:
    """What a piece of work cost: the CPU seconds of each process started, by name, over `seconds` of wall time,
    and the nodes' counts."""

    cpu: dict[str, float | None]
    seconds: float
    service_names: tuple[str, ...]       # the service's processes among them (the parent and each node)
    nodes: NodeFigures | None            # None: not `serve --nodes`

    @property
    def service(self) -> float | None:
        spent = [self.cpu[name] for name in self.service_names]
        return None if None in spent else sum(spent)

    @property
    def postgres(self) -> float | None:
        return self.cpu.get(POSTGRES)

    @property
    def simulator(self) -> float | None:
        return self.cpu.get(SIMULATOR)


@dataclass
class SpawnedService:
    service: Child
    simulator: Child | None              # None: the service's built-in one
    postgres_pid: int | None             # None: not known (--database-url's server, or not started yet)
    workspaces: list[Workspace]
    nodes: int | None = None             # `serve --nodes N`; None: `serve --demo`
    node_urls: list[str] = field(default_factory=list)   # each node's own address (the service's, with one)

    @property
    def url(self) -> str:
        return self.service.ready["url"]

    @property
    def simulator_url(self) -> str:
        return self.simulator.ready["url"] if self.simulator is not None else self.service.ready["platform"]

    def service_pids(self) -> dict[str, int]:
        """`service` alone, or the parent `serve` and `node-1`.. as its ready line lists them."""
        listed = self.service.ready.get("nodes")
        if not listed:
            return {"service": self.service.process.pid}
        return {"serve": self.service.process.pid,
                **{f"node-{index}": node["pid"] for index, node in enumerate(listed, start=1)}}

    def describe(self) -> str:
        pids = ", ".join(f"{name} {pid}" for name, pid in self.service_pids().items())
        return (f"ready at {self.url} (pids {pids}), {len(self.workspaces)} workspace(s), simulator "
                f"{self.simulator_url}{', in a process of its own' if self.simulator else ''}")

    def cpu_seconds(self) -> dict[str, float | None]:
        """CPU time so far of every process started, by name: the service's (each node), PostgreSQL (its backends
        included), the simulator. None where it cannot be read (no psutil, a node started again since)."""
        spent = {name: psutil_cpu_seconds(pid) for name, pid in self.service_pids().items()}
        if self.postgres_pid is not None:
            spent[POSTGRES] = tree_cpu_seconds(self.postgres_pid)
        if self.simulator is not None:
            spent[SIMULATOR] = self.simulator.cpu_seconds()
        return spent

    async def node_figures(self) -> NodeFigures:
        """Read from each node's own /metrics (from loopback: no operator token needed)."""
        relayed = answered = 0
        held = []
        async with httpx.AsyncClient(timeout=10) as client:
            for url in self.node_urls:
                metrics = parse_metrics((await client.get(f"{url}/metrics")).text)
                relayed += int(metrics.get('inbox_node_requests_total{way="relayed"}', 0))
                answered += int(sum(value for name, value in metrics.items()
                                    if name.startswith("inbox_http_requests_total{")))
                held.append(int(metrics.get("inbox_node_workspaces_held", 0)))
        return NodeFigures(relayed, answered, tuple(held))

    async def measured(self, work: Callable[[], Awaitable[T]]) -> tuple[T, Spent]:
        """`work()`, and what it cost (the nodes' counts read outside the CPU's window, so not counted in it)."""
        nodes_before = await self.node_figures()
        cpu_before, started = self.cpu_seconds(), time.perf_counter()
        result = await work()
        cpu, seconds = cpu_since(self.cpu_seconds(), cpu_before), time.perf_counter() - started
        nodes = (await self.node_figures()).since(nodes_before)
        return result, Spent(cpu, seconds, tuple(self.service_pids()), nodes if self.nodes is not None else None)


def cpu_since(after: dict[str, float | None], before: dict[str, float | None]) -> dict[str, float | None]:
    return {name: None if value is None or before.get(name) is None else value - before[name]
            for name, value in after.items()}


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus' text format: each sample's name with its labels, as written, and its value."""
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            try:
                samples[name] = float(value)
            except ValueError:
                continue
    return samples


# -- `serve --demo` alone ---------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def spawned_demo(*, separate_simulator: bool, sends_per_second: int,
                       startup_timeout: float) -> AsyncIterator[SpawnedService]:
    """`serve --demo` on a fresh embedded PostgreSQL in a temporary INBOX_DATA_DIR, and its simulator, up and ready;
    on the way out each stopped with SIGINT and waited for, then the data directory removed."""
    data_dir = Path(tempfile.mkdtemp(prefix="inbox-load-"))
    platform = SeparateSimulator.on_free_ports() if separate_simulator else None
    port = platform.service_port if platform else 0
    service = Child("service", [*cli_command(), "serve", "--demo", "--port", str(port)],
                    {**service_env(data_dir, platform.service_env() if platform else None),
                     **pace_env(sends_per_second, builtin_simulator=platform is None)}, data_dir / "serve.log")
    simulator = None if platform is None else simulator_child(platform, sends_per_second, dict(os.environ), data_dir)
    try:
        async with running(service, simulator, startup_timeout):
            demo = service.ready["demo"]
            yield SpawnedService(service, simulator, postgres_pid(data_dir),
                                 [Workspace(demo["workspace_id"], demo["phone_number_id"], demo["key"])])
    finally:
        remove_data_dir(data_dir, [child for child in (service, simulator) if child is not None])


def postgres_pid(data_dir: Path) -> int | None:
    """The service's embedded PostgreSQL, which it started in its data directory."""
    try:
        return int((data_dir / "pg" / "postmaster.pid").read_text().split()[0])
    except (OSError, IndexError, ValueError):
        return None


def remove_data_dir(data_dir: Path, children: list[Child]) -> None:
    if any(child.killed for child in children) or (data_dir / "pg" / "postmaster.pid").exists():
        print(f"the service, its PostgreSQL or the simulator may still run; left {data_dir} in place",
              file=sys.stderr)
    else:
        shutil.rmtree(data_dir, ignore_errors=True)


# -- `serve --nodes N` with W workspaces ---------------------------------------------------------------------


async def each_node_count(plan: NodesPlan, answers: Sequence[tuple[list[str], str]], server_url: str,
                          postgres: int | None, work_dir: Path, run: Callable[[SpawnedService], Awaitable[T]]
                          ) -> list[T]:
    """`run(spawned)` on `serve --nodes N` for each N of the plan in turn, each on a fresh database with its
    workspaces, everything stopped and the database dropped before the next."""
    results = []
    for index, count in enumerate(plan.counts, start=1):
        async with spawned_nodes(server_url, postgres, work_dir / f"run-{index}",
                                 f"inbox_bench_load_{os.getpid()}_{index}", nodes=count, workspaces=plan.workspaces,
                                 answers=answers, sends_per_second=plan.sends_per_second,
                                 separate_simulator=plan.separate_simulator,
                                 startup_timeout=plan.startup_timeout) as spawned:
            print(f"`serve --nodes {count}` {spawned.describe()}", file=sys.stderr, flush=True)
            results.append(await run(spawned))
    return results


@contextlib.asynccontextmanager
async def spawned_nodes(server_url: str, postgres: int | None, work_dir: Path, database: str, *, nodes: int,
                        workspaces: int, answers: Sequence[tuple[list[str], str]], sends_per_second: int,
                        separate_simulator: bool, startup_timeout: float) -> AsyncIterator[SpawnedService]:
    """The database `database` with its workspaces, `serve --nodes <nodes>` on it and its simulator, up and ready
    (with a loop for asyncpg opened here); on the way out each stopped with SIGINT (every node drains) and waited
    for, then the database dropped."""
    work_dir.mkdir(parents=True, exist_ok=True)
    async with trio_asyncio.open_loop():
        async with bench_database(server_url, database) as (url, db):
            made = [await bot_workspace(db, f"Load workspace {n}", answers) for n in range(1, workspaces + 1)]
            platform = SeparateSimulator.on_free_ports() if separate_simulator else None
            env = {**service_env(work_dir / "service", platform.service_env() if platform else None),
                   "DATABASE_URL": url, **pace_env(sends_per_second, builtin_simulator=platform is None)}
            env.pop("INBOX_HEALTH_TOKEN", None)   # each node's /metrics read from loopback, no token
            port = platform.service_port if platform else 0
            service = Child("service", [*cli_command(), "serve", "--port", str(port), "--nodes", str(nodes)], env,
                            work_dir / "serve.log")
            simulator = None if platform is None else simulator_child(platform, sends_per_second, env, work_dir)
            async with running(service, simulator, startup_timeout):
                listed = service.ready.get("nodes") or [{"url": service.ready["url"]}]
                yield SpawnedService(service, simulator, postgres, made, nodes, [node["url"] for node in listed])


async def bot_workspace(db: Database, name: str, answers: Sequence[tuple[list[str], str]]) -> Workspace:
    """harness.workspace's Scale workspace, key and admin, with the bot's `answers` (keywords, answer)."""
    workspace = await make_workspace(db, name)
    for keywords, answer in answers:
        await bot.add_answer(db, workspace_id=workspace.workspace_id, keywords=keywords, answer=answer)
    return workspace


# -- either way ------------------------------------------------------------------------------------------------


def pace_env(sends_per_second: int, *, builtin_simulator: bool) -> dict[str, str]:
    """The service's send pace per business number, and its built-in simulator's throughput (taken from the
    service's environment)."""
    pace = {"WHATSAPP_SENDS_PER_SECOND": str(sends_per_second)}
    if builtin_simulator:
        pace["INBOX_SIMULATOR_THROUGHPUT"] = str(sends_per_second)
    return pace


def simulator_child(platform: SeparateSimulator, sends_per_second: int, env: dict[str, str],
                    log_dir: Path) -> Child:
    # A later --throughput wins over the one command() may take from INBOX_SIMULATOR_THROUGHPUT.
    return Child(SIMULATOR, [*platform.command(), "--throughput", str(sends_per_second)], env,
                 log_dir / "simulator.log")


@contextlib.asynccontextmanager
async def running(service: Child, simulator: Child | None, startup_timeout: float) -> AsyncIterator[None]:
    """The service, then the simulator, started and ready; stopped the other way round."""
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(service.running(startup_timeout))
        if simulator is not None:
            await stack.enter_async_context(simulator.running(startup_timeout))
        yield
