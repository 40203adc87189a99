"""scripts/cluster_check.py and scripts/bench_forwarding.py, run as a user runs them, small, against the test session's
PostgreSQL (each makes a database of its own there and drops it)."""

from __future__ import annotations

import re

import pytest

from tests.e2e.test_bench_reporting_script import ONE_BENCH_DATABASE_AT_A_TIME, bench_databases
from tests.e2e.test_webhook_scripts import number, run_script


@pytest.mark.deep
@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_a_node_killed_under_sends_loses_nothing_and_its_workspace_answers_again_within_three_seconds(postgres_server):
    before = bench_databases(postgres_server.admin_url)
    done = run_script("cluster_check.py", "--sends", "60", "--chats", "10", "--kill-after", "0.5",
                      "--database-url", postgres_server.admin_url)

    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert re.search(r"^nodes: .*; the workspace is held by http://127\.0\.0\.1:\d+;", out, re.M), out
    assert re.search(r"^SIGKILL of node 3 \(pid \d+\) ", out, re.M), out
    # Its liveness lock told the others at once (7.2 to 7.6 s before, the lease's expiry).
    answered = re.search(r"^the workspace answered again ([\d.]+) s after the SIGKILL \(bound 3 s\)$", out, re.M)
    assert answered and float(answered[1]) <= 3, out
    send = re.search(r"^the first send started after it was answered 200 (?:([\d.]+) s after it|never .*)$", out, re.M)
    assert send and (send[1] is None or float(send[1]) <= 4), out
    assert re.search(r"^acknowledged sends lost: 0$", out, re.M), out
    assert re.search(r"^sends delivered twice to the platform for one key: 0$", out, re.M), out
    events = re.search(r"^webhook events \(message_sent\): ([\d,]+) in the outbox, ([\d,]+) received$", out, re.M)
    assert events and number(events[1]) == number(events[2]) > 0, out
    assert re.search(r"^webhook events lost: 0$", out, re.M), out
    assert bench_databases(postgres_server.admin_url) == before


@pytest.mark.deep
@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_the_forwarding_bench_times_the_right_and_the_wrong_node(postgres_server):
    before = bench_databases(postgres_server.admin_url)
    done = run_script("bench_forwarding.py", "--requests", "200", "--rounds", "2",
                      "--database-url", postgres_server.admin_url)

    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    holder = r"^nodes: http://\S+ \(holds the workspace: http://127\.0\.0\.1:\d+\), http://\S+$"
    assert re.search(holder, out, re.M), out
    for way in ("right", "wrong"):
        assert re.search(rf"^{way} node: 200 requests, p50 [\d.]+ ms, p99 [\d.]+ ms; CPU per request", out, re.M), out
    assert re.search(r"^landing on the wrong node adds -?[\d.]+ ms at p50 and [\d.]+ ms of the relaying node's CPU "
                     r"per request \([\d.]+ of answering it\)$", out, re.M), out
    # The per-IP ceiling's part: an address of each owner found, each kind of call timed.
    for said in ("exempt from the ceiling", "admitted in the first node's bucket", "admitted by the second node"):
        assert re.search(rf"^ceiling, {said}: 200 calls, p50 [\d.]+ ms, p99 [\d.]+ ms; CPU per request", out,
                         re.M), out
    assert re.search(r"^an admission costs -?[\d.]+ ms of CPU in the node's own bucket .*; asked of the owner, "
                     r"-?[\d.]+ ms of the asking node's", out, re.M), out
    assert bench_databases(postgres_server.admin_url) == before


@pytest.mark.deep
@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_a_node_paused_past_its_lease_writes_nothing_for_its_workspace_once_it_wakes(postgres_server):
    before = bench_databases(postgres_server.admin_url)
    # The time back is the script's figure (12 s at most on a quiet machine); on two cores shared with the suite's
    # other workers it measured 12.12 s once (2026-11-28), so here it is held to 20 s.
    done = run_script("cluster_check.py", "--pause", "--sends", "60", "--chats", "10", "--kill-after", "0.5",
                      "--pause-past", "0.5", "--back-after", "20", "--database-url", postgres_server.admin_url)

    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert re.search(r"^SIGSTOP of node 3 \(pid \d+\) ", out, re.M), out
    assert re.search(r"^the workspace passed to http://127\.0\.0\.1:\d+ \(epoch 2\); SIGCONT 0\.5 s later$", out, re.M)
    answered = re.search(r"^the workspace answered again ([\d.]+) s after the SIGSTOP \(bound 20 s\)$", out, re.M)
    assert answered and float(answered[1]) <= 20, out
    writes = re.search(r"^rows of the workspace the paused node wrote: ([\d,]+) before the takeover, 0 after it "
                       r"\(bound 0\); the node that took over wrote ([\d,]+) after it$", out, re.M)
    assert writes and number(writes[1]) > 0 and number(writes[2]) > 0, out
    assert re.search(r"^acknowledged sends lost: 0$", out, re.M), out
    assert re.search(r"^webhook events lost: 0$", out, re.M), out
    assert bench_databases(postgres_server.admin_url) == before


@pytest.mark.deep
@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_a_database_outage_under_traffic_ends_no_node_and_sends_answer_again_within_seconds(postgres_server):
    """--postgres-restart on a server the script may not restart (--database-url): its database refuses connections
    and its sessions are ended for the outage instead. The time back is the script's figure (2 s at most on a quiet
    machine: 0.68 and 1.01 s, 2026-11-28); the suite's run shares two cores with the other workers, where it measured
    2.15 and 2.99 s, so here it is held to 5 s: a service stuck after the outage still fails."""
    before = bench_databases(postgres_server.admin_url)
    done = run_script("cluster_check.py", "--postgres-restart", "--chats", "10", "--kill-after", "1", "--down-for",
                      "3", "--after", "5", "--back-within", "5", "--sends-per-second", "10",
                      "--customers-per-second", "10", "--database-url", postgres_server.admin_url)

    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert re.search(r"^PostgreSQL restart: database inbox_bench_cluster_\d+ refused connections and its sessions "
                     r"were ended \(--database-url: not restarted\); out [\d.]+ s", out, re.M), out
    back = re.search(r"^the first send sent after PostgreSQL's return answered 200 after ([\d.]+) s \(bound 5 s\)$",
                     out, re.M)
    assert back and float(back[1]) <= 5, out
    assert re.search(r"^answers: .*send 503 x", out, re.M), "sends during the outage were answered 503"
    assert re.search(r"^5xx without Retry-After: 0 \(bound 0\)$", out, re.M), out
    assert re.search(r"acknowledged and not stored: 0 \(bound 0\)$", out, re.M), out
    assert re.search(r"^nodes that exited: 0 \(bound 0\)$", out, re.M), out
    assert bench_databases(postgres_server.admin_url) == before
