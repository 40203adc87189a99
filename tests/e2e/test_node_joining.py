"""A node that joins a running one gets its share of the workspaces handed to it while calls keep coming, and no
call is refused on the way (inbox_actors/cluster/rebalancing.py)."""

from __future__ import annotations

import trio

from tests.e2e.chat_helpers import scale_workspace
from tests.e2e.conftest import bearer, with_settings
from tests.e2e.running_nodes import cluster_settings, on_first_nodes_platform, running_node, running_node_of_its_own
from tests.waiting import eventually

WHOAMI = "/api/reporting/v1/whoami"
WORKSPACES = 4


async def test_a_node_that_joins_is_handed_half_the_workspaces_and_no_call_is_refused(db, service_settings):
    shared = with_settings(cluster_settings(service_settings), rebalance_seconds=1.0)
    async with running_node(db, shared) as first:
        workspaces = [await scale_workspace(first.state.db) for _ in range(WORKSPACES)]
        for workspace in workspaces:
            assert (await first.client.get(WHOAMI, headers=bearer(workspace[3]))).status_code == 200
        assert all(first.holds(workspace[0]) for workspace in workspaces)

        async with running_node_of_its_own(db, on_first_nodes_platform(shared, first)) as joining:
            answers: list[int] = []

            async def calls_keep_coming() -> None:
                for turn in range(10_000):
                    node = (first, joining)[turn % 2]
                    workspace = workspaces[turn % WORKSPACES]
                    answers.append((await node.client.get(WHOAMI, headers=bearer(workspace[3]))).status_code)
                    await trio.sleep(0.01)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(calls_keep_coming)

                def held(node) -> int:
                    return sum(node.holds(workspace[0]) for workspace in workspaces)

                await eventually(lambda: held(joining) == WORKSPACES // 2 and held(first) == WORKSPACES // 2,
                                 timeout=30, what=lambda: f"two each (first {held(first)}, joining {held(joining)})")
                await eventually(lambda: len(answers) >= 40)   # calls on both sides of the hand-overs
                nursery.cancel_scope.cancel()
            assert set(answers) == {200}, (sorted(set(answers)), first.url, joining.url)
