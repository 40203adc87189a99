"""scripts/crash_sends.py, run as a user runs it, small, against the test session's PostgreSQL (it makes a database
of its own there and drops it): concurrent sends, half with an Idempotency-Key, while the service is SIGKILLed
and restarted; nothing acknowledged is lost and no key reaches the platform twice."""

from __future__ import annotations

import re

import pytest

from tests.e2e.test_bench_reporting_script import ONE_BENCH_DATABASE_AT_A_TIME, bench_databases
from tests.e2e.test_webhook_scripts import run_script


@pytest.mark.deep
@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_sends_across_a_sigkill_lose_nothing_acknowledged_and_never_send_a_key_twice(postgres_server):
    before = bench_databases(postgres_server.admin_url)
    done = run_script("crash_sends.py", "--sends", "150", "--chats", "30", "--kills", "1", "--kill-after", "0.3,1",
                      "--doubt-timeout", "5", "--settle-timeout", "60", "--database-url", postgres_server.admin_url)

    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert re.search(r"^sends: 150 \(75 with an Idempotency-Key\) to 30 chats in [\d.]+ s; 1 SIGKILLs", out, re.M), out
    finals = re.search(r"^final answers: acknowledged (\d+), failed 0, in doubt (\d+), none 0$", out, re.M)
    assert finals and int(finals[1]) + int(finals[2]) == 150, out
    assert re.search(r"every accepted send known to the database", out), out
    assert re.search(r"^acknowledged sends lost: 0$", out, re.M), out
    assert re.search(r"^sends delivered twice to the platform for one key: 0$", out, re.M), out
    assert re.search(r"^keyed sends answered two different messageIds: 0$", out, re.M), out
    assert re.search(r"^rows left in doubt: \d+ \(\d+ never reached the platform, 0 reached it", out, re.M), out
    assert re.search(r"^platform sends the database does not know: 0$", out, re.M), out
    assert bench_databases(postgres_server.admin_url) == before


def test_bad_arguments_exit_2_before_starting_anything():
    assert run_script("crash_sends.py", "--sends", "0").returncode == 2
    assert run_script("crash_sends.py", "--kill-after", "3,1").returncode == 2
