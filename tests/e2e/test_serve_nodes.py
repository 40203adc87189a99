"""`inbox-actors serve --nodes 2` as a user runs it: one parent process, two node processes sharing the service port,
one ready line; the parent starts a node again when it dies, and stops them all on SIGTERM."""

import os
import signal
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import trio

from tests.e2e.conftest import bearer
from tests.e2e.test_serve_process import ServeProcess, start_serve
from tests.waiting import eventually

GRACE_SECONDS = 5
PHONE = "919855555561"


@asynccontextmanager
async def serve_nodes(database_url: str, nursery: trio.Nursery):
    serve = await start_serve({"DATABASE_URL": database_url, "INBOX_SHUTDOWN_GRACE_SECONDS": str(GRACE_SECONDS)},
                              nursery, "--nodes", "2", "--demo")
    try:
        yield serve
    finally:
        if serve.process.returncode is None:     # a failed test: leave no process behind
            serve.process.send_signal(signal.SIGTERM)
            with trio.move_on_after(30):
                await serve.process.wait()
            if serve.process.returncode is None:
                serve.process.kill()


async def whoami(url: str, key: str) -> int:
    # A client of its own each time: a new connection, which the kernel gives to either node.
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        return (await client.get("/api/reporting/v1/whoami", headers=bearer(key))).status_code


async def stop_within_grace(serve: ServeProcess) -> None:
    serve.process.send_signal(signal.SIGTERM)
    with trio.fail_after(GRACE_SECONDS):
        assert await serve.process.wait() == 0, serve.stderr


def children_of(pid: int) -> set[int]:
    children = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue   # gone meanwhile
        if int(fields[1]) == pid:
            children.add(int(stat.parent.name))
    return children


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_two_nodes_serve_one_demo_workspace_and_stop_together_on_sigterm(database_url, nursery):
    async with serve_nodes(database_url, nursery) as serve:
        ready, key = serve.ready, serve.ready["demo"]["key"]
        assert ready["status"] == "ready" and ready["database"] == "external" and ready["simulator"] is True
        nodes = ready["nodes"]
        assert len(nodes) == 2 and len({node["url"] for node in nodes}) == 2
        assert {node["pid"] for node in nodes} == children_of(serve.process.pid)
        assert [await whoami(ready["url"], key) for _ in range(20)] == [200] * 20
        assert [await whoami(node["url"], key) for node in nodes] == [200, 200]

        async with httpx.AsyncClient(base_url=ready["platform"], timeout=10) as platform:
            written = await platform.post(f"/simulator/customers/{PHONE}/messages", json={
                "phone_number_id": ready["demo"]["phone_number_id"], "text": "hi", "name": "A"})
        assert written.status_code == 200 and written.json()["delivered_to_service"] is True
        for node in nodes:
            async with httpx.AsyncClient(base_url=node["url"], timeout=10) as client:
                async def shows_the_chat() -> bool:
                    answer = await client.get(f"/api/inbox/conversations/{PHONE}", headers=bearer(key))
                    return answer.status_code == 200 and answer.json()["phone"] == PHONE

                await eventually(shows_the_chat, what=f"the chat on {node['url']}")

        await stop_within_grace(serve)
        assert not [node["pid"] for node in nodes if running(node["pid"])]
        assert "Traceback" not in serve.stderr


async def test_a_node_killed_is_started_again_on_its_own_address(database_url, nursery):
    async with serve_nodes(database_url, nursery) as serve:
        ready, key = serve.ready, serve.ready["demo"]["key"]
        killed = ready["nodes"][0]
        assert await whoami(killed["url"], key) == 200     # it may hold the demo workspace now
        os.kill(killed["pid"], signal.SIGKILL)

        async def live_again() -> bool:
            try:
                async with httpx.AsyncClient(base_url=killed["url"], timeout=2) as client:
                    return (await client.get("/health/live")).status_code == 200
            except httpx.TransportError:
                return False

        await eventually(live_again, timeout=15, interval=0.1, what=f"{killed['url']} live again")
        children = children_of(serve.process.pid)
        assert killed["pid"] not in children and len(children) == 2
        assert [await whoami(ready["url"], key) for _ in range(10)] == [200] * 10
        assert await whoami(killed["url"], key) == 200

        await stop_within_grace(serve)
        assert not [pid for pid in children if running(pid)]
