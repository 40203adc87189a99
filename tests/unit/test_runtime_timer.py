import logging

import trio

from inbox_actors.runtime import repeat_every


async def test_job_runs_at_once_then_every_period_and_survives_failures(autojump_clock, caplog):
    runs: list[float] = []

    async def job():
        runs.append(trio.current_time())
        if len(runs) == 2:
            raise RuntimeError("database away")

    with trio.move_on_after(3 * 3600 + 1):
        await repeat_every(3600, job, name="test")
    assert runs == [0.0, 3600.0, 7200.0, 10800.0]
    assert "timer test failed" in caplog.text
    assert any(r.levelno == logging.ERROR for r in caplog.records)
