"""A py-spy profile of the service (`--format raw`) broken down by layer and by function: scripts/profile_breakdown.py
prints it for a profile file, and scripts/bench_send.py for the profile it records in each phase (its docstring
says how the layers and the two views are counted)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

BRIDGE, ASYNCIO = "trio_asyncio bridge", "asyncio loop (run by the bridge)"
ASYNCPG, RUNTIME = "asyncpg", "actor runtime"
WEB, CLIENT, MSGSPEC, TRIO = "Quart/Hypercorn", "httpx/httpcore", "msgspec", "trio"
INCLUSIVE = (BRIDGE, ASYNCIO, ASYNCPG, RUNTIME, WEB, CLIENT, MSGSPEC)
PACKAGES = {
    "trio_asyncio": BRIDGE, "asyncio": ASYNCIO, "asyncpg": ASYNCPG, "quart": WEB, "quart_trio": WEB,
    "hypercorn": WEB, "werkzeug": WEB, "blinker": WEB, "flask": WEB, "httpx": CLIENT, "httpcore": CLIENT,
    "msgspec": MSGSPEC, "trio": TRIO, "outcome": TRIO,
}
OURS = ("inbox_actors", "inbox_http", "persistence")
ENTRY = "inbox_http.cli"        # on every stack: not counted as our code
# Serve whoever calls them: their self time goes to the caller's layer.
PASSED_OVER = ("h11", "anyio", "sniffio", "idna", "certifi", "trio", "outcome", "asyncio")
# Leaves that are a socket call or the wait for one: (layer whose socket, function).
SOCKET_LEAVES = {("trio._socket", "_SocketType._nonblocking_helper"): "trio sockets (HTTP in and out)",
                 ("asyncio.selector_events", "_SelectorSocketTransport.write"): "asyncio socket writes (PostgreSQL)",
                 ("asyncio.selector_events", "_SelectorSocketTransport._read_ready__data_received"):
                     "asyncio socket reads (PostgreSQL)",
                 ("trio._core._io_epoll", "EpollIOManager.get_events"): "epoll"}


def module_of(path: str) -> str:
    """`.../site-packages/trio/_core/_run.py` -> `trio._core._run`; our files by their package path too."""
    parts = path.replace("\\", "/").removesuffix(".py").split("/")
    for index, part in enumerate(parts):
        if part in PACKAGES or part in OURS or part in PASSED_OVER:
            return ".".join(parts[index:])
    return parts[-1] if parts else path


def layer_of(module: str) -> str | None:
    """The layer a frame's module belongs to; ours by module (`inbox_http.guard`); None when passed over."""
    top = module.split(".", 1)[0]
    if module.startswith("inbox_actors.runtime"):
        return RUNTIME
    if module.startswith(ENTRY):
        return None
    if top in OURS:
        return "ours: " + module
    return PACKAGES.get(top)


def owner_of(module: str) -> str | None:
    """The layer a frame's self time may be given to: None for the helpers passed over."""
    return None if module.split(".", 1)[0] in PASSED_OVER else layer_of(module)


@dataclass(frozen=True)
class Frame:
    function: str
    module: str

    @classmethod
    def parse(cls, text: str) -> Frame:
        function, _, where = text.rpartition(" (")
        if not function:                       # no "(file:line)": a native or thread frame
            return cls(text, text)
        path = where.rstrip(")").rsplit(":", 1)[0]
        return cls(function, module_of(path))


@dataclass
class Profile:
    samples: int = 0
    inclusive: Counter = field(default_factory=Counter)    # layer -> samples with it on the stack
    self_time: Counter = field(default_factory=Counter)    # layer -> samples given to it
    functions: Counter = field(default_factory=Counter)    # (function, module) of the leaf -> samples
    ours_inclusive: Counter = field(default_factory=Counter)   # our module -> samples with it on the stack
    sockets: Counter = field(default_factory=Counter)          # SOCKET_LEAVES' names ("" for the rest)

    def add(self, frames: list[Frame], count: int) -> None:
        if not frames:
            return
        self.samples += count
        layers = {layer_of(frame.module) for frame in frames} - {None}
        for layer in layers:
            self.inclusive["ours" if layer.startswith("ours: ") else layer] += count
        for layer in layers:
            if layer.startswith("ours: "):
                self.ours_inclusive[layer[6:]] += count
        leaf = frames[-1]
        owner = next((owner for frame in reversed(frames) if (owner := owner_of(frame.module)) is not None), None)
        self.self_time[owner or layer_of(leaf.module) or f"other: {leaf.module}"] += count
        self.functions[(leaf.function, leaf.module)] += count
        self.sockets[SOCKET_LEAVES.get((leaf.module, leaf.function), "")] += count

    def share(self, count: int) -> str:
        return f"{count / self.samples:.1%}" if self.samples else "-"

    def report(self, top: int = 15, indent: str = "  ") -> str:
        if not self.samples:
            return f"{indent}no samples"
        lines = [f"{indent}{self.samples:,} samples (the service busy); inclusive: "
                 + ", ".join(f"{layer} {self.share(self.inclusive[layer])}" for layer in INCLUSIVE)
                 + f", our code {self.share(self.inclusive['ours'])}"]
        layers = [(name, count) for name, count in self.self_time.most_common() if not name.startswith("ours: ")]
        ours = [(name[6:], count) for name, count in self.self_time.most_common() if name.startswith("ours: ")]
        lines.append(f"{indent}self: " + ", ".join(f"{name} {self.share(count)}" for name, count in layers))
        lines.append(f"{indent}self, our code by module ({self.share(sum(c for _, c in ours))} in all): "
                     + ", ".join(f"{name} {self.share(count)}" for name, count in ours[:12]))
        lines.append(f"{indent}inclusive, our code by module: " + ", ".join(
            f"{name} {self.share(count)}" for name, count in self.ours_inclusive.most_common(12)))
        lines.append(f"{indent}leaves in a socket call or epoll: " + ", ".join(
            f"{name} {self.share(count)}" for name, count in self.sockets.most_common() if name))
        lines.append(f"{indent}hot functions (self):")
        for (function, module), count in self.functions.most_common(top):
            lines.append(f"{indent}  {self.share(count):>6}  {function}  ({module})")
        return "\n".join(lines)


def read_profile(path: Path) -> Profile:
    profile = Profile()
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [Frame.parse(text) for text in stack.split(";")]
        profile.add([frame for frame in frames if not frame.function.startswith(("process ", "thread "))],
                    int(count))
    return profile
