"""scripts/bench_webhooks.py and scripts/webhook_crash_check.py, run as a user runs them, small, against the test
session's PostgreSQL (each makes a database of its own there and drops it)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_bench_reporting_script import ONE_BENCH_DATABASE_AT_A_TIME, bench_databases

_SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def run_script(name: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(_SCRIPTS / name), *args], capture_output=True, text=True,
                          timeout=timeout)


def number(text: str) -> float:
    return float(text.replace(",", ""))


@pytest.mark.deep
@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_the_small_bench_drains_its_backlog_times_both_steady_rates_and_drops_its_database(postgres_server):
    before = bench_databases(postgres_server.admin_url)
    # Smaller than --small (5,000 rows, 2 s steady runs): the same phases and figures in a third of the time.
    done = run_script("bench_webhooks.py", "--rows", "1000", "--steady-seconds", "1", "--baseline-seconds", "1",
                      "--database-url", postgres_server.admin_url)

    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert number(re.search(r"^baseline: .* ([\d,]+) requests/s", out, re.M)[1]) > 0, out
    drain = re.search(r"^backlog drain: ([\d,]+) of ([\d,]+) received in [\d.]+ s after COMMIT: ([\d,]+) events/s",
                      out, re.M)
    assert drain and drain[1] == drain[2] == "1,000" and number(drain[3]) > 0, out
    assert re.search(r"1,000 distinct correlation ids, 0 duplicates; outbox outcomes \{'delivered': 1000\}", out), out
    assert re.search(r"service CPU \d+\.\d+ s per 1,000 events", out), out
    assert re.search(r"service RSS: [\d.]+ MiB before, peak [\d.]+ MiB during the drain", out), out
    assert re.search(r"drain rate / receiver capacity \(baseline\): \d+\.\d\d", out), out
    for rate, rows in (("500", "500"), ("1,000", "1,000")):
        steady = re.search(rf"^steady {rate}/s: {rows} rows .* delivered ([\d,]+) .*\n"
                           r"  commit-to-delivery p50 ([\d.]+) ms, p99 ([\d.]+) ms, max ([\d.]+) ms", out, re.M)
        assert steady and steady[1] == rows, out
        assert 0 < float(steady[2]) <= float(steady[3]) <= float(steady[4]), out
    assert re.search(r"^lost: 0$", out, re.M), out
    assert bench_databases(postgres_server.admin_url) == before


@pytest.mark.deep
@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_after_a_sigkill_mid_stream_the_restarted_service_delivers_every_committed_event(postgres_server):
    before = bench_databases(postgres_server.admin_url)
    # A second of stream on each side of the kill: about 60 messages, every one of the 20 numbers writing.
    done = run_script("webhook_crash_check.py", "--rate", "30", "--phones", "20", "--kill-after", "1",
                      "--after-restart", "1", "--database-url", postgres_server.admin_url)

    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert re.search(r"^killed \(SIGKILL\) after 1 s: ", out, re.M), out
    outbox = re.search(r"^outbox: ([\d,]+) rows \(.*'contact_created': 20\b", out, re.M)
    assert outbox and number(outbox[1]) > 20, out          # every number's contact and messages from both runs
    assert re.search(r"^acknowledged messages without a message_received row: 0$", out, re.M), out
    assert re.search(r"0 bad signatures", out), out
    assert re.search(r"^lost: 0$", out, re.M), out
    assert re.search(r"^duplicates: \d+$", out, re.M), out
    assert bench_databases(postgres_server.admin_url) == before


def test_bad_arguments_exit_2_before_starting_anything():
    assert run_script("bench_webhooks.py", "--rates", "fast").returncode == 2
    assert run_script("bench_webhooks.py", "--rows", "-1").returncode == 2
    assert run_script("webhook_crash_check.py", "--rate", "0").returncode == 2
