"""Counts kept as actors live (ActorSystem.kind_counters(), summary()) equal a recount of every cell, through
activation, passivation, restarts, escalation and cooldown; the busiest come from a bounded leaderboard."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from inbox_actors.runtime import ActorCrashed, ActorFailed, ActorStatus, ActorSystem
from inbox_actors.runtime.system import BUSIEST_CANDIDATES
from inbox_actors.runtime.tally import Leaderboard

from .runtime_harness import Crash, Echo, Hold, Probe, running


def recount(system: ActorSystem) -> dict[str, tuple[int, int, int, int]]:
    """(live, failed, mailbox used, deepest mailbox) per kind, by visiting every cell as the old summary did."""
    cells = {id(c): c for c in (*system._cells.values(), *system._retiring.values())}.values()
    counts = {name: [0, 0, 0, 0] for name in system._kinds}
    for cell in cells:
        entry = counts[cell.kind.name]
        if cell.status is ActorStatus.FAILED:
            entry[1] += 0 if system._cooled_down(cell) else 1
        else:
            entry[0] += 1
        entry[2] += len(cell.mailbox)
        entry[3] = max(entry[3], len(cell.mailbox))
    return {name: tuple(entry) for name, entry in counts.items()}


def kept(system: ActorSystem) -> dict[str, tuple[int, int, int, int]]:
    return {name: (c.live, c.failed, c.mailbox_used, c.mailbox_max) for name, c in system.kind_counters().items()}


async def test_activation_and_passivation_keep_the_counts_equal_to_a_recount(autojump_clock):
    probe = Probe()
    async with running(probe.kind(idle_timeout=30), probe.kind("other", idle_timeout=1000)) as system:
        for n in range(20):
            await system.ref("probe", f"k{n}").ask(Echo("hi"))
        await system.ref("other", "o").ask(Echo("hi"))
        assert kept(system) == recount(system) == {"probe": (20, 0, 0, 0), "other": (1, 0, 0, 0)}
        counters = system.kind_counters()["probe"]
        assert (counters.activated_total, counters.passivated_total, counters.messages_handled_total) == (20, 0, 20)

        await trio.sleep(31)  # every probe passivates; "other" stays
        assert kept(system) == recount(system) == {"probe": (0, 0, 0, 0), "other": (1, 0, 0, 0)}
        counters = system.kind_counters()["probe"]
        assert (counters.activated_total, counters.passivated_total) == (20, 20)

        await system.ref("probe", "k0").ask(Echo("back"))
        assert kept(system) == recount(system)
        assert system.kind_counters()["probe"].activated_total == 21
        assert system.summary().kinds["probe"].messages_handled == 21, "since the start, not of the live only"


async def test_queued_messages_count_in_the_sum_and_the_deepest_mailbox(autojump_clock):
    probe = Probe()
    async with running(probe.kind(mailbox_capacity=8)) as system:
        gates = [trio.Event(), trio.Event()]
        for key, gate, queued in (("a", gates[0], 3), ("b", gates[1], 1)):
            ref = system.ref("probe", key)
            ref.tell_nowait(Hold("held", gate))
            await trio.testing.wait_all_tasks_blocked()
            for n in range(queued):
                ref.tell_nowait(Echo(str(n)))
        assert kept(system) == recount(system) == {"probe": (2, 0, 4, 3)}
        summary = system.summary()
        assert (summary.kinds["probe"].mailbox_used, summary.kinds["probe"].mailbox_max) == (4, 3)
        assert [s.key for s in summary.busiest] == ["a", "b"]

        gates[0].set()
        await trio.testing.wait_all_tasks_blocked()
        assert kept(system) == recount(system) == {"probe": (2, 0, 1, 1)}
        gates[1].set()
        await trio.testing.wait_all_tasks_blocked()
        assert kept(system) == recount(system) == {"probe": (2, 0, 0, 0)}


async def test_restarts_failures_and_cooldown_keep_the_counts_equal_to_a_recount(autojump_clock):
    probe = Probe()
    async with running(probe.kind(max_restarts=1, failed_cooldown=50, circuit_failures=10)) as system:
        healthy, flaky = system.ref("probe", "healthy"), system.ref("probe", "flaky")
        await healthy.ask(Echo("hi"))
        with pytest.raises(ActorCrashed):
            await flaky.ask(Crash("once"))
        await flaky.ask(Echo("after the restart"))
        assert kept(system) == recount(system) == {"probe": (2, 0, 0, 0)}
        counters = system.kind_counters()["probe"]
        assert (counters.restarted_total, counters.failed_total) == (1, 0)
        summary = system.summary()
        assert [s.key for s in summary.failing] == ["flaky"] and summary.failing_count == 1

        broken = system.ref("probe", "broken")
        for _ in range(2):
            with pytest.raises(ActorCrashed):
                await broken.ask(Crash("again"))
        with pytest.raises(ActorFailed):
            await broken.ask(Echo("refused"))
        assert kept(system) == recount(system) == {"probe": (2, 1, 0, 0)}
        counters = system.kind_counters()["probe"]
        assert (counters.restarted_total, counters.failed_total, counters.activated_total) == (2, 1, 3)
        assert [s.key for s in system.summary().failing] == ["broken", "flaky"]
        assert "broken" not in [s.key for s in system.summary().busiest]

        await trio.sleep(51)  # the cooldown is over: no longer failed, though still in the registry
        assert kept(system) == recount(system) == {"probe": (2, 0, 0, 0)}
        assert system.kind_counters()["probe"].failed_total == 1
        assert await broken.ask(Echo("afresh")) == "afresh"
        assert kept(system) == recount(system) == {"probe": (3, 0, 0, 0)}
        assert system.kind_counters()["probe"].activated_total == 4


async def test_activation_failure_and_shutdown_leave_nothing_counted(autojump_clock):
    probe = Probe()
    probe.start_failures = 1
    async with running(probe.kind()) as system:
        with pytest.raises(Exception):
            await system.ref("probe", "down").tell(Echo("hi"))
        await trio.testing.wait_all_tasks_blocked()
        assert kept(system) == recount(system) == {"probe": (0, 0, 0, 0)}
        for n in range(5):
            await system.ref("probe", f"k{n}").ask(Echo("hi"))
        assert kept(system)["probe"][0] == 5
    assert kept(system) == recount(system) == {"probe": (0, 0, 0, 0)}


async def test_the_busiest_are_read_from_a_bounded_board_not_every_cell(autojump_clock):
    probe = Probe()
    async with running(probe.kind(idle_timeout=1000)) as system:
        for n in range(BUSIEST_CANDIDATES + 50):
            ref = system.ref("probe", f"k{n}")
            for _ in range(1 + n % 7):
                await ref.ask(Echo("x"))
        assert len(system._board) == BUSIEST_CANDIDATES
        top = system.summary(busiest=10).busiest
        assert [s.messages_handled for s in top] == [7] * 10
        assert len(system.summary(busiest=1000).busiest) == BUSIEST_CANDIDATES


def test_leaderboard_keeps_the_highest_scores_within_its_capacity():
    board: Leaderboard[str] = Leaderboard(3)
    scores = {"a": 5, "b": 1, "c": 3, "d": 4, "e": 2}
    for item, score in scores.items():
        board.offer(item, score)
    assert len(board) == 3 and set(board.members()) == {"a", "c", "d"}
    assert board.top(2, scores.__getitem__) == ["a", "d"]

    scores["b"] = 10  # a non-member gains: offered, it displaces the weakest member
    board.offer("b", 10)
    assert set(board.members()) == {"a", "b", "d"}
    scores["a"] = 0   # a member's score changes: re-ranked at its offer, read current by top()
    board.offer("a", 0)
    board.offer("e", 2)
    assert set(board.members()) == {"b", "d", "e"}
    board.discard("d")
    assert "d" not in board and len(board) == 2
    assert board.top(5, scores.__getitem__, keep=lambda item: item != "e") == ["b"]


def test_leaderboard_stays_bounded_under_many_updates():
    board: Leaderboard[int] = Leaderboard(4)
    for round_ in range(1000):
        for item in range(10):
            board.offer(item, round_ * (item % 5))
    assert len(board) == 4
    assert len(board._heap) <= 4 * 4 + 16
    assert set(board.members()) == {4, 9, 3, 8}
