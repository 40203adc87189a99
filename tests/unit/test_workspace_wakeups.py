"""The live pages' doorbell: a ring between a reader's read and its wait still wakes it, and a workspace nobody
reads has no bell."""

from __future__ import annotations

import trio
import trio.testing

from inbox_actors.live.wakeups import WorkspaceWakeups


async def test_a_ring_after_arming_wakes_the_wait_at_once_and_other_workspaces_wait_on():
    wakeups = WorkspaceWakeups()
    with wakeups.armed(1) as bell, wakeups.armed(2) as other:
        wakeups.ring(1)            # between the reader's read and its wait
        with trio.fail_after(1):
            assert await bell.wait(60) is True
        assert await other.wait(0.01) is False


async def test_every_reader_of_a_workspace_hears_one_ring_and_bells_go_with_their_readers():
    wakeups = WorkspaceWakeups()
    woken: list[bool] = []

    async def reader() -> None:
        with wakeups.armed(7) as bell:
            woken.append(await bell.wait(60))

    with trio.fail_after(1):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(reader)
            nursery.start_soon(reader)
            await trio.testing.wait_all_tasks_blocked()
            assert wakeups.workspaces_with_readers() == 1
            wakeups.ring(7)
    assert woken == [True, True]
    assert wakeups.workspaces_with_readers() == 0
    wakeups.ring(8)                # nobody reads workspace 8: nothing is kept for it
    assert wakeups.workspaces_with_readers() == 0
