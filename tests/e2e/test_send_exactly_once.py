"""`POST /api/send-message` exactly once, over real sockets through the simulator: the message row's id goes to
the platform as biz_opaque_callback_data and comes back on its statuses; a crash between the platform's answer
and the commit leaves the send in doubt (a retry with its Idempotency-Key gets 409, never a second send) until
the platform's status settles it, after which the retry gets the answer the first request would have had."""

from __future__ import annotations

import httpx
import pytest

from inbox_actors.conversations import idempotency_keys as idempotency
from tests.e2e.chat_helpers import customer_writes, outbox_events, scale_workspace
from tests.e2e.conftest import bearer, with_settings
from tests.faults import records_a_send_outcome
from tests.waiting import eventually

PHONE = "919812345691"


@pytest.fixture
def service_settings(service_settings):
    # Statuses a second after each send: long enough to ask a retry while its send is in doubt.
    return with_settings(service_settings, simulator_status_delays=(1.0, 1.2, 1.4))


async def send(service, key: str, body: dict, **headers) -> httpx.Response:
    return await service.client.post("/api/send-message", headers={**bearer(key), **headers}, json=body)


async def simulator_record(service, number: str) -> list[dict]:
    async with httpx.AsyncClient(base_url=service.simulator_url) as simulator:
        return (await simulator.get(f"/simulator/numbers/{number}/messages", params={"to": PHONE})).json()["data"]


async def test_a_send_carries_its_row_id_to_the_platform_and_its_statuses_bring_it_back(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    await customer_writes(service, number, PHONE, "hello")
    answer = await send(service, key, {"to": PHONE, "message": "Your order shipped."})
    assert answer.status_code == 200 and set(answer.json()) == {"success", "messageId", "channel"}
    row = await service.db.fetchrow("SELECT * FROM messages WHERE direction = 'outbound'")
    assert (row["status"], row["platform_message_id"]) == ("sent", answer.json()["messageId"])
    [record] = await simulator_record(service, number)
    assert (record["message_id"], record["callback_data"]) == (answer.json()["messageId"], str(row["id"]))
    await eventually(lambda: _status_is(service, row["id"], "read"))
    assert (await outbox_events(service.db, workspace_id)).count("message_sent") == 1


async def test_a_crash_before_the_outcome_is_committed_is_in_doubt_until_the_status_settles_it(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    await customer_writes(service, number, PHONE, "hello")
    # The process dies between the platform's answer and the commit of the outcome (once).
    service.db_of(workspace_id).fail_next(records_a_send_outcome, RuntimeError("killed mid-send"))
    body, headers = {"to": PHONE, "message": "Only once"}, {"Idempotency-Key": "order-42-shipped"}
    first = await send(service, key, body, **headers)
    assert first.status_code == 500
    retry = await send(service, key, body, **headers)
    assert retry.status_code == 409 and retry.json() == {"error": idempotency.IN_DOUBT}
    assert retry.headers["Retry-After"] == "5"
    row = await service.db.fetchrow("SELECT * FROM messages WHERE direction = 'outbound'")
    assert (row["status"], row["idempotency_key"]) == ("pending", "order-42-shipped")
    # In doubt, the send is listed as pending and is no reply yet.
    pending = await service.client.get("/api/reporting/v1/messages", params={"status": "pending"},
                                       headers=bearer(key))
    assert [item["id"] for item in pending.json()["data"]] == [row["id"]]
    replies = (await service.client.get(f"/api/reporting/v1/conversations/{PHONE}/replies",
                                        headers=bearer(key))).json()
    assert [(reply["status"], reply["response_seconds"]) for reply in replies["replies"]] == [("pending", None)]
    assert replies["first_response"] is None
    assert "message_sent" not in await outbox_events(service.db, workspace_id)

    [record] = await simulator_record(service, number)
    assert record["callback_data"] == str(row["id"])
    await eventually(lambda: _status_is(service, row["id"], "sent", "delivered", "read"))
    settled = await send(service, key, body, **headers)
    assert settled.status_code == 200 and settled.headers["Idempotent-Replayed"] == "true"
    assert settled.json() == {"success": True, "messageId": record["message_id"], "channel": "whatsapp"}
    assert len(await simulator_record(service, number)) == 1
    assert (await outbox_events(service.db, workspace_id)).count("message_sent") == 1
    replies = (await service.client.get(f"/api/reporting/v1/conversations/{PHONE}/replies",
                                        headers=bearer(key))).json()
    assert replies["replies"][0]["status"] != "pending" and replies["first_response"] is not None


async def _status_is(service, message_id: int, *wanted: str) -> bool:
    return await service.db.fetchval("SELECT status FROM messages WHERE id = $1", message_id) in wanted
