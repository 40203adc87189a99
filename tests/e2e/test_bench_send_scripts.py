"""scripts/bench_send.py and scripts/soak_requests.py, run as a user runs them, tiny: every phase measured and
printed, statements counted, the slowest answer recorded, and what they started stopped and dropped."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.e2e.test_bench_reporting_script import ONE_BENCH_DATABASE_AT_A_TIME, bench_databases
from tests.e2e.test_webhook_scripts import _SCRIPTS, number, run_script

PHASES = ("sends to 4 existing chats", "sends to a new chat each", "whoami", "platform webhooks, one message each",
          "platform webhooks, envelopes of 50")


@pytest.mark.deep
@pytest.mark.slow
def test_the_tiny_send_bench_measures_every_phase_against_the_bare_app_and_counts_statements():
    # Its own embedded PostgreSQL (the one that loads pg_stat_statements), so the counts are exercised too. 50
    # customers write in (an envelope's worth; the deep run's 1,024 new chats were most of this test's time).
    done = subprocess.run([sys.executable, str(_SCRIPTS / "bench_send.py"), "--seconds", "0.5", "--clients", "4",
                           "--client-processes", "1", "--chats", "4", "--customers", "50", "--count", "1"],
                          capture_output=True, text=True, timeout=300)

    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    bare = re.search(r"^bare Hypercorn-trio app, GET /, 4 clients, [\d.]+ s: ([\d,]+) requests/s, errors 0", out, re.M)
    assert bare and number(bare[1]) > 0, out
    for phase in PHASES:
        line = re.search(rf"^{re.escape(phase)}, 4 clients, [\d.]+ s: ([\d,.]+) (?:requests|messages)/s = "
                         r"([\d.]+)x bare; [\d,]+ requests, errors 0; p50 [\d.]+ ms, p99 [\d.]+ ms[^\n]*\n"
                         r"  by CPU: ([\d.]+)x bare(?: \(target >= [\d.]+x: (?:met|MISSED)\))? \(service", out, re.M)
        assert line and number(line[1]) > 0 and float(line[2]) > 0 and float(line[3]) > 0, phase + "\n" + out
    assert len(re.findall(r"^  CPU per 1,000 (?:requests|messages): service [\d.]+ s .*PostgreSQL [\d.]+ s; "
                          r"simulator [\d.]+ s; client: 1 processes", out, re.M)) == len(PHASES), out
    sends = re.search(r"^send to an existing chat \(x1, answers \{200: 1\}\): ([\d.]+) statements in ([\d.]+) round "
                      r"trips while answered", out, re.M)
    assert sends and float(sends[1]) >= float(sends[2]) > 0, out
    assert re.search(r"^  actor messages while answered: .*conversation 1\.00", out, re.M), out
    assert re.search(r"^whoami \(x1, answers \{200: 1\}\): ", out, re.M), out
    assert re.search(r"^platform webhook, one message \(x1, answers \{200: 1\}\): ", out, re.M), out
    assert re.search(r"^  new chats / existing chats, by CPU: [\d.]+ \(target >= 0\.8: (?:met|MISSED)\)", out,
                     re.M), out


@pytest.mark.deep
@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_a_short_soak_records_the_slowest_answer_of_every_kind_and_drops_its_database(postgres_server):
    before = bench_databases(postgres_server.admin_url)
    # 40 requests: every kind of the mix (15 in turn) at least twice; a read key made before the clock and one during.
    done = run_script("soak_requests.py", "--seconds", "2", "--rate", "20", "--chats", "4", "--new-key-every", "1",
                      "--database-url", postgres_server.admin_url)

    out = done.stdout
    assert done.returncode in (0, 1), out[-3000:] + done.stderr[-3000:]
    for kind in ("whoami", "contacts list", "contacts, fresh key", "conversations", "send", "create key"):
        row = rf"^  {re.escape(kind)} +[1-9][\d,]* +0 +[\d.]+ +[\d.]+ +[\d.]+$"
        assert re.search(row, out, re.M), kind + "\n" + out
    worst = re.search(r"^max latency: (\d+) ms; requests over 250 ms: (\d+); errors: 0$", out, re.M)
    assert worst and number(worst[1]) > 0, out
    # Exit 1 only for answers over 250 ms, each printed with its path.
    assert (done.returncode == 1) == (int(worst[2]) > 0) == ("SLOW " in out), out
    # The service's collections, timed by generation, read from its /metrics.
    assert re.search(r"^  gen2: [\d,]+, [\d,]+ ms, \d+ / \d+ / \d+$", out, re.M), out
    assert bench_databases(postgres_server.admin_url) == before


def test_bad_arguments_exit_2_before_starting_anything():
    assert run_script("bench_send.py", "--clients", "0").returncode == 2
    assert run_script("bench_send.py", "--customers", "49").returncode == 2
    assert run_script("soak_requests.py", "--rate", "0").returncode == 2
