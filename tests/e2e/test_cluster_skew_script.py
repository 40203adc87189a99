"""scripts/cluster_check.py --skewed-clock, run as a user runs it, small, against the test session's PostgreSQL: a node
25 hours ahead (libfaketime) restarted among two others sweeps without forgetting any workspace's Idempotency-Key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.test_bench_reporting_script import ONE_BENCH_DATABASE_AT_A_TIME, bench_databases
from tests.e2e.test_webhook_scripts import number, run_script

ROOT = Path(__file__).resolve().parents[2]
# Installed, or unpacked without root by scripts/faketime (which scripts/test runs).
LIBFAKETIME = sorted(Path("/usr/lib").glob("*/faketime/libfaketime.so.1")) + sorted(
    (ROOT / ".venv" / "share" / "faketime" / "usr" / "lib").glob("*/faketime/libfaketime.so.1"))


@pytest.mark.deep
@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_a_node_25_hours_ahead_forgets_no_key_and_no_retried_send_goes_twice(postgres_server):
    if not LIBFAKETIME:
        pytest.fail("this test needs Debian's libfaketime: scripts/faketime gets it", pytrace=False)
    before = bench_databases(postgres_server.admin_url)
    done = run_script("cluster_check.py", "--skewed-clock", "--sends", "40", "--chats", "10", "--deadline", "120",
                      "--settle-timeout", "60", "--database-url", postgres_server.admin_url, timeout=400)

    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert re.search(r"^nodes: .*; node 3 runs 25 h ahead \(libfaketime\); workspaces held: \d+ by http://\S+, "
                     r"\d+ by http://\S+; platform", out, re.M), out
    gauge = re.search(r"^inbox_node_clock_skew_seconds: node 3 \+([\d,.]+) s \(\+25\.00 h\)", out, re.M)
    assert gauge and abs(number(gauge[1]) - 90_000) <= 5, out
    warned = re.search(r"^the skew warning in node 3's log: \d+ time\(s\), the first saying ([\d,.]+) s ahead$", out,
                       re.M)
    assert warned and abs(number(warned[1]) - 90_000) <= 5, out
    assert re.search(r"^retention sweeps of node 3 after its restart: .*idempotent_requests \(0 rows deleted\)", out,
                     re.M), out
    keys = re.search(r"^Idempotency-Key rows of the run: ([\d,]+) before the restart, ([\d,]+) after the skewed "
                     r"node's sweeps; deleted 0 \(bound 0\)$", out, re.M)
    assert keys and number(keys[1]) == number(keys[2]) > 0, out
    replayed = re.search(r"^acknowledged keyed sends sent again after the sweeps: ([\d,]+); replayed with their first "
                         r"messageId ([\d,]+), sent again 0 \(bound 0\)", out, re.M)
    assert replayed and number(replayed[1]) == number(replayed[2]) > 0, out
    assert re.search(r"^acknowledged sends lost: 0$", out, re.M), out
    assert re.search(r"^sends delivered twice to the platform for one key: 0$", out, re.M), out
    assert re.search(r"^unkeyed sends delivered more than once \(the client retried without a key\): 0$", out, re.M)
    assert re.search(r"^nodes that exited: 0 \(bound 0\)$", out, re.M), out
    assert re.search(r"acknowledged and not stored: 0 \(bound 0\); delivered again after the sweeps [\d,]+, stored "
                     r"twice: 0 \(bound 0\)$", out, re.M), out
    assert bench_databases(postgres_server.admin_url) == before
