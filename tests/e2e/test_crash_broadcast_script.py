"""scripts/crash_broadcast.py, run as a user runs it, small, against the test session's PostgreSQL (it makes a
database of its own there and drops it): a broadcast is SIGKILLed a third of the way through, the service started
again resumes it, and every recipient gets the message once (none twice, none lost, none left in flight)."""

from __future__ import annotations

import re

import pytest

from tests.e2e.test_bench_reporting_script import ONE_BENCH_DATABASE_AT_A_TIME, bench_databases
from tests.e2e.test_webhook_scripts import run_script


@pytest.mark.deep
@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_a_broadcast_killed_mid_way_resumes_and_reaches_every_recipient_exactly_once(postgres_server):
    before = bench_databases(postgres_server.admin_url)
    # The platform at twice the service's rate: the resumed broadcast's first burst is not refused 130429, whose
    # recipients would wait 30 s for their retry. 90 recipients at 80 sends/s (the script's deep run: 400 at 40):
    # a broadcast of about 1.5 s, killed once 30 are sent.
    done = run_script("crash_broadcast.py", "--recipients", "90", "--rate", "80", "--platform-throughput", "160",
                      "--deadline", "60", "--database-url", postgres_server.admin_url)

    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    killed = re.search(r"^  SIGKILL [\d.]+ s after the bulk-send: (\d+) sent by the API's counts, (\d+) accepted by "
                       r"the platform$", out, re.M)
    assert killed and 30 <= int(killed[1]) <= int(killed[2]) < 90, out
    assert re.search(r"^  broadcast \d+: completed [\d.]+ s after the bulk-send, every accepted send settled", out,
                     re.M), out
    assert re.search(r"^recipients: 90$", out, re.M), out
    assert re.search(rf"^sent before the kill: {killed[2]} \(the API's counts said {killed[1]} sent\)$", out, re.M), out
    # Every one once: a recipient left in flight by the kill (committed, never reaching the platform) is sent again
    # once the resumed broadcast has waited for its status (before: never sent, 0 to 16 of them a run).
    assert re.search(r"^got it once: 90$", out, re.M), out
    assert re.search(r"^never got it: 0 \(left in doubt 0, lost 0\)$", out, re.M), out
    assert re.search(r"^got it twice: 0$", out, re.M), out
    resumed = re.search(r"^time to resume: ([\d.]+) s from the kill to the first send of the new process \(ready "
                        r"after ([\d.]+) s\)$", out, re.M)
    assert resumed and float(resumed[2]) <= float(resumed[1]) < 30, out
    assert re.search(r"^total time: [\d.]+ s from the bulk-send to completed$", out, re.M), out
    assert bench_databases(postgres_server.admin_url) == before


def test_bad_arguments_exit_2_before_starting_anything():
    assert run_script("crash_broadcast.py", "--recipients", "0").returncode == 2
    assert run_script("crash_broadcast.py", "--kill-at", "1.5").returncode == 2
