"""The HAProxy configuration of docs/nodes.md ("Behind HAProxy"), run by a real HAProxy in front of three nodes on one
database, so the example cannot go stale.

What a reader fills in, the test fills in: the nodes' addresses, the port and the certificate. One thing more is
scaled down to be seen in seconds: the idle timeouts (60 s) and the live stream's keep-alive (15 s) become 3 s and
0.5 s, the keep-alive still well inside them.
"""

from __future__ import annotations

import re
import socket
import ssl
from pathlib import Path

import httpx
import pytest
import trio

from inbox_actors.access import accounts
from inbox_http.web import live_stream
from tests.certificates import self_signed_loopback
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer, with_settings
from tests.e2e.running_nodes import running_node, running_node_of_its_own
from tests.haproxy import HOW_TO_GET_ONE, find_haproxy
from tests.waiting import eventually

DOC = Path(__file__).resolve().parents[2] / "docs" / "nodes.md"
WHOAMI = "/api/reporting/v1/whoami"
PHONE = "919812345999"
# The client's own address: the nodes can tell it from HAProxy's (127.0.0.1) only through X-Forwarded-For.
CLIENT_IP = "127.0.0.2"
IDLE_TIMEOUT, KEEPALIVE = 3.0, 0.5
EMAIL, PASSWORD = "ann@example.com", "a-long-enough-password"


def example_config() -> str:
    """The ```haproxy block under the heading "Behind HAProxy"."""
    section = DOC.read_text().split("### Behind HAProxy\n", 1)[-1]
    found = re.search(r"^```haproxy\n(.*?)^```$", section, re.M | re.S)
    assert found, 'docs/nodes.md has no ```haproxy block under "### Behind HAProxy"'
    return found.group(1)


def filled_in(config: str, replacements: dict[str, str]) -> str:
    for written, used in replacements.items():
        assert config.count(written) == 1, f"the example should say {written!r} once"
        config = config.replace(written, used)
    return config


def self_signed(folder: Path) -> tuple[Path, Path]:
    """HAProxy's PEM for 127.0.0.1 (certificate and key), and the certificate alone, for the client to trust."""
    cert_pem, key_pem = self_signed_loopback()
    (folder / "inbox.pem").write_bytes(cert_pem + key_pem)
    (folder / "ca.pem").write_bytes(cert_pem)
    return folder / "inbox.pem", folder / "ca.pem"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def haproxy() -> str:
    found = find_haproxy()
    if found is None:
        pytest.fail(HOW_TO_GET_ONE, pytrace=False)
    return found


async def run_haproxy(binary: str, config: Path, log: Path, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """HAProxy in the foreground (`-db`), its messages (a server going down among them) into `log`."""
    with log.open("wb") as output:
        await trio.run_process([binary, "-f", str(config), "-db"], stdout=output, stderr=output, check=False,
                               task_status=task_status)


def through_haproxy(port: int, ca: Path) -> httpx.AsyncClient:
    """A client of HAProxy over HTTPS (HTTP/2 offered), from an address of its own."""
    transport = httpx.AsyncHTTPTransport(local_address=CLIENT_IP, verify=ssl.create_default_context(cafile=ca),
                                         http2=True)
    return httpx.AsyncClient(base_url=f"https://127.0.0.1:{port}", transport=transport, timeout=10)


async def stream_events(client: httpx.AsyncClient, heard: list[str], *, task_status=trio.TASK_STATUS_IGNORED):
    """`GET /app/events`: each line into `heard` (keep-alives as ": keep-alive") until cancelled."""
    async with client.stream("GET", "/app/events", headers={"Accept": "text/event-stream"}, timeout=None) as stream:
        assert stream.status_code == 200, await stream.aread()
        task_status.started()
        async for line in stream.aiter_lines():
            if line:
                heard.append(line)
    heard.append("(the stream ended)")


async def test_the_haproxy_example_in_front_of_three_nodes(db, service_settings, haproxy, tmp_path, monkeypatch):
    monkeypatch.setattr(live_stream, "KEEPALIVE_SECONDS", KEEPALIVE)
    # The nodes as the doc starts them: trusting one X-Forwarded-For hop, and draining 3 s (only the one this test
    # stops: the others would make it wait as long again at its end).
    shared = with_settings(service_settings, cluster_secret="test-cluster-secret", whatsapp_app_secret="app-secret",
                           whatsapp_access_token="access-token", whatsapp_verify_token="verify-token",
                           trusted_proxy_hops=1)
    pem, ca = self_signed(tmp_path)
    port = free_port()
    config, log = tmp_path / "haproxy.cfg", tmp_path / "haproxy.log"
    async with (running_node(db, shared) as first,
                running_node_of_its_own(db, with_settings(shared, whatsapp_api_url=first.simulator_url)) as second,
                through_haproxy(port, ca) as client, through_haproxy(port, ca) as browser,
                trio.open_nursery() as nursery):
        async with (trio.open_nursery() as during_the_stop,
                    running_node_of_its_own(db, with_settings(shared, whatsapp_api_url=first.simulator_url,
                                                              drain_seconds=3.0)) as third):
            config.write_text(filled_in(example_config(), {
                "bind :443": f"bind 127.0.0.1:{port}", "/etc/haproxy/inbox.pem": str(pem),
                "timeout client 60s": f"timeout client {IDLE_TIMEOUT:g}s",
                "timeout server 60s": f"timeout server {IDLE_TIMEOUT:g}s",
                **{f"10.0.0.{7 + n}:8080": node.url.removeprefix("http://")
                   for n, node in enumerate([first, second, third])}}))
            proxy = await nursery.start(run_haproxy, haproxy, config, log)

            async def answering() -> bool:
                if proxy.returncode is not None:
                    raise AssertionError(f"haproxy exited with {proxy.returncode}:\n{log.read_text()}")
                try:
                    return (await client.get("/health/ready")).status_code == 200
                except httpx.TransportError:
                    return False

            await eventually(answering, what="HAProxy answered GET /health/ready with 200")

            workspace_id, number, _, key = await scale_workspace(db)
            # The third node takes the workspace; a call landing on another node is relayed there.
            assert (await third.client.get(WHOAMI, headers=bearer(key))).status_code == 200
            await signs_in_securely(browser, db, workspace_id)
            heard: list[str] = []
            async with trio.open_nursery() as streaming:
                await streaming.start(stream_events, browser, heard)
                await passes_the_client_on(client, db, workspace_id, key)
                await outlasts_the_timeouts(heard, first, number)
                streaming.cancel_scope.cancel()
            sent = await client.post("/api/send-message", headers=bearer(key),
                                     json={"to": PHONE, "message": "Through HAProxy"})
            assert sent.status_code == 200, sent.text
            assert third.holds(workspace_id)
            # Leaving this block stops the third node, while this runs.
            during_the_stop.start_soon(taken_out_while_answered, client, key, log, third.url)

        # The third node handed its workspace over on its way out: the calls go on through the two others.
        answered = [await client.get(WHOAMI, headers=bearer(key)) for _ in range(4)]
        answered.append(await client.post("/api/send-message", headers=bearer(key),
                                          json={"to": PHONE, "message": "After the stop"}))
        assert [answer.status_code for answer in answered] == [200] * 5, [answer.text for answer in answered]
        assert first.holds(workspace_id) or second.holds(workspace_id)
        nursery.cancel_scope.cancel()


async def signs_in_securely(browser: httpx.AsyncClient, db, workspace_id: int) -> None:
    """The session cookie is a secure one: X-Forwarded-Proto told the node the client came over HTTPS."""
    member = await accounts.add_member(db, workspace_id=workspace_id, name="Ann", email=EMAIL, role="admin")
    await accounts.set_member_password(db, member_id=member, password=PASSWORD)
    answer = await browser.post("/app/sign-in", data={"email": EMAIL, "password": PASSWORD})
    assert answer.status_code == 303, answer.text
    assert "; secure" in answer.headers["set-cookie"].lower()


async def passes_the_client_on(client: httpx.AsyncClient, db, workspace_id: int, key: str) -> None:
    """Over HTTP/2 to HAProxy; the nodes see the client's address, not HAProxy's, nor one the client claims."""
    answered = [await client.get(WHOAMI, headers={**bearer(key), "X-Forwarded-For": "203.0.113.9"})
                for _ in range(3)]
    assert [(answer.status_code, answer.http_version) for answer in answered] == [(200, "HTTP/2")] * 3

    async def recorded() -> list[str] | None:
        rows = await db.fetch("SELECT ip FROM key_activity WHERE workspace_id = $1", workspace_id)
        return sorted(row["ip"] for row in rows) if len(rows) == 4 else None

    # The call made straight to the third node, then the three through HAProxy.
    assert await eventually(recorded, what="4 calls in the activity log") == ["127.0.0.1"] + [CLIENT_IP] * 3


async def outlasts_the_timeouts(heard: list[str], first, number: str) -> None:
    """The web app's live stream stays open past HAProxy's idle timeouts, its keep-alives, and an event, coming
    through as they are written."""
    past_the_timeouts = IDLE_TIMEOUT / KEEPALIVE + 2
    await eventually(lambda: heard.count(": keep-alive") >= past_the_timeouts,
                     what=lambda: f"{past_the_timeouts:g} keep-alives (heard {heard})")
    await customer_writes(first, number, PHONE, "Still there?")
    await eventually(lambda: f'data: {{"phone":"{PHONE}"}}' in heard,
                     what=lambda: f"the customer's message on the stream (heard {heard})")
    assert "(the stream ended)" not in heard


async def taken_out_while_answered(client: httpx.AsyncClient, key: str, log: Path, node_url: str) -> None:
    """While the third node drains, its /health/ready answers 503 and HAProxy takes it out, every call answered.
    (HAProxy's log gives the reason it saw: the 503, or on a loaded machine a check that outlasted its second.)"""
    statuses, readiness = [], []

    async def taken_out() -> bool:
        statuses.append((await client.get(WHOAMI, headers=bearer(key))).status_code)
        if 503 not in readiness:
            try:
                readiness.append((await node.get("/health/ready")).status_code)
            except httpx.TransportError as err:
                readiness.append(type(err).__name__)
        return "nodes/node3 is DOWN" in log.read_text()

    async with httpx.AsyncClient(base_url=node_url, timeout=5) as node:
        await eventually(taken_out, timeout=5, interval=0.1,
                         what=lambda: f"HAProxy took node3 out (its log: {log.read_text()})")
    assert set(statuses) == {200}, statuses
    assert 503 in readiness, readiness
    down = next(line for line in log.read_text().splitlines() if "nodes/node3 is DOWN" in line)
    assert "code: 503" in down or "Layer7 timeout" in down, down
