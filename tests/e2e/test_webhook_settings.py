"""Webhook settings over HTTP: the WebhookConfig, saving (plan rules, named 400s), the secret shown once,
rotation, and who may call."""

from __future__ import annotations

import pytest

from inbox_actors.domain import events
from tests import builders
from tests.e2e.conftest import assert_stable, bearer
from tests.e2e.test_key_management import session_of

CONFIG = "/api/webhook/outbound/config"
ROTATE = "/api/webhook/outbound/rotate-secret"
RECEIVER = "http://127.0.0.1:9/hook"


async def scale_key(db, scopes=("all",)) -> tuple[int, dict[str, str]]:
    workspace_id = await builders.workspace(db, "scale")
    issued = await builders.key(db, workspace_id, await builders.member(db, workspace_id), scopes)
    return workspace_id, bearer(issued.key)


async def test_an_unconfigured_scale_workspace_reads_the_whole_catalog(service):
    _, auth = await scale_key(service.db, ("settings:read",))
    response = await service.client.get(CONFIG, headers=auth)
    assert response.status_code == 200, response.text
    config = response.json()
    assert config == {
        "configured": False, "endpoint_url": "", "events": [], "enabled": False, "updated_at": None,
        "updated_by_name": None, "valid_events": list(events.ALL_EVENTS), "api_tier": "full",
        "webhooks_available": True, "event_catalog": config["event_catalog"], "credit_alert_levels": [],
    }
    assert [row["event"] for row in config["event_catalog"]] == list(events.ALL_EVENTS)
    assert all(row["available"] and row["group"] and row["description"] for row in config["event_catalog"])
    assert {row["event"]: row["plan"] for row in config["event_catalog"]}["message_status"] == "scale"
    assert {row["event"]: row["plan"] for row in config["event_catalog"]}["handoff"] == "any"


async def test_the_first_save_shows_the_secret_once_and_later_saves_never(service):
    workspace_id, auth = await scale_key(service.db)
    first = await service.client.put(CONFIG, headers=auth, json={
        "endpoint_url": RECEIVER, "events": ["message_status", "message_received", "message_received"],
        "credit_alert_levels": [100, 500, 100]})
    assert first.status_code == 200, first.text
    saved = first.json()
    assert saved["secret"].startswith("whsec_") and len(saved["secret"]) > 40
    assert saved["configured"] and saved["enabled"] and saved["endpoint_url"] == RECEIVER
    assert saved["events"] == ["message_received", "message_status"], "catalog order, no repeats"
    assert saved["credit_alert_levels"] == [500, 100]
    assert saved["updated_at"] and saved["updated_by_name"].startswith("Member")

    again = await service.client.put(CONFIG, headers=auth, json={"endpoint_url": RECEIVER, "events": [],
                                                                 "enabled": False})
    assert again.status_code == 200 and "secret" not in again.json()
    read = (await service.client.get(CONFIG, headers=auth)).json()
    assert "secret" not in read and read["enabled"] is False and read["events"] == []
    stored = await service.db.fetchval("SELECT signing_secret FROM webhook_configs WHERE workspace_id = $1",
                                       workspace_id)
    assert stored == saved["secret"], "a later save keeps the secret"


async def test_rotation_answers_a_new_secret_that_replaces_the_old(service):
    workspace_id, auth = await scale_key(service.db)
    assert_stable(await service.client.post(ROTATE, headers=auth), 404, "not_found")
    first = (await service.client.put(CONFIG, headers=auth, json={"endpoint_url": RECEIVER, "events": []})).json()
    rotated = await service.client.post(ROTATE, headers=auth)
    assert rotated.status_code == 200, rotated.text
    assert set(rotated.json()) == {"secret"} and rotated.json()["secret"] != first["secret"]
    stored = await service.db.fetchval("SELECT signing_secret FROM webhook_configs WHERE workspace_id = $1",
                                       workspace_id)
    assert stored == rotated.json()["secret"]


@pytest.mark.parametrize("body, status, code", [
    ({"endpoint_url": RECEIVER, "events": ["message_recieved"]}, 400, "invalid_event"),
    ({"endpoint_url": "ftp://example.com/hook", "events": []}, 400, "invalid_endpoint_url"),
    ({"endpoint_url": "not a url", "events": []}, 400, "invalid_endpoint_url"),
    ({"endpoint_url": "http://example.com/hook", "events": []}, 400, "invalid_endpoint_url"),
    ({"endpoint_url": "https://169.254.169.254/latest", "events": []}, 400, "invalid_endpoint_url"),
    ({"endpoint_url": "https://[::ffff:10.0.0.1]/hook", "events": []}, 400, "invalid_endpoint_url"),
    ({"endpoint_url": "https://user:pw@example.com/hook", "events": []}, 400, "invalid_endpoint_url"),
    ({"endpoint_url": RECEIVER, "events": [], "credit_alert_levels": [0]}, 400, "invalid_credit_alert_levels"),
    ({"endpoint_url": RECEIVER, "events": "message_sent"}, 400, "invalid_body"),
    ({"events": []}, 400, "invalid_body"),
    ({"endpoint_url": RECEIVER, "events": [], "secret": "mine"}, 400, "invalid_body"),
])
async def test_bad_settings_get_a_named_400_and_change_nothing(service, body, status, code):
    workspace_id, auth = await scale_key(service.db)
    assert_stable(await service.client.put(CONFIG, headers=auth, json=body), status, code)
    assert await service.db.fetchval("SELECT count(*) FROM webhook_configs WHERE workspace_id = $1",
                                     workspace_id) == 0


async def test_plans_decide_what_a_workspace_may_subscribe_to(service):
    # Growth and Starter set webhooks up in the web app (a key there has no full API).
    growth = await builders.workspace(service.db, "growth")
    growth_session = await session_of(service.db, await builders.member(service.db, growth))
    assert_stable(await service.client.put(CONFIG, headers=growth_session, json={
        "endpoint_url": RECEIVER, "events": ["message_sent", "conversation_seen"]}), 403, "event_requires_scale")
    ok = await service.client.put(CONFIG, headers=growth_session,
                                  json={"endpoint_url": RECEIVER, "events": list(events.CORE_EVENTS)})
    assert ok.status_code == 200, ok.text
    config = ok.json()
    assert config["valid_events"] == list(events.CORE_EVENTS) and config["api_tier"] == "core"
    assert [row["event"] for row in config["event_catalog"] if row["available"]] == list(events.CORE_EVENTS)

    starter = await builders.workspace(service.db, "starter")
    starter_session = await session_of(service.db, await builders.member(service.db, starter))
    assert_stable(await service.client.put(CONFIG, headers=starter_session,
                                           json={"endpoint_url": RECEIVER, "events": []}), 403, "webhooks_not_in_plan")
    read = (await service.client.get(CONFIG, headers=starter_session)).json()
    assert read["webhooks_available"] is False and read["valid_events"] == [] and read["api_tier"] == "none"
    assert not any(row["available"] for row in read["event_catalog"])


async def test_who_may_read_and_change_the_settings(service):
    _, reader = await scale_key(service.db, ("settings:read",))
    assert_stable(await service.client.put(CONFIG, headers=reader, json={"endpoint_url": RECEIVER, "events": []}),
                  403, "read_only_key")
    _, inbox_key = await scale_key(service.db, ("inbox",))
    assert_stable(await service.client.get(CONFIG, headers=inbox_key), 403, "scope_denied")
    growth_key = await builders.plaintext_key(service.db, "growth", scopes=("settings",))
    assert_stable(await service.client.get(CONFIG, headers=bearer(growth_key.key)), 403, "api_access_not_enabled")
    workspace_id = await builders.workspace(service.db, "scale")
    agent = await builders.member(service.db, workspace_id, "agent", permissions=["inbox"])
    assert_stable(await service.client.get(CONFIG, headers=await session_of(service.db, agent)), 403,
                  "permission_denied")
    assert (await service.client.get(CONFIG)).status_code == 401
