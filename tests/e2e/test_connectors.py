"""The automation connectors over real sockets, as a Zapier or Make integration drives them: the authentication
test, plan refusals, REST hooks delivered signed from the outbox (and stopped by unsubscribing), polling samples,
every action through the catalog, dropdown sources, and bad input refused with nothing changed."""

from __future__ import annotations

import pytest
from standardwebhooks import Webhook

from inbox_actors.access import accounts
from inbox_actors.platform import templates
from tests import builders
from tests.e2e.chat_helpers import customer_writes
from tests.e2e.conftest import bearer
from tests.e2e.test_webhook_delivery import until_the_endpoint_hears
from tests.waiting import eventually
from tests.webhook_receiver import webhook_receiver

PLATFORMS = ("zapier", "make")
PHONE = "919812345670"


async def growth_workspace(db, plan: str = "growth"):
    """(workspace id, phone_number_id, admin id, key plaintext, key name) of a new workspace."""
    created = await accounts.create_workspace(db, name="Connector shop", plan=plan)
    admin = await builders.member(db, created.workspace_id, "admin")
    issued = await builders.key(db, created.workspace_id, admin)
    return created.workspace_id, created.phone_number_id, admin, issued.key, issued.name


async def nothing_pending(service, workspace_id: int) -> bool:
    """Each event of the workspace, and each hook's copy of one, has been delivered, failed or skipped: nothing
    more goes out for what happened so far (a delivery is recorded after its target answered)."""
    return await service.db.fetchval("SELECT count(*) FROM webhook_outbox WHERE workspace_id = $1"
                                     " AND outcome = 'pending'", workspace_id) == 0


async def contact_row(db, workspace_id: int, phone: str):
    return await db.fetchrow("SELECT name, email, company, tags, custom_attributes FROM contacts"
                             " WHERE workspace_id = $1 AND phone = $2", workspace_id, phone)


@pytest.mark.parametrize("platform", PLATFORMS)
async def test_me_names_the_workspace_the_key_and_the_member_it_acts_as(service, platform):
    workspace_id, _, admin, key, key_name = await growth_workspace(service.db)
    answer = await service.client.get(f"/api/{platform}/me", headers=bearer(key))
    assert answer.status_code == 200, answer.text
    me = answer.json()
    assert me["platform"] == platform
    assert me["workspace"] == {"id": workspace_id, "name": "Connector shop", "plan": "growth"}
    assert me["key"]["name"] == key_name and me["member"]["user_id"] == admin
    assert "Connector shop" in me["label"] and key_name in me["label"]
    assert me["events"] == ["message_received", "message_sent", "contact_created", "handoff", "tag_added"]

    unknown = await service.client.get(f"/api/{platform}/me", headers=bearer("inbox_nope"))
    assert unknown.status_code == 403 and unknown.json() == {"error": "Forbidden: Invalid or revoked API key"}


@pytest.mark.parametrize("platform", PLATFORMS)
async def test_a_starter_workspace_gets_the_plan_refusal_everywhere(service, platform):
    issued = await builders.plaintext_key(service.db, plan="starter")
    for method, path, body in (("GET", "/me", None), ("GET", "/triggers", None), ("GET", "/hooks", None),
                               ("POST", "/hooks", {"target_url": "http://127.0.0.1:9/hook",
                                                   "event": "message_received"}),
                               ("GET", "/hooks/1/deliveries", None), ("GET", "/actions", None),
                               ("GET", "/sources/tags", None),
                               ("POST", "/actions/add_tag", {"phone": PHONE, "tag": "vip"})):
        answer = await service.client.request(method, f"/api/{platform}{path}", headers=bearer(issued.key), json=body)
        assert answer.status_code == 403 and answer.json()["error"] == "api_not_in_plan", (path, answer.text)
    assert await service.db.fetchval("SELECT count(*) FROM connector_hooks") == 0


@pytest.mark.parametrize("platform", PLATFORMS)
async def test_a_hook_receives_each_event_signed_with_its_secret_until_unsubscribed(service, platform):
    workspace_id, number, _, key, key_name = await growth_workspace(service.db)
    auth = bearer(key)
    async with webhook_receiver() as first, webhook_receiver() as second:
        made = await service.client.post(f"/api/{platform}/hooks", headers=auth,
                                         json={"target_url": first.url, "event": "message_received"})
        assert made.status_code == 201, made.text
        hook = made.json()
        assert hook["event"] == "message_received" and hook["target_url"] == first.url
        assert hook["secret"].startswith("whsec_") and hook["key_name"] == key_name

        listed = (await service.client.get(f"/api/{platform}/hooks", headers=auth)).json()["data"]
        assert [h["id"] for h in listed] == [hook["id"]] and "secret" not in listed[0]
        other = "make" if platform == "zapier" else "zapier"
        assert (await service.client.get(f"/api/{other}/hooks", headers=auth)).json()["data"] == []

        await customer_writes(service, number, PHONE, "Is it in stock?")
        (delivery,) = await first.wait_for(1)
        body = delivery.envelope
        assert delivery.event == "message_received"
        assert body["id"] == body["correlation_id"] and body["data"]["text"] == "Is it in stock?"
        assert body["data"]["phone"] == PHONE and body["actor"] == "customer"
        assert delivery.signed_by(hook["secret"]) and not delivery.signed_by(hook["secret"] + "x")
        assert Webhook(hook["secret"]).verify(delivery.body, delivery.headers) == body

        # The same item as the trigger's polling list.
        polled = (await service.client.get(f"/api/{platform}/triggers/message_received/samples",
                                           headers=auth)).json()
        assert polled[0]["id"] == body["id"] and polled[0]["data"] == body["data"]

        async def delivered():
            return await service.db.fetchval(
                "SELECT a.status_code FROM webhook_outbox o JOIN webhook_attempts a ON a.outbox_id = o.id"
                " WHERE o.hook_id = $1 AND o.outcome = 'delivered'", hook["id"])
        assert await eventually(delivered) == 200, "the attempt is in the outbox's attempt log"
        log = await service.client.get(f"/api/{platform}/hooks/{hook['id']}/deliveries", headers=auth)
        assert log.status_code == 200, log.text
        (entry,) = log.json()["data"]
        assert entry["event"] == "message_received" and entry["correlation_id"] == body["id"]
        assert entry["outcome"] == "delivered" and [a["status_code"] for a in entry["attempts"]] == [200]
        assert log.json()["next_cursor"] is None
        bad = await service.client.get(f"/api/{platform}/hooks/{hook['id']}/deliveries?outcome=lost", headers=auth)
        assert bad.status_code == 400 and bad.json()["error"] == "invalid_outcome", bad.text
        other_log = await service.client.get(f"/api/{other}/hooks/{hook['id']}/deliveries", headers=auth)
        assert other_log.status_code == 404 and other_log.json()["error"] == "not_found", other_log.text
        # The workspace's own delivery log is its endpoint's: a hook's copies are not in it. With no endpoint set,
        # the events themselves are skipped; one written just now (the chat's later events) may still be pending
        # for a moment, so the count is awaited rather than read once.
        async def endpoint_events_left():
            left = await service.db.fetchval("SELECT count(*) FROM webhook_outbox WHERE workspace_id = $1"
                                             " AND hook_id IS NULL AND outcome <> 'skipped'", workspace_id)
            return left == 0
        assert await eventually(endpoint_events_left)

        gone = await service.client.delete(f"/api/{platform}/hooks/{hook['id']}", headers=auth)
        assert gone.status_code == 200 and gone.json()["id"] == hook["id"]
        again = await service.client.delete(f"/api/{platform}/hooks/{hook['id']}", headers=auth)
        assert again.status_code == 404 and again.json()["error"] == "not_found"
        gone_log = await service.client.get(f"/api/{platform}/hooks/{hook['id']}/deliveries", headers=auth)
        assert gone_log.status_code == 404, gone_log.text

        # A sentinel hook shows the next event went out; the unsubscribed one got nothing more.
        sentinel = await service.client.post(f"/api/{platform}/hooks", headers=auth,
                                             json={"target_url": second.url, "event": "message_received"})
        assert sentinel.status_code == 201
        await customer_writes(service, number, PHONE, "Hello again")
        await second.wait_for(1)
        await eventually(lambda: nothing_pending(service, workspace_id))
        assert len(first.received) == 1
        assert second.received[0].envelope["data"]["text"] == "Hello again"


async def test_a_hook_whose_key_is_revoked_receives_nothing(service):
    workspace_id, number, admin, key, _ = await growth_workspace(service.db)
    second_key = await builders.key(service.db, workspace_id, admin)
    async with webhook_receiver() as revoked, webhook_receiver() as live:
        for target, plaintext in ((revoked.url, key), (live.url, second_key.key)):
            made = await service.client.post("/api/zapier/hooks", headers=bearer(plaintext),
                                             json={"target_url": target, "event": "contact_created"})
            assert made.status_code == 201, made.text
        await until_the_endpoint_hears(service, workspace_id, lambda: service.db.execute(
            "UPDATE api_keys SET revoked_at = now() WHERE key_hash = (SELECT key_hash FROM api_keys"
            " WHERE id = (SELECT key_id FROM connector_hooks ORDER BY id LIMIT 1))"))
        await customer_writes(service, number, PHONE, "Hi")
        await live.wait_for(1)
        await eventually(lambda: nothing_pending(service, workspace_id))
        assert revoked.received == []


@pytest.mark.parametrize("platform", PLATFORMS)
async def test_a_growth_key_has_the_core_events_only(service, platform):
    _, _, _, key, _ = await growth_workspace(service.db)
    auth = bearer(key)
    catalog = (await service.client.get(f"/api/{platform}/triggers", headers=auth)).json()["data"]
    available = {t["key"]: t["available"] for t in catalog}
    assert available["message_received"] and available["handoff"] and available["tag_added"]
    assert not available["conversation_resolved"] and not available["sla_breached"]
    assert all(t["sample"]["event"] == t["key"] and t["label"] for t in catalog)

    refused = await service.client.post(f"/api/{platform}/hooks", headers=auth,
                                        json={"target_url": "http://127.0.0.1:9/hook",
                                              "event": "conversation_resolved"})
    assert refused.status_code == 403 and refused.json()["error"] == "event_requires_scale"
    samples = await service.client.get(f"/api/{platform}/triggers/conversation_resolved/samples", headers=auth)
    assert samples.status_code == 403 and samples.json()["error"] == "event_requires_scale"
    for body, code in (({"target_url": "http://127.0.0.1:9/hook", "event": "nope"}, "invalid_event"),
                       ({"target_url": "http://10.0.0.1/hook", "event": "handoff"}, "invalid_target_url"),
                       ({"target_url": "ftp://example.com/hook", "event": "handoff"}, "invalid_target_url"),
                       ({"event": "handoff"}, "invalid_body")):
        answer = await service.client.post(f"/api/{platform}/hooks", headers=auth, json=body)
        assert answer.status_code == 400 and answer.json()["error"] == code, (body, answer.text)
    assert await service.db.fetchval("SELECT count(*) FROM connector_hooks") == 0


async def test_scale_gets_every_event_and_resolving_reaches_a_hook(service):
    workspace_id, number, _, key, _ = await growth_workspace(service.db, plan="scale")
    auth = bearer(key)
    async with webhook_receiver() as receiver:
        made = await service.client.post("/api/make/hooks", headers=auth,
                                         json={"target_url": receiver.url, "event": "conversation_resolved"})
        assert made.status_code == 201, made.text
        await customer_writes(service, number, PHONE, "I need a person")
        claimed = await service.client.post("/api/make/actions/claim_conversation", headers=auth,
                                            json={"phone": PHONE})
        assert claimed.status_code == 200, claimed.text
        resolved = await service.client.post("/api/make/actions/resolve_conversation", headers=auth,
                                             json={"phone": PHONE, "reason": "done"})
        assert resolved.status_code == 200 and resolved.json()["state"] == "AI_ONLY", resolved.text
        (delivery,) = await receiver.wait_for(1)
        assert delivery.event == "conversation_resolved" and delivery.envelope["data"]["event"] == "resolved"


@pytest.mark.parametrize("platform", PLATFORMS)
async def test_samples_are_the_latest_events_newest_first_or_the_example(service, platform):
    _, number, _, key, _ = await growth_workspace(service.db)
    auth = bearer(key)
    url = f"/api/{platform}/triggers/message_received/samples"
    (example,) = (await service.client.get(url, headers=auth)).json()
    assert example["id"] == "example_message_received" and example["data"]["phone"]

    await customer_writes(service, number, PHONE, "first")
    await customer_writes(service, number, PHONE, "second")
    items = (await service.client.get(url, headers=auth)).json()
    assert [item["data"]["text"] for item in items] == ["second", "first"]
    assert len({item["id"] for item in items}) == 2 and all(item["id"].startswith("evt_") for item in items)
    assert [i["id"] for i in (await service.client.get(url, headers=auth)).json()] == [i["id"] for i in items]
    one = (await service.client.get(url, headers=auth, params={"limit": 1})).json()
    assert [item["id"] for item in one] == [items[0]["id"]]
    contacts = (await service.client.get(f"/api/{platform}/triggers/contact_created/samples", headers=auth)).json()
    assert contacts[0]["data"]["phone"] == PHONE

    for params, status in (({"limit": 0}, 400), ({"limit": "x"}, 400)):
        assert (await service.client.get(url, headers=auth, params=params)).status_code == status
    assert (await service.client.get(f"/api/{platform}/triggers/nope/samples", headers=auth)).status_code == 404


@pytest.mark.parametrize("platform", PLATFORMS)
async def test_every_action_runs_through_the_catalog_as_the_key_s_creator(service, platform):
    workspace_id, number, admin, key, key_name = await growth_workspace(service.db)
    auth = bearer(key)
    await templates.add_template(service.db, workspace_id=workspace_id, name="order_update", language="en",
                                 body="Hi {{1}}, order {{2}} is on its way")
    await customer_writes(service, number, PHONE, "Where is my order?")

    async def act(name: str, body: dict) -> dict:
        answer = await service.client.post(f"/api/{platform}/actions/{name}", headers=auth, json=body)
        assert answer.status_code == 200, (name, answer.text)
        return answer.json()

    sent = await act("send_text", {"to": PHONE, "text": "On its way"})
    assert sent["messageId"]
    label = await service.db.fetchval("SELECT sender_label FROM messages WHERE platform_message_id = $1",
                                      sent["messageId"])
    assert label == f"{'Zapier' if platform == 'zapier' else 'Make'}: {key_name}"
    assert (await act("send_template", {"to": PHONE, "template": "order_update",
                                        "parameters": ["Asha", "A-1"]}))["messageId"]

    other = "919800000011"
    await act("create_contact", {"phone": other, "name": "Ravi", "tags": ["lead"], "attributes": {"seats": 3}})
    await act("update_contact", {"phone": other, "company": "Acme"})
    await act("add_tag", {"phone": other, "tag": "vip"})
    row = await contact_row(service.db, workspace_id, other)
    assert row["name"] == "Ravi" and row["company"] == "Acme" and list(row["tags"]) == ["lead", "vip"]

    claimed = await act("claim_conversation", {"phone": PHONE})
    assert claimed["state"] == "HUMAN_ACTIVE" and claimed["claimed_by"]["user_id"] == admin
    resolved = await act("resolve_conversation", {"phone": PHONE})
    assert resolved["state"] == "AI_ONLY"
    author = await service.db.fetchval("SELECT actor FROM webhook_outbox WHERE workspace_id = $1"
                                       " AND event = 'tag_added' ORDER BY id DESC LIMIT 1", workspace_id)
    assert author.startswith("api_key:")


@pytest.mark.parametrize("platform", PLATFORMS)
async def test_bad_input_is_400_and_changes_nothing(service, platform):
    workspace_id, number, _, key, _ = await growth_workspace(service.db)
    auth = bearer(key)
    await customer_writes(service, number, PHONE, "hello", name="Asha")
    before = await contact_row(service.db, workspace_id, PHONE)
    for name, body in (("add_tag", {"phone": PHONE}), ("add_tag", {"phone": PHONE, "tag": "vip", "extra": 1}),
                       ("add_tag", {"phone": "12", "tag": "vip"}), ("add_tag", {"phone": PHONE, "tag": ""}),
                       ("update_contact", {"phone": PHONE, "email": "not an email"}),
                       ("update_contact", {"phone": PHONE}), ("create_contact", {"phone": PHONE}),
                       ("send_text", {"to": PHONE, "text": 5}), ("add_tag", [PHONE, "vip"])):
        answer = await service.client.post(f"/api/{platform}/actions/{name}", headers=auth, json=body)
        assert answer.status_code == 400, (name, body, answer.text)
        assert answer.json()["error"] == "invalid_arguments" and answer.json()["message"]
    not_json = await service.client.post(f"/api/{platform}/actions/add_tag", headers=auth, content=b"{")
    assert not_json.status_code == 400
    assert await contact_row(service.db, workspace_id, PHONE) == before
    assert await service.db.fetchval("SELECT count(*) FROM messages WHERE workspace_id = $1"
                                     " AND sender_type <> 'customer' AND sender_type <> 'bot'", workspace_id) == 0

    missing = await service.client.post(f"/api/{platform}/actions/resolve_conversation", headers=auth,
                                        json={"phone": "919800000077"})
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    refused = await service.client.post(f"/api/{platform}/actions/send_template", headers=auth,
                                        json={"to": PHONE, "template": "no_such_template"})
    assert refused.status_code == 409 and refused.json()["error"] == "action_refused", refused.text
    assert refused.json()["details"]["errorCode"] == 132001
    unknown = await service.client.post(f"/api/{platform}/actions/delete_everything", headers=auth, json={})
    assert unknown.status_code == 404


async def test_a_key_s_scopes_and_its_creator_s_permissions_bound_the_actions(service):
    workspace_id, number, admin, _, _ = await growth_workspace(service.db)
    contacts_only = await builders.key(service.db, workspace_id, admin, scopes=("contacts",))
    agent = await builders.member(service.db, workspace_id, "agent", permissions=["contacts", "automations"])
    agent_key = await builders.key(service.db, workspace_id, agent, scopes=("all",))
    await customer_writes(service, number, PHONE, "hello")
    sent = await service.client.post("/api/zapier/actions/send_text", headers=bearer(contacts_only.key),
                                     json={"to": PHONE, "text": "hi"})
    assert sent.status_code == 403 and sent.json()["error"] == "scope_denied"
    tagged = await service.client.post("/api/zapier/actions/add_tag", headers=bearer(contacts_only.key),
                                       json={"phone": PHONE, "tag": "vip"})
    assert tagged.status_code == 200, tagged.text
    claim = await service.client.post("/api/make/actions/claim_conversation", headers=bearer(agent_key.key),
                                      json={"phone": PHONE})
    assert claim.status_code == 403 and claim.json()["error"] == "permission_denied"
    hooks = await service.client.get("/api/make/hooks", headers=bearer(contacts_only.key))
    assert hooks.status_code == 403 and hooks.json()["error"] == "scope_denied"


@pytest.mark.parametrize("platform", PLATFORMS)
async def test_dropdown_sources_and_field_definitions_in_the_platform_s_shape(service, platform):
    workspace_id, number, admin, key, _ = await growth_workspace(service.db)
    auth = bearer(key)
    await templates.add_template(service.db, workspace_id=workspace_id, name="order_update", language="en",
                                 body="Hi {{1}}, order {{2}}")
    await service.client.post(f"/api/{platform}/actions/create_contact", headers=auth,
                              json={"phone": PHONE, "name": "Ravi", "tags": ["vip", "lead"]})

    async def source(name: str) -> list[dict]:
        answer = await service.client.get(f"/api/{platform}/sources/{name}", headers=auth)
        assert answer.status_code == 200, answer.text
        return answer.json()

    value = "id" if platform == "zapier" else "value"
    assert [item[value] for item in await source("templates")] == ["order_update"]
    assert "en" in (await source("templates"))[0]["label"]
    assert [item[value] for item in await source("members")] == [admin]
    assert [item[value] for item in await source("tags")] == ["lead", "vip"]
    assert all(set(item) == {value, "label"} for item in await source("tags"))

    definitions = (await service.client.get(f"/api/{platform}/actions", headers=auth)).json()
    if platform == "zapier":
        by_key = {action["key"]: action for action in definitions}
        fields = {f["key"]: f for f in by_key["send_template"]["operation"]["inputFields"]}
        assert fields["template"]["dynamic"] == "templates.id.label" and fields["template"]["required"] is True
        assert fields["parameters"]["list"] is True and fields["language"]["default"] == "en"
        assert fields["to"]["type"] == "string" and fields["to"]["helpText"]
        assert {f["key"]: f for f in by_key["create_contact"]["operation"]["inputFields"]}["attributes"]["dict"]
        assert by_key["send_template"]["operation"]["url"] == "/api/zapier/actions/send_template"
    else:
        by_name = {module["name"]: module for module in definitions}
        parameters = {p["name"]: p for p in by_name["send_template"]["parameters"]}
        assert parameters["template"] == {**parameters["template"], "type": "select", "options": "rpc://templates"}
        assert parameters["parameters"]["type"] == "array" and parameters["to"]["type"] == "text"
        tags = {p["name"]: p for p in by_name["create_contact"]["parameters"]}["tags"]
        assert tags["options"] == "rpc://tags" and tags["multiple"] is True
        transfer = {p["name"]: p for p in by_name["transfer_conversation"]["parameters"]}
        assert transfer["to_user_id"]["options"] == "rpc://members"
    names = [d["key" if platform == "zapier" else "name"] for d in definitions]
    assert {"send_text", "send_template", "create_contact", "update_contact", "add_tag", "claim_conversation",
            "resolve_conversation"} <= set(names)


async def test_the_route_list_shows_both_prefixes_as_core_api(service):
    _, _, _, key, _ = await growth_workspace(service.db, plan="scale")
    answer = await service.client.get("/api/docs/routes", headers=bearer(key))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    rows = body["routes"] if isinstance(body, dict) and "routes" in body else body.get("data", body)
    ours = {(row["method"], row["path"]): row for row in rows if row["path"].startswith(("/api/zapier", "/api/make"))}
    for platform in PLATFORMS:
        for method, path in (("GET", "/me"), ("POST", "/hooks"), ("DELETE", "/hooks/{hook_id}"),
                             ("GET", "/triggers/{event}/samples"), ("POST", "/actions/send_template"),
                             ("GET", "/sources/members")):
            row = ours[(method, f"/api/{platform}{path}")]
            assert row["tier"] == "core" and row["documented"] is True, row
    assert ours[("POST", "/api/zapier/actions/send_text")]["scopes"] == ["whatsapp_api"]
