"""A request that meets its node's lost lease (the node was paused past it, and PostgreSQL's fence refused the
write) is answered 503 `node_unavailable` with Retry-After in the route's convention, never a bare 500 "internal
error": sent again, it goes to the node that holds the workspace. Found by cluster_check.py --pause, whose woken node
answered such sends 500."""

from __future__ import annotations

from persistence.statement_fence import LeaseLost
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import assert_stable, bearer

PHONE = "919822200031"


def _reserves_a_key(sql: str) -> bool:
    return "INSERT INTO idempotent_requests" in sql


def _claims(sql: str) -> bool:
    return "assignment_events" in sql and "INSERT" in sql


async def test_a_send_refused_by_the_fence_is_503_in_the_specifications_words_and_sent_again_once(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    await customer_writes(service, number, PHONE, "hello")
    service.db_of(workspace_id).fail_next(_reserves_a_key, LeaseLost("workspace no longer leased at epoch 1"))
    body, headers = {"to": PHONE, "message": "Only once"}, {**bearer(key), "Idempotency-Key": "moved-1"}
    refused = await service.client.post("/api/send-message", headers=headers, json=body)
    assert refused.status_code == 503 and refused.headers["Retry-After"] == "1"
    assert refused.json() == {"error": "The service is unavailable for a moment. Please try again."}
    again = await service.client.post("/api/send-message", headers=headers, json=body)
    assert again.status_code == 200, again.text
    assert await service.db.fetchval("SELECT count(*) FROM messages WHERE direction = 'outbound'") == 1


async def test_an_actor_that_crashed_of_the_lost_lease_is_503_node_unavailable(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    await customer_writes(service, number, PHONE, "hello")
    service.db_of(workspace_id).fail_next(_claims, LeaseLost("workspace no longer leased at epoch 1"))
    refused = await service.client.post(f"/api/inbox/conversations/{PHONE}/claim", headers=bearer(key))
    assert_stable(refused, 503, "node_unavailable")
    assert refused.headers["Retry-After"] == "1"
    assert (await service.client.post(f"/api/inbox/conversations/{PHONE}/claim", headers=bearer(key))
            ).status_code == 200
