"""`inbox-actors serve` as a user runs it: a separate process, its ready line, SIGTERM, a clean exit."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
import pytest
import trio

from tests.e2e.conftest import bearer


class ServeProcess:
    def __init__(self, process: trio.Process, ready: dict, stderr: list[bytes]) -> None:
        self.process, self.ready, self._stderr = process, ready, stderr

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode(errors="replace")


async def start_serve(env_changes: dict[str, str], nursery: trio.Nursery, *args: str) -> ServeProcess:
    # Only what the test passes decides the database: an outer DATABASE_URL must not leak in.
    env = {name: value for name, value in os.environ.items() if name != "DATABASE_URL"} | env_changes
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "inbox_http.cli", "serve", "--port", "0", *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stderr: list[bytes] = []

    async def drain_stderr():
        async for chunk in process.stderr:
            stderr.append(chunk)

    nursery.start_soon(drain_stderr)
    line = b""
    with trio.fail_after(60):
        while not line.endswith(b"\n"):
            chunk = await process.stdout.receive_some(4096)
            if not chunk:
                raise AssertionError(f"serve exited before it was ready: {b''.join(stderr).decode()}")
            line += chunk
    return ServeProcess(process, json.loads(line), stderr)


async def stop(serve: ServeProcess) -> int:
    serve.process.send_signal(signal.SIGTERM)
    with trio.fail_after(30):
        return await serve.process.wait()


async def test_serve_with_database_url_prints_a_working_demo_key_and_stops_on_sigterm(database_url, nursery):
    serve = await start_serve({"DATABASE_URL": database_url}, nursery, "--demo")
    assert serve.ready["status"] == "ready"
    assert serve.ready["database"] == "external"
    demo = serve.ready["demo"]
    async with httpx.AsyncClient(base_url=serve.ready["url"]) as client:
        whoami = await client.get("/api/reporting/v1/whoami", headers=bearer(demo["key"]))
        assert whoami.status_code == 200
        assert whoami.json()["workspace_id"] == demo["workspace_id"]
        assert whoami.json()["api_tier"] == "full"
        assert (await client.get("/health")).json()["database"] == "ok"
        await _demo_bot_answers(client, serve.ready)
    assert await stop(serve) == 0, serve.stderr
    assert "Traceback" not in serve.stderr


async def _demo_bot_answers(client: httpx.AsyncClient, ready: dict) -> None:
    """The built-in simulator plays a customer; the demo's AI agent (the built-in model simulator its model)
    quotes the demo's pricing sheet through it."""
    assert ready["simulator"] is True
    demo, phone = ready["demo"], "919855555551"
    async with httpx.AsyncClient(base_url=ready["platform"]) as platform:
        written = await platform.post(f"/simulator/customers/{phone}/messages",
                                      json={"phone_number_id": demo["phone_number_id"],
                                            "text": "How much is express shipping?"})
        assert written.json()["delivered_to_service"] is True
    with trio.fail_after(10):
        while True:
            detail = (await client.get(f"/api/inbox/conversations/{phone}", headers=bearer(demo["key"]))).json()
            if detail["counts"]["from_bot"] == 1:
                break
            await trio.sleep(0.05)
    assert detail["last_message"]["preview"] == "Express shipping: 7.50 USD per order."


async def test_demo_key_is_replaced_on_each_start(database_url, nursery):
    first = await start_serve({"DATABASE_URL": database_url}, nursery, "--demo")
    assert await stop(first) == 0
    second = await start_serve({"DATABASE_URL": database_url}, nursery, "--demo")
    try:
        assert second.ready["demo"]["workspace_id"] == first.ready["demo"]["workspace_id"]
        async with httpx.AsyncClient(base_url=second.ready["url"]) as client:
            old = await client.get("/api/reporting/v1/whoami", headers=bearer(first.ready["demo"]["key"]))
            assert old.status_code == 403
            new = await client.get("/api/reporting/v1/whoami", headers=bearer(second.ready["demo"]["key"]))
            assert new.status_code == 200
    finally:
        assert await stop(second) == 0


@pytest.mark.slow
async def test_embedded_database_starts_with_the_service_and_stops_with_it(nursery, asyncio_loop):
    """No DATABASE_URL: the service runs its own PostgreSQL; CLI commands share it while it runs."""
    data_dir = Path(tempfile.mkdtemp(prefix="inbox-serve-test-"))
    env = {"INBOX_DATA_DIR": str(data_dir)}
    try:
        serve = await start_serve(env, nursery, "--demo")
        assert serve.ready["database"] == "embedded"
        assert (data_dir / "pg" / "postmaster.pid").exists()

        cli_env = {name: value for name, value in os.environ.items() if name != "DATABASE_URL"} | env
        result = await trio.run_process(
            [sys.executable, "-m", "inbox_http.cli", "key", "create", "--workspace",
             str(serve.ready["demo"]["workspace_id"]), "--member", str(serve.ready["demo"]["user_id"]),
             "--name", "second", "--scopes", "analytics:read"],
            env=cli_env, capture_stdout=True, capture_stderr=True)
        second_key = json.loads(result.stdout)["key"]
        async with httpx.AsyncClient(base_url=serve.ready["url"]) as client:
            response = await client.get("/api/reporting/v1/whoami", headers=bearer(second_key))
            assert response.status_code == 200
            assert response.json()["key"]["read_only"] is True
        # The CLI found the service's server running and left it running.
        assert (data_dir / "pg" / "postmaster.pid").exists()

        assert await stop(serve) == 0, serve.stderr
        assert not (data_dir / "pg" / "postmaster.pid").exists()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


async def test_an_idle_keep_alive_connection_does_not_hold_the_shutdown_for_the_grace_period(database_url, nursery):
    serve = await start_serve({"DATABASE_URL": database_url, "INBOX_SHUTDOWN_GRACE_SECONDS": "20"}, nursery)
    async with httpx.AsyncClient(base_url=serve.ready["url"], timeout=10) as client:
        assert (await client.get("/health")).status_code == 200  # the connection stays open, idle
        began = trio.current_time()
        assert await stop(serve) == 0
        assert trio.current_time() - began < 10, "not the 20 s grace: nothing was under way"
