"""Timers are supervised actors: the job runs at once and then every period; a failing round crashes the timer,
which operators see (restarts, last error) and which runs the job again after a backoff, however often it
fails."""

from __future__ import annotations

import trio

from inbox_actors.runtime import ActorSystem, Job, start_timers, timer_kind


async def test_a_job_runs_at_once_then_every_period(autojump_clock):
    runs: list[float] = []

    async def job(_actors):
        runs.append(trio.current_time())

    system = ActorSystem([timer_kind({"prune": Job(3600, job)})])
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        await start_timers(system, ["prune"])
        await trio.sleep(3 * 3600 + 1)
        assert runs == [0.0, 3600.0, 7200.0, 10800.0]
        stats = system.statistics("timer", "prune")
        assert stats is not None and stats.status == "running" and stats.tasks_running == 1
        await system.shutdown()


async def test_a_failing_round_shows_as_a_crash_and_is_retried_after_a_backoff_without_end(autojump_clock):
    runs: list[float] = []

    async def job(_actors):
        runs.append(trio.current_time())
        if len(runs) <= 20:
            raise RuntimeError("database away")

    system = ActorSystem([timer_kind({"prune": Job(3600, job)})])
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        await start_timers(system, ["prune"])
        await trio.sleep(1.0)
        stats = system.statistics("timer", "prune")
        assert stats.last_error == "RuntimeError: database away", "an operator sees the failing timer"
        await trio.sleep(20 * 3600)
        assert len(runs) > 21, "twenty failures in a row did not stop it"
        gaps = [b - a for a, b in zip(runs, runs[1:21])]
        assert gaps[0] < 1.0 and max(gaps) <= 3600, "retried after a backoff that grows up to the period"
        assert system.statistics("timer", "prune").status == "running"
        await system.shutdown()
