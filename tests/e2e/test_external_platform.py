"""With WHATSAPP_API_URL set, the service uses that platform and the configured secrets: here a simulator run
on its own (as `inbox-actors simulator` does), standing in for Meta."""

from __future__ import annotations

import pytest

from inbox_actors.platform.simulator.customers import CustomerMessage
from inbox_actors.platform.simulator.model import Simulator, SimulatorConfig
from inbox_actors.platform.simulator.rules import StatusDelays
from inbox_actors.platform.simulator.server import serve_simulator
from tests.e2e.chat_helpers import chat, scale_workspace
from tests.e2e.conftest import bearer, with_settings
from tests.waiting import eventually

SECRET, TOKEN, VERIFY = "app-secret-for-tests", "access-token-for-tests", "verify-token-for-tests"
PHONE = "919844444441"


@pytest.fixture
async def platform(nursery):
    simulator = Simulator(SimulatorConfig(app_secret=SECRET, access_token=TOKEN,
                                          delays=StatusDelays(sent=0.01, delivered=0.02, read=0.03)))
    await nursery.start(serve_simulator, simulator, "127.0.0.1", 0)
    return simulator


@pytest.fixture
def service_settings(service_settings, platform):
    return with_settings(service_settings, whatsapp_api_url=platform.url, whatsapp_access_token=TOKEN,
                         whatsapp_app_secret=SECRET, whatsapp_verify_token=VERIFY)


async def test_the_service_sends_through_the_configured_platform_and_trusts_its_signature(service, platform):
    assert service.simulator_url is None  # no built-in simulator
    platform.webhook_url = f"{service.url}/webhooks/whatsapp"
    workspace_id, number, _, key = await scale_workspace(service.db)
    verified = await service.client.get("/webhooks/whatsapp", params={
        "hub.mode": "subscribe", "hub.verify_token": VERIFY, "hub.challenge": "42"})
    assert verified.text == "42"

    written = await platform.customer_writes(PHONE, CustomerMessage(phone_number_id=number, text="hello"))
    assert written.delivered_to_service
    sent = await service.client.post("/api/send-message", headers=bearer(key), json={"to": PHONE, "message": "Hi"})
    assert sent.status_code == 200, sent.text
    assert [record.message_id for record in platform.sent_messages(number, PHONE)] == [sent.json()["messageId"]]

    async def delivered():
        detail = await chat(service, key, PHONE)
        return detail if detail["state"] == "HANDOFF_PENDING" and not detail["needs_reply"] else None

    await eventually(delivered)
