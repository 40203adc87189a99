"""A balancer that knows workspaces: every node of a cluster names itself (`X-Inbox-Node`) on what it serves for a
workspace it holds, relayed or not, and the HAProxy lines of docs/nodes.md ("Sending each workspace to its node"),
added to the example above them and run by a real HAProxy in front of two nodes, send a workspace's calls and the
platform's webhooks for its number to that node, so none is relayed once the first answer has named it."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import httpx
import trio

from inbox_actors.platform.payloads import InboundMessage
from inbox_actors.platform.webhook_envelope import build_envelope, sign
from tests.e2e.chat_helpers import scale_workspace
from tests.e2e.conftest import bearer, with_settings
from tests.e2e.running_nodes import cluster_settings, on_first_nodes_platform, running_node, running_node_of_its_own
from tests.e2e.test_haproxy_example import (
    example_config,
    free_port,
    haproxy,
    run_haproxy,
    self_signed,
    through_haproxy,
)
from tests.waiting import eventually

__all__ = ["haproxy"]     # the fixture, used by name below

DOC = Path(__file__).resolve().parents[2] / "docs" / "nodes.md"
WHOAMI = "/api/reporting/v1/whoami"
APP_SECRET = "app-secret"


def routing_lines() -> tuple[str, str]:
    """The lines the doc adds to the example's frontend and to its backend, under "Sending each workspace to its
    node"."""
    section = DOC.read_text().split("### Sending each workspace to its node\n", 1)[-1]
    found = re.search(r"^```haproxy\n(.*?)^```$", section, re.M | re.S)
    assert found, 'docs/nodes.md has no ```haproxy block under "### Sending each workspace to its node"'
    frontend, backend = found.group(1).split("backend nodes\n")
    assert frontend.startswith("frontend inbox\n")

    def lines(part: str) -> str:
        return "".join(line + "\n" for line in part.splitlines() if line.startswith("    "))

    return lines(frontend.removeprefix("frontend inbox\n")), lines(backend)


def relayed(metrics: str) -> float:
    found = re.search(r'^inbox_node_requests_total\{[^}]*way="relayed"[^}]*\} ([\d.e+]+)$', metrics, re.M)
    return float(found[1]) if found else 0.0


def envelope(number: str, phone: str, n: int) -> tuple[bytes, dict[str, str]]:
    message = InboundMessage(message_id=f"wamid.routing.{n}", from_phone=phone, at=datetime.now(timezone.utc),
                             type="text", text=f"hello {n}", profile_name="Asha")
    body = build_envelope(number, "15550000000", messages=[message])
    return body, {"Content-Type": "application/json", "X-Hub-Signature-256": sign(APP_SECRET, body)}


async def test_a_node_names_itself_on_what_it_serves_for_its_workspace_relayed_or_not(db, service_settings):
    shared = cluster_settings(service_settings)
    async with running_node(db, shared) as first, \
            running_node_of_its_own(db, on_first_nodes_platform(shared, first)) as second:
        _, _, _, key = await scale_workspace(db)
        direct = await second.client.get(WHOAMI, headers=bearer(key))          # the second node takes it
        relayed_answer = await first.client.get(WHOAMI, headers=bearer(key))
        assert (direct.status_code, relayed_answer.status_code) == (200, 200)
        assert direct.headers["x-inbox-node"] == relayed_answer.headers["x-inbox-node"] == second.url
        # What names no workspace names no node.
        assert "x-inbox-node" not in (await first.client.get("/health/ready")).headers


async def test_a_node_alone_names_no_node(service):
    _, _, _, key = await scale_workspace(service.db)
    answer = await service.client.get(WHOAMI, headers=bearer(key))
    assert answer.status_code == 200 and "x-inbox-node" not in answer.headers


async def test_the_haproxy_lines_send_each_workspace_to_its_node(db, service_settings, haproxy, tmp_path):
    shared = with_settings(cluster_settings(service_settings), whatsapp_app_secret=APP_SECRET,
                           whatsapp_access_token="access-token", whatsapp_verify_token="verify-token",
                           trusted_proxy_hops=1)
    pem, ca = self_signed(tmp_path)
    port = free_port()
    config, log, workspaces_map = tmp_path / "haproxy.cfg", tmp_path / "haproxy.log", tmp_path / "workspaces.map"
    workspaces_map.write_text("")
    async with running_node(db, shared) as first, \
            running_node_of_its_own(db, with_settings(shared, whatsapp_api_url=first.simulator_url)) as second, \
            through_haproxy(port, ca) as client, trio.open_nursery() as nursery:
        frontend, backend = routing_lines()
        text = example_config()
        assert text.count("    default_backend nodes\n") == 1 and text.count("    server node1 ") == 1
        text = text.replace("    default_backend nodes\n", frontend + "    default_backend nodes\n")
        text = text.replace("    server node1 ", backend + "    server node1 ")
        # Two nodes here: the third's lines go.
        text = "".join(line for line in text.splitlines(keepends=True) if "node3" not in line)
        for written, used in {"bind :443": f"bind 127.0.0.1:{port}", "/etc/haproxy/inbox.pem": str(pem),
                              "/etc/haproxy/workspaces.map": str(workspaces_map),
                              "10.0.0.7:8080": first.url.removeprefix("http://"),
                              "10.0.0.8:8080": second.url.removeprefix("http://")}.items():
            assert written in text, f"the example should say {written!r}"
            text = text.replace(written, used)
        config.write_text(text)
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
        assert (await second.client.get(WHOAMI, headers=bearer(key))).status_code == 200   # the second holds it

        # The first call and the first webhook may land on either node; each answer names the second.
        first_call = await client.get(WHOAMI, headers=bearer(key))
        body, headers = envelope(number, "919812345001", 0)
        first_webhook = await client.post("/webhooks/whatsapp", content=body, headers=headers)
        assert (first_call.status_code, first_webhook.status_code) == (200, 200), first_webhook.text
        assert "x-inbox-node" not in first_call.headers      # the nodes' addresses stay behind HAProxy
        async def a_round(start: int) -> tuple[float, bool]:
            """Ten requests: how many the first node relayed, and whether the workspace stayed where it was (a
            node stalled past its lease on a loaded machine lets the other take it, and HAProxy then learns the
            move from the next answer: a round across a move proves nothing about the steady state)."""
            lease = await db.fetchrow("SELECT node_id, epoch FROM workspace_leases WHERE workspace_id = $1",
                                      workspace_id)
            before = relayed((await first.client.get("/metrics")).text)
            answers = [await client.get(WHOAMI, headers=bearer(key)) for _ in range(6)]
            for n in range(start, start + 4):
                body, headers = envelope(number, "919812345001", n)
                answers.append(await client.post("/webhooks/whatsapp", content=body, headers=headers))
            assert [answer.status_code for answer in answers] == [200] * 10, [answer.text for answer in answers]
            after = await db.fetchrow("SELECT node_id, epoch FROM workspace_leases WHERE workspace_id = $1",
                                      workspace_id)
            return relayed((await first.client.get("/metrics")).text) - before, lease == after

        # None of them went to the first node, which would have relayed it.
        rounds = [await a_round(1)]
        while not rounds[-1][1] and len(rounds) < 3:
            rounds.append(await a_round(1 + 4 * len(rounds)))
        assert rounds[-1] == (0, True), rounds
        nursery.cancel_scope.cancel()
