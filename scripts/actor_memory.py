"""Where a live idle actor's bytes go: a toy actor, or the real conversation actor after one message.

    .venv/bin/python scripts/actor_memory.py toy [--actors 100000] [--traced 20000]
    .venv/bin/python scripts/actor_memory.py conversation [--actors 20000] [--traced 2000] [--database-url URL]
    .venv/bin/python scripts/actor_memory.py toy --runtime /tmp/proto/runtime   # a scratch copy of the runtime

Three views of the same actors, all of them live when read (idle timeout of a day, live count checked):

1. RSS: VmRSS growth (after gc.collect()) across activating `--actors` actors, each after one message,
   without tracing (tracing costs memory of its own). What the machine pays, allocator overhead included.
2. tracemalloc: snapshots (tracebacks `--depth` deep) before and after `--traced` more actors, grouped by the
   allocating line, and by the innermost line of this project's code on the way there (which runtime line
   caused a trio or asyncpg allocation). What Python objects cost, without the allocator's slack.
3. One actor taken apart: every object reachable from its Cell and its trio Task that no other actor
   shares (gc.get_referents, stopping at the system, the kind, trio's runner and the shared parent scopes;
   what the next actor also reaches is subtracted), sized with sys.getsizeof (an object's __dict__ counted
   with it) and attributed to the first component that reaches it, in the order printed. The system's
   shared containers (registry dict, nursery and runner task sets, deadline heap) are added as their size
   divided by the live actors.

`conversation` starts the embedded PostgreSQL in a temporary directory (or uses the server of
--database-url, whose role needs CREATEDB), makes a database and a workspace, and sends each chat one
customer message through the real Conversation actor (no bot, a platform that is never called).

`--runtime DIR` loads DIR (a copy of inbox_actors/runtime, changed) as inbox_actors.runtime, so prototypes of
leaner cells are measured with the same script, conversation actor included.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import itertools
import linecache
import os
import shutil
import sys
import tempfile
import time
import tracemalloc
import types
from collections import Counter as Tally
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC
from pathlib import Path
from typing import Any

import trio
from harness.meters import rss_bytes

ROOT = Path(__file__).resolve().parent.parent
OURS = (str(ROOT / "inbox_actors"), str(ROOT / "persistence"))
DAY = 24 * 3600.0
WARM_UP = 200


def use_runtime(directory: str | None) -> None:
    """Load `directory` as the inbox_actors.runtime package (before anything imports the real one)."""
    if directory is None:
        return
    import inbox_actors

    path = Path(directory).resolve()
    spec = importlib.util.spec_from_file_location("inbox_actors.runtime", path / "__init__.py",
                                                  submodule_search_locations=[str(path)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["inbox_actors.runtime"] = module
    spec.loader.exec_module(module)
    inbox_actors.runtime = module  # type: ignore[attr-defined]
    print(f"runtime: {path}")


def resident_bytes() -> int:
    gc.collect()
    rss = rss_bytes(os.getpid())
    if rss is None:
        raise SystemExit("no VmRSS in /proc/self/status: this needs Linux")
    return rss


def mib(n: float) -> str:
    return f"{n / 2**20:,.1f} MiB"


# -- the actors --------------------------------------------------------------------------------------------


class Scenario:
    """Activates actors of one kind, one message each; `keys` names them."""

    kind: str

    async def activate(self, system: Any, keys: list[str], concurrency: int) -> None:
        queue = iter(keys)

        async def worker() -> None:
            for key in queue:
                await self.first_message(system, key)

        async with trio.open_nursery() as workers:
            for _ in range(concurrency):
                workers.start_soon(worker)

    async def first_message(self, system: Any, key: str) -> None:
        raise NotImplementedError

    def note_transients(self, actors: int) -> None:
        """Say what the figure includes that is not the actors' (and goes away by itself)."""


class Toy(Scenario):
    kind = "toy"

    def kinds(self) -> list[Any]:
        from inbox_actors.runtime import Actor, ActorKind

        class Counter(Actor):
            def __init__(self, key: str) -> None:
                super().__init__(key)
                self.count = 0

            async def receive(self, message: object) -> int:
                self.count += 1
                return self.count

        return [ActorKind(name=self.kind, factory=Counter, mailbox_capacity=256, idle_timeout=DAY)]

    def key(self, n: int) -> str:
        return f"t{n}"

    async def first_message(self, system: Any, key: str) -> None:
        await system.ref(self.kind, key).ask("tick")


class Chats(Scenario):
    kind = "conversation"

    def __init__(self, db: Any, workspace_id: int) -> None:
        self.db, self.workspace_id = db, workspace_id

    def note_transients(self, actors: int) -> None:
        # trio_asyncio does not drop a cancelled asyncio timer: it stays in the loop's heap until it is due.
        # asyncpg arms one per query (command_timeout, 60 s) and one per connection release (closing
        # inactive connections, 300 s), and cancels it: memory that follows the query rate, not the actors.
        import trio_asyncio

        timers = trio_asyncio.current_loop.get()._timers
        cancelled = [t for t in timers if t.cancelled()]
        size = sum(sys.getsizeof(t) + sys.getsizeof(t._args or ()) for t in timers)
        print(f"   of which not the actors': {len(timers):,} asyncio timers waiting in trio_asyncio's heap "
              f"({len(cancelled):,} already cancelled), ~{size / actors:,.0f} bytes per actor, freed as they "
              "come due (60 s query timeouts, 300 s pool idle checks)")

    def kinds(self) -> list[Any]:
        from inbox_actors.conversations.conversation import (
            ConversationDeps,
            conversation_kind,
        )
        from inbox_actors.conversations.send_pacer import send_pacer_kind
        from inbox_actors.runtime.clock import WallClock

        class NoPlatform:
            async def send(self, phone_number_id: str, request: object) -> object:
                raise AssertionError("nothing is sent in this measurement")

        deps = ConversationDeps(db=self.db, clock=WallClock(), platform=NoPlatform(), responder=None)
        return [conversation_kind(deps, idle_timeout=DAY), send_pacer_kind()]

    def key(self, n: int) -> str:
        return f"{self.workspace_id}:9198{n:08d}"

    async def first_message(self, system: Any, key: str) -> None:
        from datetime import datetime

        from inbox_actors.conversations.conversation import CustomerWrote
        from inbox_actors.platform.payloads import InboundMessage

        phone = key.partition(":")[2]
        message = InboundMessage(message_id=f"wamid.mem-{phone}", from_phone=phone, at=datetime.now(UTC),
                                 type="text", text="Hello, is my order on its way?", profile_name="Asha Rao")
        await system.ref(self.kind, key).ask(CustomerWrote(message))


# -- 1 and 2: RSS and tracemalloc --------------------------------------------------------------------------


def live_count(system: Any, kind: str) -> int:
    return system.summary(busiest=0).kinds[kind].live


async def rss_growth(system: Any, scenario: Scenario, keys: list[str], concurrency: int) -> None:
    before = resident_bytes()
    started = time.perf_counter()
    await scenario.activate(system, keys, concurrency)
    elapsed = time.perf_counter() - started
    after = resident_bytes()
    live = live_count(system, scenario.kind)
    print(f"\n== RSS: {len(keys):,} more live {scenario.kind} actors ({len(keys) / elapsed:,.0f}/s), "
          f"{live:,} live in all")
    print(f"   VmRSS {mib(before)} -> {mib(after)}: +{mib(after - before)}, "
          f"{(after - before) / len(keys):,.0f} bytes per live actor")
    scenario.note_transients(len(keys))


def ours(frame: tracemalloc.Frame) -> bool:
    return frame.filename.startswith(OURS)


def short(frame: tracemalloc.Frame, *, code: bool = False) -> str:
    """path:line relative to the project or site-packages; with `code`, the line itself too."""
    text = linecache.getline(frame.filename, frame.lineno).strip() if code else ""
    name = frame.filename
    for prefix in (str(ROOT) + "/", "/site-packages/"):
        if prefix in name:
            name = name.split(prefix, 1)[1]
    if "/lib/python3" in name:
        name = "stdlib/" + name.split("/lib/python3", 1)[1].split("/", 1)[1]
    return f"{name}:{frame.lineno}" + (f"  {text[:70]}" if text else "")


async def traced_growth(system: Any, scenario: Scenario, keys: list[str], concurrency: int, depth: int,
                        top: int) -> None:
    tracemalloc.start(depth)
    gc.collect()
    before = tracemalloc.take_snapshot()
    await scenario.activate(system, keys, concurrency)
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    n = len(keys)
    diffs = after.compare_to(before, "traceback")
    total = sum(d.size_diff for d in diffs)
    live = live_count(system, scenario.kind)
    print(f"\n== tracemalloc: {n:,} more live {scenario.kind} actors, {live:,} live in all")
    print(f"   {total / n:,.0f} bytes per actor in Python objects (traced; the allocator's slack not included)")

    by_line: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_cause: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for diff in diffs:
        if not diff.size_diff:
            continue
        frames = list(reversed(diff.traceback))  # tracemalloc keeps the oldest frame first; innermost first here
        line = short(frames[0], code=True)
        cause = next((short(f, code=True) for f in frames if ours(f)), f"(no project frame: {short(frames[-1])})")
        for table, name in ((by_line, line), (by_cause, cause)):
            table[name][0] += diff.size_diff
            table[name][1] += diff.count_diff

    def show(title: str, table: dict[str, list[int]]) -> None:
        print(f"\n   {title}")
        print(f"   {'bytes/actor':>11} {'blocks/actor':>12}  site")
        rows = sorted(table.items(), key=lambda item: -item[1][0])
        for name, (size, count) in rows[:top]:
            print(f"   {size / n:11,.0f} {count / n:12.2f}  {name}")
        rest = sum(size for _, (size, _) in rows[top:])
        if rest:
            print(f"   {rest / n:11,.0f} {'':12}  ({len(rows) - top} more sites)")

    show("by allocating line (innermost frame)", by_line)
    show("by the innermost line of this project's code in the traceback (what caused it)", by_cause)


# -- 3: one actor taken apart ------------------------------------------------------------------------------

ATOMS = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.CodeType,
         types.MethodDescriptorType, types.WrapperDescriptorType, types.GetSetDescriptorType,
         types.MemberDescriptorType, property, staticmethod, classmethod)


def own_dict(obj: object) -> dict | None:
    """The instance's own __dict__ (materialized by asking), or None: a bound method's or a frame's
    __dict__ is someone else's."""
    if isinstance(obj, (*ATOMS, types.MethodType, types.FrameType)) or not hasattr(obj, "__dict__"):
        return None
    try:
        return vars(obj)
    except TypeError:
        return None


def size_of(obj: object) -> int:
    attrs = own_dict(obj)
    return sys.getsizeof(obj) + (sys.getsizeof(attrs) if attrs is not None else 0)


def referents(obj: object) -> list[object]:
    """What `obj` refers to: gc.get_referents, plus the fields of a msgspec Struct made with gc=False (which
    the collector does not traverse)."""
    found = gc.get_referents(obj)
    fields = getattr(type(obj), "__struct_fields__", None)
    if fields and not found:
        found = [getattr(obj, name) for name in fields]
    return found


def reach(roots: Iterable[object], stop: set[int]) -> dict[int, object]:
    found: dict[int, object] = {}
    pending = [r for r in roots if r is not None]
    while pending:
        obj = pending.pop()
        if id(obj) in found or id(obj) in stop or isinstance(obj, ATOMS):
            continue
        found[id(obj)] = obj
        attrs = own_dict(obj)
        if attrs is not None:
            pending.append(attrs)
        pending.extend(referents(obj))
    return found


def cell_task_code(cell: Any) -> Any:
    """The code object every task of a cell starts in (`Cell._run` now; `Cell.run` in older runtimes)."""
    entry = getattr(type(cell), "_run", None) or getattr(type(cell), "run")
    return entry.__code__


def actor_task(cell: Any) -> Any | None:
    """The trio Task running `cell` (its coroutine's frame holds the cell as `self`; read without f_locals,
    which would give the frame a dict it does not otherwise have)."""
    root = trio.lowlevel.current_root_task()
    pending = [root]
    while pending:
        task = pending.pop()
        if getattr(task.coro, "cr_code", None) is cell_task_code(cell) \
                and any(o is cell for o in gc.get_referents(task.coro)):
            return task
        for nursery in task.child_nurseries:
            pending.extend(nursery.child_tasks)
    return None  # a parked cell: live without a task


def await_chain(task: Any) -> list[Any]:
    chain, awaitable = [], task.coro
    while awaitable is not None and not isinstance(awaitable, (str, int)):
        chain.append(awaitable)
        awaitable = getattr(awaitable, "cr_await", None) or getattr(awaitable, "gi_yieldfrom", None)
    return chain


def shared_stop_set(system: Any) -> set[int]:
    """What every actor reaches and none owns: the system and its kinds, trio's runner, the nursery the
    actors run in, and that nursery's cancel status with its ancestors (whose child sets lead to every
    other actor)."""
    nursery = system._nursery
    stop = [system, *system._kinds.values(), trio.lowlevel.current_task()._runner, nursery]
    status = nursery._cancel_status
    while status is not None:
        stop += [status, status._scope]
        status = status._parent
    parent = nursery.parent_task
    while parent is not None:
        stop += [parent, parent.coro]
        parent = parent.parent_nursery.parent_task if parent.parent_nursery is not None else None
    return {id(o) for o in stop}


def components(cell: Any, task: Any, kind: str) -> list[tuple[str, list[object]]]:
    """(component, its roots), in attribution order: each object goes to the first that reaches it."""
    actor = cell._actor
    tasks = cell._tasks
    frames = {c.cr_code.co_name if hasattr(c, "cr_code") else type(c).__name__: c
              for c in (await_chain(task) if task is not None else [])}
    task_status = next((o for o in gc.get_referents(frames["run"]) if type(o).__name__ == "_TaskStatus"), None) \
        if "run" in frames else None
    status = task._cancel_status if task is not None else None
    idle_scope = status._scope if status is not None else None
    loop_scope = getattr(cell, "_loop_scope", None)

    def scope(s: Any) -> list[object]:
        # A cancel status links to its parent's: each scope's status is a root of its own, so that walking
        # one scope stops at the next scope out.
        return [s, s._cancel_status] if s is not None else []
    out: list[tuple[str, list[object]]] = [
        ("mailbox (a Mailbox; in older runtimes a channel pair with its shared state)",
         [cell.mailbox, getattr(cell, "_inbox", None)]),
    ]
    for name in ("ready", "exited", "_stop_signal"):
        if hasattr(cell, name):
            out.append((f"trio.Event cell.{name} (+ its waiter set)", [getattr(cell, name)]))
    if tasks is not None and hasattr(tasks, "_none_running"):
        out.append(("trio.Event ActorTasks._none_running (+ its waiter set)", [tasks._none_running]))
    out += [
        ("cell._crash_times deque(maxlen=max_restarts + 1)", [getattr(cell, "_crash_times", None)]),
        ("idle wait: move_on_after CancelScope + CancelStatus (+ 2 sets)",
         scope(idle_scope) if idle_scope is not loop_scope else []),
        ("cell._loop_scope CancelScope + CancelStatus (+ 2 sets)", scope(loop_scope)),
        ("tasks nursery: Nursery (+ __dict__, child set) + its CancelScope/Status",
         [x for n in (task.child_nurseries if task is not None else []) for x in [n, *scope(n.cancel_scope)]]),
        ("nursery.start leftover: _TaskStatus kept by run()'s frame + the temporary nursery it holds",
         [task_status]),
        ("ActorTasks (+ __dict__, scope set, owner string, bound method)", [tasks]),
    ]
    if kind == "conversation" and actor is not None:
        chat = actor.chat
        out += [
            ("ChatState._row: asyncpg Record of the conversation row (+ its values)", [chat._row]),
            ("ChatState._workspace: asyncpg Record of the workspace profile (+ its values)", [chat._workspace]),
            ("ChatState (+ __dict__, key strings)", [chat]),
            ("ChatHandling", [actor.team]),
            ("Sender", [getattr(actor, "sender", None)]),
        ]
    out.append(("Actor instance (+ __dict__, its state, self_ref ActorRef)", [actor]))
    for name, coroutine in frames.items():
        out.append((f"coroutine {name} (frame, and what only its stack holds)", [coroutine]))
    out += [
        ("trio Task (+ name string, context copy, child-nursery list, abort closure)", [task]),
        ("Cell instance (+ __dict__, its own floats and strings)", [cell]),
    ]
    return [(name, [r for r in roots if r is not None]) for name, roots in out]


def container_slots(system: Any) -> list[tuple[str, int]]:
    """Bytes per live actor of the shared containers that hold an entry (or more) for each live actor."""
    live = max(1, len(system._cells))
    runner = trio.lowlevel.current_task()._runner
    children = system._nursery._children
    rows = [
        ("registry: ActorSystem._cells dict (per live actor)", sys.getsizeof(system._cells) // live),
        (f"system nursery child-task set ({len(children) / live:.2f} tasks per live actor)",
         sys.getsizeof(children) // live),
        (f"trio runner.tasks set ({len(runner.tasks) / live:.2f} tasks per live actor)",
         sys.getsizeof(runner.tasks) // live),
    ]
    for name, parked in getattr(system, "_parked", {}).items():
        rows.append((f"parked {name} cells dict ({len(parked) / live:.2f} per live actor)",
                     sys.getsizeof(parked) // live))
    heap = runner.deadlines._heap
    if heap:
        entry = heap[-1]
        per_entry = 8 + sys.getsizeof(entry) + sys.getsizeof(entry[0]) + sys.getsizeof(entry[1])
        rows.append((f"deadline heap: {len(heap) / live:.2f} (deadline, id, scope) entries per live actor",
                     per_entry * len(heap) // live))
        stale = [scope for deadline, _, scope in heap if deadline != scope._registered_deadline]
        dead = {id(s): s for s in stale if s._cancel_status is None}
        if dead:
            rows.append((f"  stale entries keep exited CancelScopes alive ({len(dead) / live:.2f} per actor)",
                         sum(size_of(s) for s in dead.values()) // live))
    return rows


def take_apart(system: Any, kind: str, probe_key: str, other_key: str, verbose: bool) -> None:
    cell, other = system._cells[(kind, probe_key)], system._cells[(kind, other_key)]
    task, other_task = actor_task(cell), actor_task(other)
    stop = shared_stop_set(system)
    address = next(a for a in system._cells if a == (kind, probe_key))  # the registry's own key tuple
    mine = reach([cell, task, address], stop)
    theirs = reach([other, other_task], stop)
    if task is None:
        print("\n   (the probe has no trio task: a parked cell)")
    owned = {i: o for i, o in mine.items() if i not in theirs}
    parts = components(cell, task, kind) + [("registry key: the (kind, key) tuple", [address])]
    roots = {id(r) for _, rs in parts for r in rs}
    claimed: set[int] = set()
    rows: list[tuple[str, int, int]] = []
    listing: dict[str, list[str]] = {}
    for name, rs in parts:
        pending, size, count = list(rs), 0, 0
        own_roots = {id(r) for r in rs}
        while pending:
            obj = pending.pop()
            i = id(obj)
            if i not in owned or i in claimed or (i in roots and i not in own_roots):
                continue
            claimed.add(i)
            size += size_of(obj)
            listing.setdefault(name, []).append(f"{type(obj).__name__} {size_of(obj)}")
            count += 1
            attrs = own_dict(obj)
            if attrs is not None:
                claimed.add(id(attrs))
                pending.extend(attrs.values())
            pending.extend(o for o in referents(obj) if not isinstance(o, dict) or id(o) not in claimed)
        rows.append((name, size, count))
    leftovers = Tally()
    left_size = 0
    for i, obj in owned.items():
        if i not in claimed:
            leftovers[type(obj).__name__] += 1
            left_size += size_of(obj)
    slot_rows = container_slots(system)
    total = sum(size for _, size, _ in rows) + left_size + sum(size for _, size in slot_rows)
    print(f"\n== one live idle {kind} actor taken apart ({probe_key}): ~{total:,} bytes by sys.getsizeof")
    print(f"   {'bytes':>7} {'objects':>7}  component")
    for name, size, count in rows:
        if size:
            print(f"   {size:7,} {count:7}  {name}")
            if verbose:
                print(f"   {'':15}  " + ", ".join(listing[name]))
    if left_size:
        print(f"   {left_size:7,} {sum(leftovers.values()):7}  other owned objects: "
              + ", ".join(f"{n} x{c}" for n, c in leftovers.most_common(8)))
    for name, size in slot_rows:
        print(f"   {size:7,} {'':7}  {name}")
    chain = await_chain(task) if task is not None else []
    print("\n   the task's await chain (coroutine objects hold their frames):")
    for awaitable in chain:
        name = getattr(getattr(awaitable, "cr_code", None) or getattr(awaitable, "gi_code", None), "co_qualname",
                       type(awaitable).__name__)
        print(f"   {sys.getsizeof(awaitable):7,}  {name}")
    if kind == "conversation" and cell._actor is not None:
        describe_record("conversation row", cell._actor.chat._row)
        describe_record("workspace profile", cell._actor.chat._workspace)


def describe_record(title: str, record: Any) -> None:
    if record is None:
        return
    fields = getattr(record, "__struct_fields__", None)  # a prototype's compact row
    values = [getattr(record, f) for f in fields] if fields is not None else list(record.values())
    value_bytes = sum(sys.getsizeof(v) for v in values if not (v is None or isinstance(v, bool)
                                                              or (isinstance(v, int) and -5 <= v <= 256)))
    kinds = Tally(type(v).__name__ for v in values)
    print(f"\n   {title}: {type(record).__name__} of {len(values)} columns: {sys.getsizeof(record):,} bytes "
          f"+ {value_bytes:,} in its values ({', '.join(f'{n} x{c}' for n, c in kinds.most_common())})")


# -- the run -----------------------------------------------------------------------------------------------


async def measure(scenario: Any, args: argparse.Namespace) -> None:
    from inbox_actors.runtime import ActorSystem

    system = ActorSystem(scenario.kinds())
    counter = itertools.count()
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        # Whatever is made once (caches, prepared statements, the pool's connections) is made here.
        await scenario.activate(system, [scenario.key(next(counter)) for _ in range(WARM_UP)], args.concurrency)
        await rss_growth(system, scenario, [scenario.key(next(counter)) for _ in range(args.actors)],
                         args.concurrency)
        if args.traced:
            await traced_growth(system, scenario, [scenario.key(next(counter)) for _ in range(args.traced)],
                                args.concurrency, args.depth, args.top)
        probe, other = scenario.key(next(counter)), scenario.key(next(counter))
        for key in (other, probe):
            await scenario.first_message(system, key)
        await trio.sleep(1.0)  # every actor back in its idle wait (or parked, in a prototype that parks)
        take_apart(system, scenario.kind, probe, other, args.verbose)
        await system.shutdown(120)


async def conversations(args: argparse.Namespace, server_url: str) -> None:
    import trio_asyncio

    from inbox_actors.access import accounts
    from inbox_actors.team import sla
    from persistence.database import Database
    from persistence.migrations import migrate

    name = f"inbox_memory_{os.getpid()}"
    async with trio_asyncio.open_loop():
        admin = await Database.connect(server_url, min_size=1, max_size=1)
        try:
            await admin.execute(f'CREATE DATABASE "{name}"')
        finally:
            await admin.close()
        url = server_url.rsplit("/", 1)[0] + f"/{name}"
        try:
            db = await Database.connect(url, min_size=1, max_size=10)
            try:
                await migrate(db)
                created = await accounts.create_workspace(db, name="Memory", plan="scale")
                await sla.set_target(db, created.workspace_id, 3600)
                await measure(Chats(db, created.workspace_id), args)
            finally:
                await db.close()
        finally:
            admin = await Database.connect(server_url, min_size=1, max_size=1)
            try:
                await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            finally:
                await admin.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", choices=("toy", "conversation"))
    parser.add_argument("--actors", type=int, help="actors activated for the RSS figure "
                        "(default 100,000 toy, 20,000 conversation)")
    parser.add_argument("--traced", type=int, help="actors activated under tracemalloc (default 20,000 toy, "
                        "2,000 conversation; 0: skip)")
    parser.add_argument("--depth", type=int, default=10, help="traceback depth for tracemalloc (default 10)")
    parser.add_argument("--top", type=int, default=25, help="rows per tracemalloc table (default 25)")
    parser.add_argument("--concurrency", type=int, help="senders activating actors at once "
                        "(default 1 toy, 8 conversation)")
    parser.add_argument("--verbose", action="store_true", help="list the objects of each component")
    parser.add_argument("--runtime", help="a directory to load as inbox_actors.runtime instead (a prototype)")
    parser.add_argument("--database-url", help="a PostgreSQL server (its role needs CREATEDB) instead of the "
                        "embedded one")
    args = parser.parse_args(argv)
    toy = args.scenario == "toy"
    args.actors = args.actors if args.actors is not None else (100_000 if toy else 20_000)
    args.traced = args.traced if args.traced is not None else (20_000 if toy else 2_000)
    args.concurrency = args.concurrency or (1 if toy else 8)
    use_runtime(args.runtime)
    if toy:
        trio.run(measure, Toy(), args)
        return
    embedded = work_dir = None
    server_url = args.database_url
    if server_url is None:
        from persistence.embedded import EmbeddedPostgres

        work_dir = Path(tempfile.mkdtemp(prefix="inbox-memory-"))
        embedded = EmbeddedPostgres(work_dir / "data", durable=False)
        server_url = embedded.start().url("postgres")
    try:
        trio.run(conversations, args, server_url)
    finally:
        if embedded is not None:
            embedded.stop()
        if work_dir is not None:
            shutil.rmtree(work_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
