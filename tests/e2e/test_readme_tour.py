"""The README's five-minute tour, run as written against a real service, so the front page cannot go stale.

Each shell block of the tour carries a marker comment saying how it is run:
- `serve`: the command that starts the service; the test starts `inbox-actors serve --demo` (what
  `scripts/serve` runs) with the block's environment, on this test's database and a free port;
- `variables`: what the reader copies from the ready line; the test sets the same names from its ready line;
- `write`: run once, in one bash session shared by the whole tour (so variables and background jobs carry over);
- `read`: run again until its expected output shows (the bot answers, and statuses arrive, after a moment).
A `# {…}` comment under a command is its expected output: every `"key": value` in it whose value is written out
(not elided with …) must appear in what the block printed, the receiver's lines included.
"""

from __future__ import annotations

import re
import shlex
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio

from tests.e2e.test_serve_process import start_serve, stop

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TOUR_RECEIVER_PORT = "9000"

_BLOCK = re.compile(r"<!-- tour: (\w+) -->\n```sh\n(.*?)```", re.S)
# A written-out value: a string without an ellipsis, a number, true, false or null.
_PAIR = re.compile(r'"(\w+)":\s*("(?:[^"\\…]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)(?=\s*[,}\]])')


@dataclass(frozen=True)
class Block:
    kind: str
    code: str

    @property
    def commands(self) -> str:
        return "\n".join(line for line in self.code.splitlines() if not line.startswith("#"))

    @property
    def expected(self) -> list[re.Pattern]:
        """What the output must hold: each written-out pair of the comment lines, spacing aside."""
        pairs = [match.groups() for line in self.code.splitlines() if line.startswith("# {")
                 for match in _PAIR.finditer(line)]
        return [re.compile(re.escape(f'"{key}":') + r"\s*" + re.escape(value)) for key, value in pairs]


def tour_blocks() -> list[Block]:
    blocks = [Block(kind, code) for kind, code in _BLOCK.findall(README.read_text())]
    assert blocks and blocks[0].kind == "serve" and blocks[1].kind == "variables", blocks[:2]
    assert {block.kind for block in blocks[2:]} <= {"read", "write"}, blocks
    return blocks


def _free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


class Shell:
    """One bash session fed block by block, as a reader's terminal is; everything it prints (the background
    receiver's lines too) lands in one transcript."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.transcript = ""
        self._runs = 0
        self._changed = trio.Event()

    async def read_output(self) -> None:
        async for chunk in self.process.stdout:
            self.transcript += chunk.decode(errors="replace")
            self._changed.set()
            self._changed = trio.Event()

    async def run(self, commands: str) -> int:
        """Run `commands`; return where their output starts in the transcript, once they have finished."""
        self._runs += 1
        marker = f"__tour_block_{self._runs}_done__"
        start = len(self.transcript)
        await self.process.stdin.send_all(f"{commands}\necho {marker}\n".encode())
        with trio.fail_after(30):
            while marker not in self.transcript[start:]:
                await self._changed.wait()
        return start

    async def wait_for(self, patterns: list[re.Pattern], start: int, seconds: float) -> list[str]:
        """Wait up to `seconds` for every pattern to show after `start`; the ones still missing."""
        with trio.move_on_after(seconds):
            while any(not p.search(self.transcript, start) for p in patterns):
                await self._changed.wait()
            return []
        return [p.pattern for p in patterns if not p.search(self.transcript, start)]


@pytest.mark.slow
async def test_the_readme_tour_runs_as_written(database_url, nursery):
    blocks = tour_blocks()
    serve_words = shlex.split(blocks[0].commands)
    assert serve_words[-1] == "scripts/serve", serve_words
    serve_env = dict(word.split("=", 1) for word in serve_words[:-1])
    serve = await start_serve({"DATABASE_URL": database_url, **serve_env}, nursery, "--demo")
    ready = serve.ready
    values = {"BASE": ready["url"], "KEY": ready["demo"]["key"], "PLATFORM": ready["platform"],
              "NUMBER": ready["demo"]["phone_number_id"]}
    assert re.findall(r"^(\w+)=", blocks[1].code, re.M) == list(values), "the tour's variables changed"
    port = _free_port()  # the receiver's port, so a busy 9000 on this machine does not fail the tour

    process = await trio.lowlevel.open_process(
        ["bash", "--noprofile", "--norc"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT)
    shell = Shell(process)
    try:
        async with trio.open_nursery() as reading:
            reading.start_soon(shell.read_output)
            await shell.run("; ".join(f"{name}={shlex.quote(value)}" for name, value in values.items()))
            for number, block in enumerate(blocks[2:], start=3):
                commands = block.commands.replace(TOUR_RECEIVER_PORT, port)
                expected = block.expected
                assert expected or block.kind == "write" and "&" in commands, \
                    f"tour block {number} shows no output to check:\n{block.code}"
                start = await shell.run(commands)
                missing = await shell.wait_for(expected, start, 15 if block.kind == "write" else 1)
                deadline = trio.current_time() + 15
                while block.kind == "read" and missing and trio.current_time() < deadline:
                    start = await shell.run(commands)
                    missing = await shell.wait_for(expected, start, 1)
                assert not missing, (f"tour block {number} ({block.kind}) did not show {missing}:\n{block.code}\n"
                                     f"it printed:\n{shell.transcript[start:]}")
            await shell.run("kill %1")
            reading.cancel_scope.cancel()
    finally:
        process.kill()
        await process.wait()
        assert await stop(serve) == 0, serve.stderr
    assert "INVALID" not in shell.transcript
