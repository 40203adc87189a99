"""Driving chats in e2e tests: simulated customers, waiting for what the platform posts back."""

from __future__ import annotations

import httpx
import trio

from inbox_actors.outbound_http.verified_tls import verified_context
from tests import builders


async def customer_writes(service, phone_number_id: str, phone: str, text: str, name: str = "Asha") -> dict:
    """A simulated customer sends `text`; returns the simulator's answer (after the service answered it)."""
    async with httpx.AsyncClient(verify=verified_context(), base_url=service.simulator_url, timeout=10) as simulator:
        response = await simulator.post(f"/simulator/customers/{phone}/messages",
                                        json={"phone_number_id": phone_number_id, "text": text, "name": name})
    assert response.status_code == 200, response.text
    return response.json()


async def chat(service, key: str, phone: str) -> dict:
    response = await service.client.get(f"/api/inbox/conversations/{phone}", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 200, response.text
    return response.json()


async def scale_workspace(db) -> tuple[int, str, int, str]:
    """(workspace id, phone_number_id, admin member id, full-access key) of a new Scale workspace."""
    from inbox_actors.access import accounts

    created = await accounts.create_workspace(db, name="Flow workspace", plan="scale")
    admin = await builders.member(db, created.workspace_id, "admin")
    issued = await builders.key(db, created.workspace_id, admin)
    return created.workspace_id, created.phone_number_id, admin, issued.key


async def outbox_events(db, workspace_id: int) -> list[str]:
    rows = await db.fetch("SELECT event FROM webhook_outbox WHERE workspace_id = $1 ORDER BY id", workspace_id)
    return [row["event"] for row in rows]


async def template_burst(service, count: int, prefix: str) -> list[int]:
    """`count` template sends at once, each to a new number `<prefix><n>`, from a new Scale workspace; the
    outcome of each: 200, or the errorCode of the failure."""
    from inbox_actors.platform import templates

    workspace_id, _, _, key = await scale_workspace(service.db)
    await templates.add_template(service.db, workspace_id=workspace_id, name="ping", language="en", body="Ping")
    outcomes: list[int] = []

    async def one(n: int) -> None:
        answer = await service.client.post("/api/send-message", headers={"Authorization": f"Bearer {key}"}, json={
            "to": f"{prefix}{n:07d}", "type": "template", "template": {"name": "ping", "language": "en"}})
        outcomes.append(200 if answer.status_code == 200 else answer.json()["errorCode"])

    async with trio.open_nursery() as nursery:
        for n in range(1, count + 1):
            nursery.start_soon(one, n)
    return outcomes
