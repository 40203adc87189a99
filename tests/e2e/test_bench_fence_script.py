"""scripts/bench_fence.py, small, as an operator runs it: each fence's figures beside the unfenced write of its kind."""

from __future__ import annotations

import re

import pytest

from tests.e2e.test_webhook_scripts import run_script


@pytest.mark.deep
def test_a_small_run_prints_each_fence_against_the_unfenced():
    done = run_script("bench_fence.py", "--connections", "4", "--transactions", "400", "--rounds", "1", timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for variant in ("transaction, unfenced", r"transaction, row lock \(024\)", r"transaction, advisory \(037\)",
                    "lone write, unfenced", r"lone write, carried \(039\)"):
        assert re.search(rf"^{variant}(?: +[\d.]+ +[\d.]+x){{4}}$", done.stdout, re.M), variant + "\n" + done.stdout


def test_bad_arguments_exit_2_before_starting_anything():
    assert run_script("bench_fence.py", "--connections", "0").returncode == 2
