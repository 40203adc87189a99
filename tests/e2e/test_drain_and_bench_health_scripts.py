"""scripts/drain_check.py and scripts/bench_health.py, run as a user runs them, small, against the test session's
PostgreSQL (each makes a database of its own there and drops it)."""

from __future__ import annotations

import re

import pytest

from tests.e2e.test_bench_reporting_script import ONE_BENCH_DATABASE_AT_A_TIME, bench_databases
from tests.e2e.test_webhook_scripts import number, run_script


@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_sigterm_under_api_load_turns_readiness_false_first_and_loses_no_request(postgres_server):
    before = bench_databases(postgres_server.admin_url)
    done = run_script("drain_check.py", "--small", "--grace", "5", "--database-url", postgres_server.admin_url)

    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    timing = re.search(r"^time to exit: ([\d.]+) s after SIGTERM \(exit status 0\); readiness false seen after "
                       r"([\d.]+) s; last 2xx answer ([\d.]+) s after SIGTERM", out, re.M)
    assert timing, out
    exit_seconds, ready_false, last_2xx = (number(value) for value in timing.groups())
    assert ready_false < last_2xx < exit_seconds < 0.5 + 5 + 5 + 10, out   # drain, HTTP's grace, actors', slack
    assert re.search(r"^readiness before SIGTERM: \{200: \d+\}$", out, re.M), out
    assert re.search(r"^service's drain: drained HTTP: \d+ requests answered while draining, 0 taken and left "
                     r"unanswered, \d+ refused 503 once HTTP stopped$", out, re.M), out
    stored = re.search(r"writes acknowledged: ([\d,]+), contacts stored: ([\d,]+)$", out, re.M)
    assert stored and 0 < number(stored[1]) <= number(stored[2]), out
    assert re.search(r"^requests refused: [\d,]+ ", out, re.M), out
    assert re.search(r"^requests lost: 0 ", out, re.M), out
    assert bench_databases(postgres_server.admin_url) == before


@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_bench_health_times_the_actor_summary_at_two_sizes(postgres_server):
    before = bench_databases(postgres_server.admin_url)
    done = run_script("bench_health.py", "--baseline", "50", "--actors", "500", "--calls", "5",
                      "--database-url", postgres_server.admin_url)

    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    for label, probes in (("baseline", 50), ("at scale", 500)):
        found = re.search(rf"^{label}: ([\d,]+) actors live: GET /health/actors p50 ([\d.]+) ms, p99 ([\d.]+) ms",
                          out, re.M)
        assert found and number(found[1]) >= probes and 0 < number(found[2]) <= number(found[3]), out
    assert re.search(r"^ratio p50 at 500 / at 50 probes: [\d.]+x; p99 at scale [\d.]+ ms", out, re.M), out
    assert re.search(r"^ratio p50 at 500 / at 50 probes: GET /metrics [\d.]+x, p99 at scale [\d.]+ ms", out, re.M), out
    assert bench_databases(postgres_server.admin_url) == before


def test_bad_arguments_exit_2_before_starting_anything():
    assert run_script("drain_check.py", "--clients", "0").returncode == 2
    assert run_script("bench_health.py", "--baseline", "10", "--actors", "5").returncode == 2
