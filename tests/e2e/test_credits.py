"""Credits over real sockets, on a service that meters template sends (marketing 5, utility 1): the balance and
prices, top-ups with references, a send the balance cannot cover refused with nothing sent or debited, a send the
platform refuses refunded, the alert level crossed emitting credits_threshold once, and 50 concurrent sends on a
balance for 10 leaving exactly 10 sent and the balance at zero."""

from __future__ import annotations

import json

import pytest
import trio

from inbox_actors.domain.credit_prices import TemplatePrices
from inbox_actors.platform import templates
from tests import builders
from tests.e2e.chat_helpers import scale_workspace
from tests.e2e.conftest import bearer, with_settings

CREDITS, LEDGER, TOP_UP = "/api/credits", "/api/credits/ledger", "/api/credits/top-up"


@pytest.fixture
def service_settings(service_settings):
    return with_settings(service_settings, template_prices=TemplatePrices(marketing=5, utility=1))


async def metered_workspace(service) -> tuple[int, int, str]:
    workspace_id, _, admin, key = await scale_workspace(service.db)
    await templates.add_template(service.db, workspace_id=workspace_id, name="promo", language="en",
                                 body="Sale!", category_name="MARKETING")
    await templates.add_template(service.db, workspace_id=workspace_id, name="ping", language="en", body="Ping",
                                 category_name="UTILITY")
    return workspace_id, admin, key


async def send(service, key: str, to: str, template: str):
    return await service.client.post("/api/send-message", headers=bearer(key), json={
        "to": to, "type": "template", "template": {"name": template, "language": "en"}})


async def balance(service, key: str) -> int:
    return (await service.client.get(CREDITS, headers=bearer(key))).json()["balance"]


async def test_sends_are_charged_refused_when_short_refunded_when_refused_and_alerts_fire_once(service):
    workspace_id, admin, key = await metered_workspace(service)
    start = await service.client.get(CREDITS, headers=bearer(key))
    assert start.status_code == 200, start.text
    assert start.json() == {"balance": 0, "metered": True, "alert_levels": [],
                            "template_prices": {"marketing": 5, "utility": 1, "authentication": 0}}

    short = await send(service, key, "919888888801", "promo")
    assert short.status_code == 402, short.text
    assert short.json() == {"error": "Not enough credits: this template send costs 5 and the balance is 0. "
                                     "Top up the workspace's credits before sending."}
    assert await service.db.fetchval("SELECT count(*) FROM messages WHERE workspace_id = $1", workspace_id) == 0

    topped = await service.client.post(TOP_UP, headers=bearer(key), json={"amount": 12, "reference": "pay-1",
                                                                           "note": "first order"})
    assert topped.status_code == 201, topped.text
    assert (topped.json()["balance"], topped.json()["entry"]["member"]["user_id"]) == (12, admin)
    again = await service.client.post(TOP_UP, headers=bearer(key), json={"amount": 12, "reference": "pay-1"})
    assert (again.status_code, again.json()["replayed"], again.json()["balance"]) == (200, True, 12)
    other = await service.client.post(TOP_UP, headers=bearer(key), json={"amount": 99, "reference": "pay-1"})
    assert other.status_code == 409 and other.json()["error"] == "reference_used"

    # credits_threshold at 5: the first send takes 12 to 7, the unknown template holds 5 and gives it back, the
    # second promo takes 7 to 2 (crossing 5), the ping 2 to 1 (crossing nothing).
    await service.client.put("/api/webhook/outbound/config", headers=bearer(key), json={
        "endpoint_url": "http://127.0.0.1:9/hook", "events": ["credits_threshold"], "credit_alert_levels": [5]})
    assert (await send(service, key, "919888888802", "promo")).status_code == 200
    refused = await send(service, key, "919888888803", "never_registered")
    assert refused.status_code == 500 and refused.json()["errorCode"] == 132001, refused.text
    assert await balance(service, key) == 7, "a refused send is refunded"
    assert (await send(service, key, "919888888804", "promo")).status_code == 200
    assert (await send(service, key, "919888888805", "ping")).status_code == 200
    assert await balance(service, key) == 1

    ledger = (await service.client.get(LEDGER, headers=bearer(key))).json()["data"]
    assert [(e["reason"], e["delta"], e["balance_after"]) for e in ledger] == [
        ("template_send", -1, 1), ("template_send", -5, 2), ("refund", 5, 7), ("template_send", -5, 2),
        ("template_send", -5, 7), ("top_up", 12, 12)]
    assert ledger[0]["message_id"].startswith("wamid.") and ledger[-1]["reference"] == "pay-1"
    rows = await service.db.fetch("SELECT data FROM webhook_outbox WHERE workspace_id = $1"
                                  " AND event = 'credits_threshold'", workspace_id)
    assert [json.loads(row["data"])["level"] for row in rows] == [5]
    assert json.loads(rows[0]["data"])["previous_balance"] == 7 and json.loads(rows[0]["data"])["balance"] == 2

    viewer = (await builders.key(service.db, workspace_id, admin, ("billing_view",))).key
    assert (await service.client.get(LEDGER, headers=bearer(viewer))).status_code == 200
    refused_top_up = await service.client.post(TOP_UP, headers=bearer(viewer), json={"amount": 1})
    assert refused_top_up.status_code == 403 and refused_top_up.json()["error"] == "scope_denied"
    bad = await service.client.post(TOP_UP, headers=bearer(key), json={"amount": 0})
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_body"


async def test_fifty_concurrent_sends_on_a_balance_for_ten_send_exactly_ten(service):
    workspace_id, _, key = await metered_workspace(service)
    await service.client.post(TOP_UP, headers=bearer(key), json={"amount": 10})
    statuses: list[int] = []

    async def one(n: int) -> None:
        statuses.append((await send(service, key, f"91987000{n:04d}", "ping")).status_code)

    async with trio.open_nursery() as nursery:
        for n in range(50):
            nursery.start_soon(one, n)
    assert sorted(statuses) == [200] * 10 + [402] * 40
    assert await balance(service, key) == 0
    charged = await service.db.fetchval("SELECT count(*) FROM credit_ledger WHERE workspace_id = $1"
                                        " AND reason = 'template_send'", workspace_id)
    sent = await service.db.fetchval("SELECT count(*) FROM messages WHERE workspace_id = $1", workspace_id)
    assert (charged, sent) == (10, 10)


async def test_the_operator_tops_up_from_the_command_line(db, database_url):
    from tests.e2e.test_cli import cli, output

    workspace_id = await builders.workspace(db)
    topped = output(await cli(database_url, "credits", "top-up", "--workspace", str(workspace_id), "--amount", "40",
                              "--note", "invoice 12", "--reference", "inv-12"))
    assert (topped["balance"], topped["replayed"], topped["entry"]["member"]) == (40, False, None)
    again = output(await cli(database_url, "credits", "top-up", "--workspace", str(workspace_id), "--amount", "40",
                             "--reference", "inv-12"))
    assert (again["balance"], again["replayed"]) == (40, True)
    assert output(await cli(database_url, "credits", "balance", "--workspace", str(workspace_id))) == {
        "workspace_id": workspace_id, "balance": 40}
    refused = await cli(database_url, "credits", "top-up", "--workspace", str(workspace_id), "--amount", "0")
    assert refused.returncode == 2 and b"invalid top-up" in refused.stderr
