"""scripts/bench_broadcast.py, run as a user runs it, tiny, against the test session's PostgreSQL (it makes a database
of its own there and drops it): the baseline measured, the broadcast sent to every recipient once, and every figure
printed."""

from __future__ import annotations

import re

import pytest

from tests.e2e.test_bench_reporting_script import ONE_BENCH_DATABASE_AT_A_TIME, bench_databases
from tests.e2e.test_webhook_scripts import number, run_script


@pytest.mark.deep
@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_a_small_broadcast_bench_sends_to_everyone_once_and_prints_rate_cpu_and_memory(postgres_server):
    before = bench_databases(postgres_server.admin_url)
    done = run_script("bench_broadcast.py", "--recipients", "300", "--baseline-seconds", "1", "--actors-every", "1",
                      "--database-url", postgres_server.admin_url)

    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    base = re.search(r"^baseline: an httpx client on 16 connections posting template sends to a simulator of its "
                     r"own: ([\d,]+) sends/s over 1 s, 0 errors; CPU per 1,000 sends: simulator [\d.]+ s, client "
                     r"[\d.]+ s$", out, re.M)
    assert base and number(base[1]) > 0, out
    assert re.search(r"^bulk-send of 300 recipients answered 202 in [\d.]+ s", out, re.M), out
    assert re.search(r"^time to completion: [\d.]+ s from the bulk-send", out, re.M), out
    rate = re.search(r"^sustained send rate: ([\d,.]+) sends/s \(10% to 90% of the sends, [\d.]+ to [\d.]+ s\); "
                     r"([\d.]+)x the baseline's [\d,]+/s; \d+% of the broadcast's pace$", out, re.M)
    assert rate and number(rate[1]) > 0 and float(rate[2]) > 0, out
    # PostgreSQL is the session's server here, not the script's own: its CPU is not measured.
    assert re.search(r"^CPU per 1,000 sends: service [\d.]+ s, simulator [\d.]+ s, PostgreSQL not measured \(the "
                     r"baseline's simulator [\d.]+ s\)$", out, re.M), out
    rss = re.search(r"^service RSS: ([\d,]+) MiB before the bulk-send, max ([\d,]+) MiB, ([\d,]+) MiB at the end", out,
                    re.M)
    assert rss and 0 < number(rss[1]) <= number(rss[2]) and number(rss[3]) <= number(rss[2]), out
    assert re.search(r"^  by tenths of the sends: 10% [\d,]+ MiB, .* 100% [\d,]+ MiB$", out, re.M), out
    assert re.search(r"^live conversation actors \(at s\): .*\b300 \(\d+\)$", out, re.M), out
    counts = (r"^counts at the end \(GET /api/broadcasts/\{id\} answered in \d+ ms\): recipients 300, queued 0, "
              r"in_flight 0, sent 300, delivered \d+, read \d+, failed 0, skipped 0, cancelled 0$")
    assert re.search(counts, out, re.M), out
    assert re.search(r"^platform: 300 sends accepted, refused none$", out, re.M), out
    assert bench_databases(postgres_server.admin_url) == before


def test_bad_arguments_exit_2_before_starting_anything():
    assert run_script("bench_broadcast.py", "--recipients", "100001").returncode == 2
    assert run_script("bench_broadcast.py", "--rate", "0").returncode == 2
