"""A live stream relayed by a node that begins to drain ends at once, cleanly, as one it serves itself does: the
browser reconnects and the load balancer sends it to a node that is not draining. A relayed answer that is no event
stream is relayed to its end (inbox_http/cluster/event_stream_cut.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
import trio
from quart import Blueprint, Response

from inbox_actors.access import accounts
from inbox_http.dependencies import dependencies
from tests.e2e.chat_helpers import scale_workspace
from tests.e2e.conftest import bearer, with_settings
from tests.e2e.running_nodes import (
    Node,
    cluster_settings,
    on_first_nodes_platform,
    running_node,
    running_node_of_its_own,
)

PASSWORD = "a-long-enough-password"
EMAIL = "rae@example.com"
# What the relayed stream must end within: well inside the grace period, the 10 s it would otherwise run.
ENDS_WITHIN = 2.0


class SlowExport:
    """A route of the test's own on every node: a CSV sent in two parts, the second once `finish` is set, so it is
    still streaming its body when the drain begins."""

    def __init__(self) -> None:
        self.finish = trio.Event()
        self.blueprint = Blueprint("slow_export", __name__)
        self.blueprint.get("/test/slow-export")(self._export)

    async def _export(self):
        async def parts():
            yield b"id,name\n"
            await self.finish.wait()
            yield b"1,Rae\n"

        response = Response(parts(), content_type="text/csv")
        response.headers["X-Served-By"] = dependencies().placement.node_id
        response.timeout = None
        return response


@pytest.fixture
def export() -> SlowExport:
    return SlowExport()


@pytest.fixture
async def nodes(db, service_settings, export):
    """Two nodes, each on a pool of its own; the first holds the workspace, so the second relays its requests."""
    shared = with_settings(cluster_settings(service_settings), shutdown_grace_seconds=10.0)
    async with running_node(db, shared, blueprints=[export.blueprint]) as holding:
        platform = on_first_nodes_platform(shared, holding)
        async with running_node_of_its_own(db, platform, blueprints=[export.blueprint]) as relaying:
            yield holding, relaying


async def _workspace_held_by(node: Node, db) -> tuple[int, str]:
    """A new workspace, which `node` takes (the first to ask for it), its member, who signs in with PASSWORD, and
    (with its id) a key of it."""
    workspace_id, _, _, key = await scale_workspace(db)
    assert (await node.client.get("/api/reporting/v1/whoami", headers=bearer(key))).status_code == 200
    assert node.holds(workspace_id)
    member = await accounts.add_member(db, workspace_id=workspace_id, name="Rae", email=EMAIL, role="admin")
    await accounts.set_member_password(db, member_id=member, password=PASSWORD)
    return workspace_id, key


@asynccontextmanager
async def _signed_in(node: Node) -> AsyncIterator[httpx.AsyncClient]:
    """A browser-like client of `node` alone, with the member's session cookie."""
    async with httpx.AsyncClient(base_url=node.url, timeout=10) as client:
        answer = await client.post("/app/sign-in", data={"email": EMAIL, "password": PASSWORD})
        assert answer.status_code == 303, answer.text
        yield client


@asynccontextmanager
async def _live_stream(client: httpx.AsyncClient) -> AsyncIterator[AsyncIterator[str]]:
    """The live stream's lines, once its first (the reconnect delay) has come through the relay."""
    async with client.stream("GET", "/app/events", headers={"Accept": "text/event-stream"}, timeout=None) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.aiter_lines()
        assert (await anext(lines)).startswith("retry: ")
        yield lines


async def _rest(lines: AsyncIterator[str]) -> list[str]:
    """The stream's lines to its end; httpx raises on a body broken off (an incomplete chunked read)."""
    with trio.fail_after(ENDS_WITHIN):
        return [line async for line in lines]


async def test_a_relayed_live_stream_ends_cleanly_when_the_relaying_node_begins_to_drain(nodes, db):
    holding, relaying = nodes
    workspace_id, _ = await _workspace_held_by(holding, db)
    async with _signed_in(relaying) as client, _live_stream(client) as lines:
        assert not relaying.holds(workspace_id)       # so the stream is the holding node's, relayed
        relaying.state.lifecycle.begin_draining()
        assert not any(line.startswith("data:") for line in await _rest(lines))
    assert not holding.state.lifecycle.draining


async def test_a_relayed_answer_under_way_that_is_no_stream_is_relayed_to_its_end(nodes, db, export):
    holding, relaying = nodes
    _, key = await _workspace_held_by(holding, db)
    async with _signed_in(relaying) as client, _live_stream(client) as lines, \
            client.stream("GET", "/test/slow-export", headers=bearer(key)) as exported:
        assert exported.status_code == 200 and exported.headers["X-Served-By"] == holding.state.placement.node_id
        parts = exported.aiter_bytes()
        assert await anext(parts) == b"id,name\n"
        relaying.state.lifecycle.begin_draining()
        # Once the live stream, cut at the same moment, has ended, the export would have been too.
        await _rest(lines)
        export.finish.set()
        with trio.fail_after(ENDS_WITHIN):
            assert b"".join([part async for part in parts]) == b"1,Rae\n"
