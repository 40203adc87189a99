"""The main() the scripts share, written once so that none forgets a step: a temporary work directory, the
PostgreSQL the script runs on (harness.postgres), its trio run there, and on the way out, Ctrl-C included, what it
started stopped, the directory removed and a sentence instead of a traceback."""

from __future__ import annotations

import random
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import trio

from harness.postgres import postgres_server


def run_on_postgres(what: str, database_url: str | None, run: Callable[..., Awaitable[int]], *args: Any,
                    noun: str | None = None, count_statements: bool = False) -> int:
    """`trio.run(run, *args, server_url, postgres_pid, work_dir)` on PostgreSQL (embedded, in a temporary directory
    `inbox-<what>-*` removed afterwards, or --database-url's server, its pid then None); the run's exit status, or
    1 on Ctrl-C, said on stderr as "what the <noun> started was stopped" (`what` by default)."""
    work_dir = Path(tempfile.mkdtemp(prefix=f"inbox-{what}-"))
    try:
        with postgres_server(database_url, work_dir, count_statements=count_statements) as (server_url, pid):
            return trio.run(run, *args, server_url, pid, work_dir)
    except KeyboardInterrupt:
        print(f"interrupted; what the {noun or what} started was stopped", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)


def run_check(what: str, args: Any, run: Callable[..., Awaitable[int]]) -> int:
    """A crash check's main: `--seed` applied, `run(args, ...)` on PostgreSQL as run_on_postgres runs it, and the
    whole run's time on stderr at the end."""
    if args.seed is not None:
        random.seed(args.seed)
    started = time.perf_counter()
    try:
        return run_on_postgres(what, args.database_url, run, args, noun="check")
    finally:
        print(f"run: {time.perf_counter() - started:.1f} s", file=sys.stderr)
