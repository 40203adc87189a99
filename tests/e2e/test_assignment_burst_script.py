"""scripts/assignment_burst.py, small, as an operator runs it (through `load_chats.py --assignment-burst`, the load
script's option for it): two nodes, 12 hand-overs over 2 agents of capacity 3, on the test session's PostgreSQL (its
own database there, dropped at the end)."""

from __future__ import annotations

import pytest

from tests.e2e.test_bench_reporting_script import ONE_BENCH_DATABASE_AT_A_TIME, bench_databases
from tests.e2e.test_webhook_scripts import run_script


@pytest.mark.deep
@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_a_burst_of_hand_overs_on_two_nodes_is_given_once_within_capacity(postgres_server):
    before = bench_databases(postgres_server.admin_url)
    done = run_script("load_chats.py", "--assignment-burst", "--nodes", "2", "--handovers", "12", "--seconds", "1",
                      "--members", "2", "--capacity", "3", "--free", "1", "--database-url", postgres_server.admin_url,
                      timeout=240)
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert "given: 6 chats (0 twice), expected 6; queued 6" in out, out
    assert "verdict: OK" in out
    assert bench_databases(postgres_server.admin_url) == before


def test_bad_arguments_exit_2_before_starting_anything():
    assert run_script("assignment_burst.py", "--members", "1").returncode == 2
