"""The service as a load script starts it itself, and what the script reads of it besides its answers.

Two ways to start it:

- `spawned_demo`: `inbox-actors serve --demo --port 0` alone, on a fresh embedded PostgreSQL of its own (durable, as
  the service runs it) in a temporary INBOX_DATA_DIR, removed once PostgreSQL has stopped; its demo workspace.
- `spawned_nodes`: `inbox-actors serve --nodes N` on a database of the run's own on harness.postgres's server
  (embedded, durability off, or --database-url's), migrated and dropped, holding W workspaces: each a Scale
  workspace with its own business number (phone_number_id, which the simulator takes as it comes), a full-access key
  whose limit nothing reaches (harness.workspace) and what the bot knows, given by the caller (the load script
  gives the demo's). With N = 1 the service is one process; with N > 1 a parent (its small pool, the built-in
  simulator if any) and N node processes behind one port, which its ready line lists with their pids
  (inbox_http/cluster/node_launcher.py). `each_run` runs one of these for each run of a comparison in turn.

Either way the platform is `inbox-actors simulator` in a process of its own (harness.simulator's SeparateSimulator),
started after the service and stopped before it (it holds keep-alive connections to the service, which would wait
its whole shutdown grace for them), or the service's built-in one; both accept the given sends a second per business
number, the service's pace (WHATSAPP_SENDS_PER_SECOND).

The bot (`ModelSetup`): the AI agent asking the model simulator — the one built into `serve`'s simulator, or, with
the simulator apart, one served beside it in its process (SimulatorWithModel), since a service pointed at a
platform starts none — or the keyword FAQ bot (INBOX_MODEL_URL=none). A model the caller's environment names
(INBOX_MODEL_URL, INBOX_MODEL, INBOX_MODEL_KEY) is never asked: the script's service must not reach it.

What is read of them (`SpawnedService.measured`): the CPU time each process started spent (psutil; PostgreSQL with
its backends; the balancer in front of the nodes, if any: harness/balancer.py), and from each node's own /metrics
the requests it relayed to another node, those its app answered, and the workspaces it holds.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import httpx
import trio_asyncio

from harness.balancer import BALANCER, Balancer, running_balancer
from harness.meters import psutil_cpu_seconds, tree_cpu_seconds
from harness.postgres import bench_database
from harness.processes import Child, cli_command, service_env
from harness.simulator import SeparateSimulator, SimulatorWithModel
from harness.workspace import Workspace, make_workspace
from persistence.database import Database

POSTGRES = "PostgreSQL"
SIMULATOR = "simulator"
# Where the caller's model is: a spawned service never inherits it.
CALLERS_MODEL = ("INBOX_MODEL_URL", "INBOX_MODEL", "INBOX_MODEL_KEY", "INBOX_MODEL_SIMULATOR_LATENCY")
T = TypeVar("T")
# What a workspace made by the script knows: called with the database and the workspace's id.
Seed = Callable[[Database, int], Awaitable[None]]


@dataclass(frozen=True)
class ModelSetup:
    """The spawned service's bot: the AI agent asking the model simulator (`agent`), each call taking `latency`
    seconds, at most `concurrency` calls of a workspace at once (None: the service's default,
    INBOX_MODEL_CONCURRENCY if the caller's environment sets it); or the keyword FAQ bot."""

    agent: bool = True
    latency: float = 0.0
    concurrency: int | None = None

    def service_env(self, env: dict[str, str]) -> dict[str, str]:
        """`env` without the caller's model, with this setup's settings (a separate simulator's model URL and key
        come with its own service_env)."""
        env = {name: value for name, value in env.items() if name not in CALLERS_MODEL}
        if not self.agent:
            return {**env, "INBOX_MODEL_URL": "none"}
        env["INBOX_MODEL_SIMULATOR_LATENCY"] = str(self.latency)   # the built-in model simulator's
        if self.concurrency is not None:
            env["INBOX_MODEL_CONCURRENCY"] = str(self.concurrency)
        return env

    def separate_platform(self) -> SeparateSimulator:
        """The simulator in a process of its own, playing the model too when the agent asks one."""
        if not self.agent:
            return SeparateSimulator.on_free_ports()
        ports = SeparateSimulator.on_free_ports()
        return SimulatorWithModel(port=ports.port, service_port=ports.service_port, model_latency=self.latency)


@dataclass(frozen=True)
class NodesPlan:
    """The runs a script asks for: `serve --nodes N` for each of `counts` in turn, or with each of `models` in turn
    (one of the two has one item), each with `workspaces`."""

    counts: tuple[int, ...]
    workspaces: int
    separate_simulator: bool
    sends_per_second: int
    startup_timeout: float
    models: tuple[ModelSetup, ...] = (ModelSetup(),)
    balancer: bool = False               # HAProxy routing by workspace in front of two nodes or more (balancer.py)

    def runs(self) -> list[tuple[int, ModelSetup]]:
        """(nodes, model) of each run, in order."""
        if len(self.counts) > 1 and len(self.models) > 1:
            raise ValueError("compare node counts or models, not both")
        return [(count, model) for count in self.counts for model in self.models]


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

    @property
    def balancer(self) -> float | None:
        return self.cpu.get(BALANCER)


@dataclass
class SpawnedService:
    service: Child
    simulator: Child | None              # None: the service's built-in one
    postgres_pid: int | None             # None: not known (--database-url's server, or not started yet)
    workspaces: list[Workspace]
    nodes: int | None = None             # `serve --nodes N`; None: `serve --demo`
    node_urls: list[str] = field(default_factory=list)   # each node's own address (the service's, with one)
    model: ModelSetup = ModelSetup()     # its bot
    balancer: Balancer | None = None     # in front of the nodes: the platform and the script call it

    @property
    def url(self) -> str:
        return self.balancer.url if self.balancer is not None else self.service.ready["url"]

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
        bot = f"the AI agent, model latency {self.model.latency:g} s" if self.model.agent else "the FAQ bot"
        front = ("" if self.balancer is None
                 else f", behind HAProxy routing by workspace (pid {self.balancer.process.pid})")
        return (f"ready at {self.url} (pids {pids}){front}, {len(self.workspaces)} workspace(s), simulator "
                f"{self.simulator_url}{', in a process of its own' if self.simulator else ''}; {bot}")

    def cpu_seconds(self) -> dict[str, float | None]:
        """CPU time so far of every process started, by name: the service's (each node), PostgreSQL (its backends
        included), the simulator. None where it cannot be read (no psutil, a node started again since)."""
        spent = {name: psutil_cpu_seconds(pid) for name, pid in self.service_pids().items()}
        if self.postgres_pid is not None:
            spent[POSTGRES] = tree_cpu_seconds(self.postgres_pid)
        if self.simulator is not None:
            spent[SIMULATOR] = self.simulator.cpu_seconds()
        if self.balancer is not None:
            spent[BALANCER] = self.balancer.cpu_seconds()
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
async def spawned_demo(*, separate_simulator: bool, sends_per_second: int, startup_timeout: float,
                       model: ModelSetup = ModelSetup()) -> AsyncIterator[SpawnedService]:
    """`serve --demo` on a fresh embedded PostgreSQL in a temporary INBOX_DATA_DIR, and its simulator, up and ready;
    on the way out each stopped with SIGINT and waited for, then the data directory removed."""
    data_dir = Path(tempfile.mkdtemp(prefix="inbox-load-"))
    platform = model.separate_platform() if separate_simulator else None
    port = platform.service_port if platform else 0
    env = model.service_env({**service_env(data_dir), **pace_env(sends_per_second, builtin_simulator=not platform)})
    service = Child("service", [*cli_command(), "serve", "--demo", "--port", str(port)],
                    {**env, **(platform.service_env() if platform else {})}, data_dir / "serve.log")
    simulator = None if platform is None else simulator_child(platform, sends_per_second, dict(os.environ), data_dir)
    try:
        async with running(service, simulator, startup_timeout):
            demo = service.ready["demo"]
            yield SpawnedService(service, simulator, postgres_pid(data_dir),
                                 [Workspace(demo["workspace_id"], demo["phone_number_id"], demo["key"])],
                                 model=model)
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


async def each_run(plan: NodesPlan, seed: Seed, server_url: str, postgres: int | None, work_dir: Path,
                   run: Callable[[SpawnedService], Awaitable[T]]) -> list[T]:
    """`run(spawned)` on `serve --nodes N` with its bot for each run of the plan in turn, each on a fresh database
    with its workspaces (each given `seed`), everything stopped and the database dropped before the next."""
    results = []
    for index, (count, model) in enumerate(plan.runs(), start=1):
        async with spawned_nodes(server_url, postgres, work_dir / f"run-{index}",
                                 f"inbox_bench_load_{os.getpid()}_{index}", nodes=count, workspaces=plan.workspaces,
                                 seed=seed, sends_per_second=plan.sends_per_second,
                                 separate_simulator=plan.separate_simulator, startup_timeout=plan.startup_timeout,
                                 model=model, balancer=plan.balancer and count > 1) as spawned:
            print(f"`serve --nodes {count}` {spawned.describe()}", file=sys.stderr, flush=True)
            results.append(await run(spawned))
    return results


@contextlib.asynccontextmanager
async def spawned_nodes(server_url: str, postgres: int | None, work_dir: Path, database: str, *, nodes: int,
                        workspaces: int, seed: Seed, sends_per_second: int, separate_simulator: bool,
                        startup_timeout: float, model: ModelSetup = ModelSetup(),
                        balancer: bool = False) -> AsyncIterator[SpawnedService]:
    """The database `database` with its workspaces, `serve --nodes <nodes>` on it and its simulator, up and ready
    (with a loop for asyncpg opened here); on the way out each stopped with SIGINT (every node drains) and waited
    for, then the database dropped. With `balancer`, HAProxy routing by workspace (balancer.py) takes the port the
    simulator posts to, in front of the nodes' own addresses."""
    work_dir.mkdir(parents=True, exist_ok=True)
    async with trio_asyncio.open_loop():
        async with bench_database(server_url, database) as (url, db):
            made = [await bot_workspace(db, f"Load workspace {n}", seed) for n in range(1, workspaces + 1)]
            platform = model.separate_platform() if separate_simulator else None
            env = model.service_env({**service_env(work_dir / "service"), "DATABASE_URL": url,
                                     **pace_env(sends_per_second, builtin_simulator=platform is None)})
            env.update(platform.service_env() if platform else {})
            env.pop("INBOX_HEALTH_TOKEN", None)   # each node's /metrics read from loopback, no token
            if balancer and platform is None:
                raise ValueError("a balancer goes with the simulator in a process of its own")
            port = platform.service_port if platform and not balancer else 0
            service = Child("service", [*cli_command(), "serve", "--port", str(port), "--nodes", str(nodes)], env,
                            work_dir / "serve.log")
            simulator = None if platform is None else simulator_child(platform, sends_per_second, env, work_dir)
            async with contextlib.AsyncExitStack() as stack:
                await stack.enter_async_context(service.running(startup_timeout))
                listed = service.ready.get("nodes") or [{"url": service.ready["url"]}]
                node_urls = [node["url"] for node in listed]
                front = None if not balancer else await stack.enter_async_context(
                    running_balancer(platform.service_port, node_urls, work_dir / "balancer"))
                if simulator is not None:
                    await stack.enter_async_context(simulator.running(startup_timeout))
                yield SpawnedService(service, simulator, postgres, made, nodes, node_urls, model, front)


async def bot_workspace(db: Database, name: str, seed: Seed) -> Workspace:
    """harness.workspace's Scale workspace, key and admin, knowing what `seed` gives it."""
    workspace = await make_workspace(db, name)
    await seed(db, workspace.workspace_id)
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
