"""scripts/load_chats.py --balancer, run as a user runs it against `serve --nodes 2`: HAProxy in front of the nodes
sends each workspace's webhooks to the node holding it (docs/nodes.md, "Sending each workspace to its node"), so only
the first of each number can be relayed, and its CPU counts with the rest."""

from __future__ import annotations

import json

import pytest

from tests.e2e.test_bench_reporting_script import ONE_BENCH_DATABASE_AT_A_TIME, bench_databases
from tests.e2e.test_webhook_scripts import run_script
from tests.haproxy import HOW_TO_GET_ONE, find_haproxy


@pytest.mark.deep
@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_two_nodes_behind_the_balancer_relay_almost_nothing_and_its_cpu_is_counted(postgres_server):
    if find_haproxy() is None:
        pytest.fail(HOW_TO_GET_ONE, pytrace=False)
    before = bench_databases(postgres_server.admin_url)
    done = run_script("load_chats.py", "--spawn", "--nodes", "2", "--workspaces", "2", "--balancer",
                      "--responder", "faq", "--customers", "6", "--messages-per-customer", "4",
                      "--poll-interval", "0.02", "--database-url", postgres_server.admin_url, timeout=400)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "behind HAProxy routing by workspace" in done.stderr
    summary = json.loads(done.stdout.splitlines()[-1])
    assert (summary["nodes"], summary["workspaces"], summary["errors"]) == (2, 2, {})
    assert summary["messages_delivered"] == 24 and summary["chats_verified"] == 6
    assert sum(summary["workspaces_held"]) == 2
    # The platform's webhooks (messages and statuses) and the chats read back at the end, through HAProxy: what
    # reaches a node not holding its workspace before an answer has named the holder, at most a few per workspace.
    assert summary["requests_answered"] > 24 and summary["requests_relayed"] <= 8, summary
    assert set(summary["process_cpu_seconds"]) == {"serve", "node-1", "node-2", "simulator", "balancer"}
    assert summary["cpu_ms_per_message"]["balancer"] > 0
    assert bench_databases(postgres_server.admin_url) == before


def test_the_balancer_goes_with_two_nodes_or_more():
    done = run_script("load_chats.py", "--spawn", "--nodes", "1", "--balancer")
    assert done.returncode == 2 and "--balancer goes with two nodes or more" in done.stderr
