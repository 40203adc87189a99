"""scripts/bench_fence.py, small, as an operator runs it: each fence's figures beside the unfenced ones."""

from __future__ import annotations

import re

import pytest

from tests.e2e.test_webhook_scripts import run_script


@pytest.mark.deep
def test_a_small_run_prints_each_fence_against_the_unfenced():
    done = run_script("bench_fence.py", "--connections", "4", "--transactions", "400", "--rounds", "1", timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for variant in ("unfenced", r"row lock \(migration 024\)", r"advisory lock \(migration 037\)"):
        assert re.search(rf"^{variant} +[\d.]+ +[\d.]+x +[\d.]+$", done.stdout, re.M), variant + "\n" + done.stdout


def test_bad_arguments_exit_2_before_starting_anything():
    assert run_script("bench_fence.py", "--connections", "0").returncode == 2
