"""statistics() and summary(): what an operator reads at GET /health/actors."""

from __future__ import annotations

from datetime import datetime, timezone

import msgspec
import pytest
import trio
import trio.testing

from inbox_actors.runtime import ActorCrashed, ActorStatistics, SystemSummary

from .runtime_harness import Crash, Echo, Hold, Probe, running


async def test_statistics_of_a_live_actor(autojump_clock):
    probe = Probe()
    async with running(probe.kind(mailbox_capacity=8)) as system:
        await trio.sleep(100)
        ref = system.ref("probe", "k")
        await ref.ask(Echo("one"))
        await trio.sleep(5)
        await ref.ask(Echo("two"))
        gate = trio.Event()
        ref.tell_nowait(Hold("held", gate))
        ref.tell_nowait(Echo("queued"))
        await trio.testing.wait_all_tasks_blocked()

        stats = system.statistics("probe", "k")
        assert stats.kind == "probe" and stats.key == "k" and stats.status == "running"
        assert (stats.mailbox_used, stats.mailbox_capacity) == (1, 8)
        assert stats.messages_handled == 2
        assert (stats.restarts, stats.last_error, stats.last_error_at) == (0, None, None)
        assert stats.started_at == 100
        assert stats.last_activity_at == 105
        started_wall = datetime.fromisoformat(stats.started_at_wall.replace("Z", "+00:00"))
        assert started_wall.tzinfo is not None and started_wall.utcoffset().total_seconds() == 0
        assert abs((datetime.now(timezone.utc) - started_wall).total_seconds()) < 60
        gate.set()


async def test_statistics_of_an_unknown_or_passivated_actor_is_none(autojump_clock):
    probe = Probe()
    async with running(probe.kind(idle_timeout=10)) as system:
        assert system.statistics("probe", "never-addressed") is None
        await system.ref("probe", "k").ask(Echo("hi"))
        assert system.statistics("probe", "k") is not None
        await trio.sleep(11)
        assert system.statistics("probe", "k") is None


async def test_summary_counts_busiest_and_failing(autojump_clock):
    probe = Probe()
    conversations = probe.kind("conversation", max_restarts=0, failed_cooldown=100, idle_timeout=1000)
    buckets = probe.kind("bucket", idle_timeout=1000)
    async with running(conversations, buckets) as system:
        for n in range(3):
            await system.ref("conversation", "quiet").ask(Echo(str(n)))
        gate = trio.Event()
        busy = system.ref("conversation", "busy")
        busy.tell_nowait(Hold("held", gate))
        await trio.testing.wait_all_tasks_blocked()
        busy.tell_nowait(Echo("q1"))
        busy.tell_nowait(Echo("q2"))

        await trio.sleep(1)
        with pytest.raises(ActorCrashed):
            await system.ref("conversation", "broken").ask(Crash("first"))
        await trio.sleep(1)
        bucket = system.ref("bucket", "ip")
        await bucket.ask(Echo("warm-up"))
        with pytest.raises(ActorCrashed):
            await bucket.ask(Crash("second"))
        await bucket.ask(Echo("after the restart"))

        summary = system.summary(busiest=2)
        assert summary.accepting
        conv = summary.kinds["conversation"]
        assert (conv.live, conv.failed, conv.mailbox_used, conv.messages_handled) == (2, 1, 2, 3)
        assert summary.kinds["bucket"].restarts == 1
        assert [(s.kind, s.key) for s in summary.busiest] == [("conversation", "busy"), ("conversation", "quiet")]
        assert [(s.key, s.status) for s in summary.failing] == [("ip", "running"), ("broken", "failed")]
        gate.set()


async def test_statistics_and_summary_encode_as_json(autojump_clock):
    probe = Probe()
    async with running(probe.kind()) as system:
        await system.ref("probe", "k").ask(Echo("hi"))
        stats = system.statistics("probe", "k")
        assert msgspec.json.decode(msgspec.json.encode(stats), type=ActorStatistics) == stats
        summary = system.summary()
        assert msgspec.json.decode(msgspec.json.encode(summary), type=SystemSummary) == summary
        assert msgspec.json.decode(msgspec.json.encode(summary))["kinds"]["probe"]["live"] == 1


async def test_a_ref_reads_its_actor_s_statistics_and_reading_changes_nothing(autojump_clock):
    probe = Probe()
    async with running(probe.kind(max_restarts=0, failed_cooldown=10)) as system:
        ref = system.ref("probe", "k")
        assert ref.statistics() is None, "nothing live yet"
        await ref.ask(Echo("hi"))
        assert ref.statistics().messages_handled == 1
        with pytest.raises(ActorCrashed):
            await ref.ask(Crash("boom"))
        assert ref.statistics().status == "failed"
        await trio.sleep(11)  # the cooldown is over: the actor no longer shows...
        assert ref.statistics() is None and system.summary().kinds["probe"].failed == 0
        # ...yet reading forgot nothing: the failed cell is dropped by the next send, which starts it afresh.
        assert ("probe", "k") in system._cells
        assert await ref.ask(Echo("again")) == "again"
