"""scripts/bench_reporting.py, run as a user runs it: the small preset, a few calls of each read, against the
test session's PostgreSQL (the script makes a database of its own there and drops it)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_reporting.py"
READS = (
    "whoami (baseline)", "conversations", "conversations unread=true", "conversations sort=waiting_longest",
    "unread-summary", "unanswered older_than=1h", "chat detail", "messages expand=receipts", "receipts", "seen-by",
    "views", "replies (chat)", "assignment-history", "replies sender_type=bot", "messages status=failed",
    "contacts/paginated", "contacts/paginated search=dehumidifier", "contacts/{phone}",
)


def run_script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(_SCRIPT), *args], capture_output=True, text=True, timeout=120)


# For a test that compares bench_databases before and after its script: no other such test on the same server
# meanwhile (see the fixture in tests/e2e/conftest.py).
ONE_BENCH_DATABASE_AT_A_TIME = pytest.mark.usefixtures("alone_with_bench_databases")


def bench_databases(admin_url: str) -> list[str]:
    async def names() -> list[str]:
        connection = await asyncpg.connect(admin_url)
        try:
            return [row[0] for row in await connection.fetch(
                "SELECT datname FROM pg_database WHERE datname LIKE 'inbox_bench_%'")]
        finally:
            await connection.close()

    return asyncio.run(names())


@pytest.mark.deep
@ONE_BENCH_DATABASE_AT_A_TIME
def test_the_small_preset_seeds_times_every_read_explains_the_slowest_and_drops_its_database(postgres_server):
    before = bench_databases(postgres_server.admin_url)
    done = run_script("--small", "--repeat", "2", "--warmup", "1", "--database-url", postgres_server.admin_url)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    seeded = dict(re.findall(r"^\s+(messages|receipts|contacts|conversations)\s+([\d,]+) rows .* rows/s$", out, re.M))
    assert seeded["messages"] == "20,000" and seeded["conversations"] == "500", out[:2000]
    assert re.search(r"^call\s+p50 ms\s+p99 ms\s+rows", out, re.M), out
    table = {match[0].strip(): (float(match[1]), float(match[2]), int(match[3]))
             for match in re.findall(r"^(\S.*?)\s+(\d+\.\d)\s+(\d+\.\d)\s+(\d+)\s", out, re.M)}
    for read in READS:
        assert read in table, f"{read} missing from:\n{out}"
    assert all(p50 <= p99 for p50, p99, _ in table.values())
    assert table["conversations"][2] == 50 and table["contacts/paginated"][2] == 50
    assert "EXPLAIN (ANALYZE, BUFFERS) of" in out and "Execution Time" in out
    assert bench_databases(postgres_server.admin_url) == before


def test_bad_arguments_exit_2_before_touching_any_database():
    assert run_script("--conversations", "100", "--messages", "10").returncode == 2
    assert run_script("--keep").returncode == 2
