"""The AI agent's cost on the books: each reply spends the workspace's credits (INBOX_AI_REPLY_CREDITS), and at a
zero balance or past the month's model budget the chat goes to a person, at no model cost."""

from __future__ import annotations

import pytest

from tests.e2e.chat_helpers import customer_writes, outbox_events
from tests.e2e.conftest import bearer, with_settings
from tests.e2e.test_ai_agent import agent_workspace, answered, bot_messages


@pytest.fixture
def service_settings(service_settings):
    return with_settings(service_settings, model_url=None, ai_reply_credits=2)


async def test_replies_spend_credits_and_an_empty_balance_hands_over(service):
    workspace_id, number, key = await agent_workspace(service)
    topped = await service.client.post("/api/credits/top-up", headers=bearer(key), json={"amount": 3})
    assert topped.status_code in (200, 201), topped.text
    # An alert level the reply's charge crosses (3 -> 1): credits_threshold fires as for a template send.
    await service.db.execute(
        "INSERT INTO webhook_configs (workspace_id, endpoint_url, events, enabled, signing_secret,"
        " credit_alert_levels) VALUES ($1, 'http://127.0.0.1:9/', '{}', false, 'whsec_x', '{2}')", workspace_id)
    await customer_writes(service, number, "919810000001", "Can I return my bike?")
    await answered(service, key, "919810000001")
    assert len(await bot_messages(service, workspace_id, "919810000001")) == 1
    entries = (await service.client.get("/api/credits/ledger", headers=bearer(key))).json()["data"]
    assert [(e["reason"], e["delta"], e["balance_after"]) for e in entries][0] == ("ai_reply", -2, 1)
    assert "credits_threshold" in await outbox_events(service.db, workspace_id)
    await customer_writes(service, number, "919810000002", "Can I return my bike?")
    short = await answered(service, key, "919810000002")
    assert short["handover_reason"] == "bot_out_of_credits"
    assert await service.db.fetchval("SELECT count(*) FROM ai_model_calls WHERE workspace_id = $1"
                                     " AND conversation_id = (SELECT id FROM conversations WHERE phone = $2)",
                                     workspace_id, "919810000002") == 0


async def test_past_the_monthly_budget_the_chat_goes_to_a_person(service):
    workspace_id, number, key = await agent_workspace(service)
    await service.client.post("/api/credits/top-up", headers=bearer(key), json={"amount": 100})
    changed = await service.client.patch("/api/bot/settings", headers=bearer(key), json={"monthly_budget_usd": 0})
    assert changed.status_code == 200 and changed.json()["monthly_budget_usd"] == 0
    await customer_writes(service, number, "919810000003", "Can I return my bike?")
    detail = await answered(service, key, "919810000003")
    assert detail["handover_reason"] == "bot_budget_reached"
