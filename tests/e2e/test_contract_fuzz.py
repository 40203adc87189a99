"""scripts/fuzz_contract.py, run as a user runs it, against the test session's PostgreSQL (it makes a database of
its own there and drops it): Schemathesis with every check and every phase on, a fixed seed, over every operation
of http/openapi.json on the real service. Any failure (a 5xx, a status the contract does not list, valid input
refused, invalid input accepted, a body unlike its schema...) fails the test.

3 examples per operation, where the script's own run takes 100 (see docs/development.md, Deep runs). The suite's
pass leaves out Schemathesis' coverage phase, which --examples does not bound (some 6,700 cases here, every
operation's boundaries and invalid values: 5 to 6 minutes on the 2-core machine); the deep run keeps it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.test_bench_reporting_script import ONE_BENCH_DATABASE_AT_A_TIME, bench_databases
from tests.e2e.test_webhook_scripts import run_script

CONTRACT = Path(__file__).resolve().parents[2] / "http" / "openapi.json"
METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}


def contract_operations() -> int:
    paths = json.loads(CONTRACT.read_text())["paths"]
    return sum(1 for item in paths.values() for method in item if method in METHODS)


@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_a_quick_pass_over_every_operation_answers_as_the_contract_says(postgres_server):
    """The suite's pass: every operation, 3 examples each, without the coverage phase (its thousands of boundary
    cases are the deep run's, below): some 700 cases, every check."""
    _fuzz(postgres_server, ("--phases", "examples,fuzzing,stateful"), least_cases=500)


@pytest.mark.deep
@pytest.mark.slow
@ONE_BENCH_DATABASE_AT_A_TIME
def test_every_operation_of_the_contract_answers_as_the_contract_says(postgres_server):
    _fuzz(postgres_server, (), least_cases=2000)


def _fuzz(postgres_server, phases: tuple[str, ...], least_cases: int) -> None:
    before = bench_databases(postgres_server.admin_url)
    done = run_script("fuzz_contract.py", "--examples", "3", "--seed", "1", *phases,
                      "--database-url", postgres_server.admin_url, timeout=600)

    out = done.stdout
    assert done.returncode == 0, out[-6000:] + done.stderr[-3000:]
    fuzzed = re.search(r"^operations fuzzed: (\d+); cases: ([\d,]+);", out, re.M)
    # Every operation of the contract (the stateful phase's scenarios may add one label more).
    assert fuzzed and int(fuzzed[1]) >= contract_operations() and int(fuzzed[2].replace(",", "")) > least_cases, out
    for check in ("not_a_server_error", "status_code_conformance", "positive_data_acceptance",
                  "negative_data_rejection", "response_schema_conformance", "server_errors_are_platform_refusals"):
        assert re.search(rf"^{check} +[1-9][\d,]* +0$", out, re.M), check + "\n" + out
    assert re.search(r"^failures: 0; fuzzer errors: 0$", out, re.M), out
    assert bench_databases(postgres_server.admin_url) == before


def test_bad_arguments_exit_2_before_starting_anything():
    assert run_script("fuzz_contract.py", "--examples", "0").returncode == 2
    assert run_script("fuzz_contract.py", "--phases", "coverage,everything").returncode == 2
