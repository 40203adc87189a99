"""What an operator sees of the cluster (`GET /ops/cluster`, the operator page's Nodes section, and what `/metrics`
says of the node it reached): every node, alive or not, with its workspaces and their epochs, the requests it
relayed, its live actors per kind and its clock's skew, read on any node; a node that stops, and one killed with
SIGKILL, seen gone within 2 s by the survivor; a node alone shows itself."""

from __future__ import annotations

import os
import re
import signal
import time

import httpx
import pytest
import trio

from inbox_actors.monitoring.cluster_view import STATES
from persistence.database import Record
from tests.e2e.chat_helpers import scale_workspace
from tests.e2e.conftest import bearer, with_settings
from tests.e2e.running_nodes import cluster_settings, on_first_nodes_platform, running_node, running_node_of_its_own
from tests.e2e.test_serve_nodes import serve_nodes, whoami
from tests.waiting import eventually

LOSS_SHOWN_WITHIN_SECONDS = 2.0


async def view_of(client: httpx.AsyncClient) -> dict:
    answer = await client.get("/ops/cluster")
    assert answer.status_code == 200, answer.text
    return answer.json()


def by_name(view: dict) -> dict[str, dict]:
    return {node["node"]: node for node in view["nodes"]}


async def holder_and_other(ready: dict) -> tuple[dict, dict]:
    """Of `serve --nodes 2 --demo`'s nodes (its ready line's), the one holding the demo workspace once a call needed
    it, and the other, which then relays three calls there."""
    key, workspace_id = ready["demo"]["key"], ready["demo"]["workspace_id"]
    first = ready["nodes"][0]
    assert await whoami(first["url"], key) == 200          # its node takes the workspace, if no node holds it yet
    async with httpx.AsyncClient(base_url=first["url"], timeout=10) as client:
        held = [node["node"] for node in (await view_of(client))["nodes"]
                if workspace_id in [lease["workspace_id"] for lease in node["workspaces"]["leases"]]]
    holder = next(node for node in ready["nodes"] if [node["url"]] == held)
    other = next(node for node in ready["nodes"] if node is not holder)
    for _ in range(3):
        assert await whoami(other["url"], key) == 200
    return holder, other


def sample(exposition: str, name: str) -> list[str]:
    return re.findall(rf"^{name}(?:\{{.*\}})? .*$", exposition, re.M)


async def test_every_node_shows_every_node_with_its_workspaces_relays_actors_and_skew(db, service_settings):
    shared = cluster_settings(service_settings)
    async with running_node(db, shared) as first:
        async with running_node_of_its_own(db, on_first_nodes_platform(shared, first)) as second:
            workspace_id, _, _, key = await scale_workspace(db)
            # The second node takes the workspace; the first relays its calls there.
            assert (await second.client.get("/api/reporting/v1/whoami", headers=bearer(key))).status_code == 200
            for _ in range(3):
                assert (await first.client.get("/api/reporting/v1/whoami", headers=bearer(key))).status_code == 200
            epoch = await db.fetchval("SELECT epoch FROM workspace_leases WHERE workspace_id = $1", workspace_id)

            async def both_published() -> dict | None:
                # The first node's view of the second is what the second published within the last second.
                view = await view_of(first.client)
                other = by_name(view).get(second.url)
                return view if other and other["requests"] and other["requests"]["taken"] >= 3 else None

            view = await eventually(both_published, timeout=5)
            assert view["clustered"] is True and view["this_node"] == first.url
            assert set(by_name(view)) == {first.url, second.url}
            assert view["states"] == {**dict.fromkeys(STATES, 0), "alive": 2}
            here, there = by_name(view)[first.url], by_name(view)[second.url]
            assert here["this_node"] and not there["this_node"]
            assert here["liveness_lock"] is True and there["liveness_lock"] is True
            assert here["pid"] == there["pid"] == os.getpid()         # the test's nodes share its process
            assert here["requests"]["relayed"] >= 3 and there["requests"]["taken"] >= 3
            assert there["workspaces"]["held"] == 1
            (lease,) = there["workspaces"]["leases"]
            assert lease["workspace_id"] == workspace_id and lease["epoch"] == epoch
            assert 0 < lease["expires_in_seconds"] <= 8.0
            assert here["workspaces"] == {"held": 0, "leases": []}
            for node in (here, there):
                assert node["started_seconds_ago"] >= 0 and node["last_seen_seconds_ago"] < 3
                assert node["figures_seconds_ago"] <= 2 and node["stopped_at"] is None
                # Measured at start (the skew timer runs at once), against the same machine's clock.
                assert node["clock_skew_seconds"] is not None and abs(node["clock_skew_seconds"]) < 1
            # The live actors per kind are the node's own counts.
            kinds = second.state.actors.kind_counters()
            assert set(there["actors"]["kinds"]) <= set(kinds)
            assert there["actors"]["kinds"]["key_rate_bucket"]["live"] == kinds["key_rate_bucket"].live == 1
            assert there["actors"]["live"] == sum(kind["live"] for kind in there["actors"]["kinds"].values())
            assert "key_rate_bucket" not in here["actors"]["kinds"]          # the key's bucket is the holder's

            # The second node answers the same view, its own figures from its memory.
            assert set(by_name(await view_of(second.client))) == {first.url, second.url}

            # /metrics: each node's scrape says which node it is, and that it holds its liveness lock.
            for node in (first, second):
                exposition = (await node.client.get("/metrics")).text
                assert sample(exposition, "inbox_node_info") == [f'inbox_node_info{{node="{node.url}"}} 1.0']
                assert sample(exposition, "inbox_node_liveness_lock_held") == ["inbox_node_liveness_lock_held 1.0"]
                (started,) = sample(exposition, "inbox_node_start_time_seconds")
                assert 0 <= time.time() - float(started.split()[1]) < 600
            stopped_at = trio.current_time()
        # Left: it marked itself stopping, handed its workspace over and let its lock go.
        view = await view_of(first.client)
        gone = by_name(view)[second.url]
        assert gone["state"] == "stopped" and gone["liveness_lock"] is False and gone["stopped_at"] is not None
        assert gone["workspaces"]["held"] == 0
        assert trio.current_time() - stopped_at < LOSS_SHOWN_WITHIN_SECONDS
        assert view["states"]["alive"] == 1 and view["states"]["stopped"] == 1


@pytest.mark.single_node("a node alone shows itself")
async def test_a_node_alone_shows_itself_with_its_workspaces(service):
    workspace_id, _, _, key = await scale_workspace(service.db)
    assert (await service.client.get("/api/reporting/v1/whoami", headers=bearer(key))).status_code == 200
    view = await view_of(service.client)
    assert view["clustered"] is False
    (node,) = view["nodes"]
    assert node["this_node"] and node["state"] == "alive" and node["liveness_lock"] is None
    assert workspace_id in [lease["workspace_id"] for lease in node["workspaces"]["leases"]]
    assert node["actors"]["kinds"]["key_rate_bucket"]["live"] >= 1
    # `leases` bounds the list, not the count.
    limited = (await service.client.get("/ops/cluster?leases=0")).json()["nodes"][0]["workspaces"]
    assert limited["leases"] == [] and limited["held"] == node["workspaces"]["held"] >= 1
    exposition = (await service.client.get("/metrics")).text
    assert len(sample(exposition, "inbox_node_info")) == 1
    assert sample(exposition, "inbox_node_liveness_lock_held") == []          # a node alone holds none


async def test_the_nodes_data_is_the_operators_and_the_page_loads_its_script(db, service_settings):
    async with running_node(db, with_settings(service_settings, health_token="ops-token")) as node:
        assert (await node.client.get("/ops/cluster")).status_code == 401
        assert (await node.client.get("/ops/cluster", headers=bearer("wrong"))).status_code == 401
        assert (await node.client.get("/ops/cluster", headers=bearer("ops-token"))).status_code == 200
        page = await node.client.get("/ops", headers=bearer("ops-token"))
        assert '<script src="/ops/nodes.js" defer>' in page.text and 'id="nodes"' in page.text
        script = await node.client.get("/ops/nodes.js")           # the package's file, the same for anyone
        assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
        assert "window.opsNodes" in script.text
        assert "/ops/cluster" in (await node.client.get("/ops/ops.js")).text


@pytest.mark.slow
async def test_a_node_killed_is_shown_lost_by_the_survivor_within_two_seconds(database_url, db, nursery):
    async with serve_nodes(database_url, nursery) as serve:
        ready = serve.ready
        killed, survivor = await holder_and_other(ready)     # the survivor relayed three calls to the killed one
        async with httpx.AsyncClient(base_url=survivor["url"], timeout=10) as client:

            async def both_seen() -> dict | None:
                view = await view_of(client)
                nodes = by_name(view)
                other = nodes.get(killed["url"])
                return view if (view["states"]["alive"] == 2 and other and other["figures_at"]
                                and other["workspaces"]["held"] == 1) else None

            view = await eventually(both_seen, timeout=10)
            seen = by_name(view)
            assert seen[killed["url"]]["pid"] == killed["pid"] and seen[survivor["url"]]["pid"] == survivor["pid"]
            assert seen[killed["url"]]["liveness_lock"] is True
            (held,) = seen[killed["url"]]["workspaces"]["leases"]
            assert held["workspace_id"] == ready["demo"]["workspace_id"]
            assert seen[survivor["url"]]["requests"]["relayed"] >= 3

            os.kill(killed["pid"], signal.SIGKILL)
            died = trio.current_time()

            async def lost() -> dict | None:
                node = by_name(await view_of(client))[killed["url"]]
                return node if node["state"] == "lost" else None

            gone = await eventually(lost, timeout=LOSS_SHOWN_WITHIN_SECONDS, interval=0.05)
            shown_after = trio.current_time() - died
            assert gone["liveness_lock"] is False and gone["stopped_at"] is None
            print(f"a node killed with SIGKILL shown lost after {shown_after:.3f} s")

            # Its workspace is answered again under a new epoch: taken by the survivor's crash watch, or, when `serve
            # --nodes` started the killed node again before the watch confirmed its death (half a second, which a
            # quiet machine's restart can beat: its liveness lock is held again, so the take is rightly refused), by
            # that node itself, whose own lease it takes again at once. A call for the workspace shows which.
            workspace_id = ready["demo"]["workspace_id"]

            async def answered_again() -> Record | None:
                whoami = await client.get("/api/reporting/v1/whoami", headers=bearer(ready["demo"]["key"]))
                lease = await db.fetchrow("SELECT node_id, epoch FROM workspace_leases WHERE workspace_id = $1"
                                          " AND expires_at > now()", workspace_id)
                return lease if whoami.status_code == 200 and lease and lease["epoch"] > held["epoch"] else None

            lease = await eventually(answered_again, timeout=30, interval=0.1)
            assert lease["node_id"] in (survivor["url"], killed["url"])

            # `serve --nodes` starts it again on its own address: alive again, a new process.
            async def back() -> dict | None:
                node = by_name(await view_of(client))[killed["url"]]
                return node if node["state"] == "alive" and node["pid"] != killed["pid"] else None

            # (A process start takes a few seconds; far more on a loaded machine.)
            again = await eventually(back, timeout=90, interval=0.1)
            assert again["liveness_lock"] is True and again["started_seconds_ago"] < 90

