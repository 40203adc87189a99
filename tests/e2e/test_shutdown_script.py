"""scripts/shutdown_check.py, run as a user runs it, small, against the test session's PostgreSQL (it makes a
database of its own there and drops it): live chats with work queued, SIGTERM, nothing acknowledged lost."""

from __future__ import annotations

import re

import pytest

from tests.e2e.test_bench_reporting_script import ONE_BENCH_DATABASE_AT_A_TIME, bench_databases
from tests.e2e.test_webhook_scripts import number, run_script


@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_sigterm_with_work_queued_loses_nothing_acknowledged_and_the_service_exits_by_itself(postgres_server):
    before = bench_databases(postgres_server.admin_url)
    # 200 chats where --small has 500 (new chats are most of wave 1's time): 10 POSTs of 20 messages, SIGTERM once 2
    # are answered, with up to 8 (--concurrency) still under way.
    done = run_script("shutdown_check.py", "--small", "--chats", "200", "--grace", "3",
                      "--database-url", postgres_server.admin_url)

    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert re.search(r"^wave 1: 200 messages in 10 POSTs .*; 200 x10$", out, re.M), out
    assert re.search(r"^live after wave 1: 200 conversations", out, re.M), out
    assert re.search(r"^SIGTERM after \d+ of 10 POSTs answered, [\d,]+ messages in POSTs under way: "
                     r"200 conversations live", out, re.M), out
    exit_time = re.search(r"^time to exit: ([\d.]+) s after SIGTERM \(grace 3 s; exit status 0\)", out, re.M)
    assert exit_time and number(exit_time[1]) < 3 + 3 + 10, out   # HTTP's grace, the actors', slack
    figures = re.search(r"^acknowledged: ([\d,]+); stored: ([\d,]+); sent but not acknowledged: ([\d,]+)", out, re.M)
    assert figures, out
    acknowledged, stored, unacknowledged = (int(number(value)) for value in figures.groups())
    assert acknowledged + unacknowledged == 200 and acknowledged > 0 and stored >= acknowledged, out
    assert re.search(r"^lost: 0$", out, re.M), out
    assert bench_databases(postgres_server.admin_url) == before


def test_bad_arguments_exit_2_before_starting_anything():
    assert run_script("shutdown_check.py", "--chats", "0").returncode == 2
    assert run_script("shutdown_check.py", "--sigterm-after", "1.5").returncode == 2
