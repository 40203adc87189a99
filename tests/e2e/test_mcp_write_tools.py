"""The MCP tools beyond reads and claims, over real sockets: transfer, an agent's reply, contact create/update,
opt-out/in and broadcasts; each effect checked through the REST API, each refusal a result with isError."""

from __future__ import annotations

import pytest

from inbox_actors.mcp import tokens
from inbox_actors.platform import templates
from tests import builders
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.e2e.test_mcp_endpoint import mcp_token, tool
from tests.waiting import eventually

PHONE = "919811100021"


async def expose(service, key: str, *names: str) -> None:
    for name in names:
        answer = await service.client.patch(f"/api/mcp/actions/{name}", headers=bearer(key),
                                            json={"exposed": True, "needs_approval": False})
        assert answer.status_code == 200, answer.text


@pytest.fixture
async def workspace(service):
    """(workspace id, admin member id, full-access key, MCP token of the admin) with one chat and a template."""
    workspace_id, phone_number_id, admin, key = await scale_workspace(service.db)
    await templates.add_template(service.db, workspace_id=workspace_id, name="promo", language="en",
                                 body="Hello {{1}}, our sale starts today!", category_name="MARKETING")
    await customer_writes(service, phone_number_id, PHONE, "Where is my order?")
    return workspace_id, admin, key, (await mcp_token(service, key))["token"]


async def chat(service, key: str, phone: str = PHONE) -> dict:
    answer = await service.client.get(f"/api/reporting/v1/conversations/{phone}", headers=bearer(key))
    assert answer.status_code == 200, answer.text
    return answer.json()


async def test_claim_transfer_and_an_agent_reply(service, workspace):
    workspace_id, admin, key, token = workspace
    colleague = await builders.member(service.db, workspace_id, "agent")
    await expose(service, key, "claim_conversation", "transfer_conversation", "reply_in_chat")

    replied = await tool(service, token, "reply_in_chat", {"phone": PHONE, "text": "Looking into it now."})
    assert replied["isError"] is False, replied
    assert replied["structuredContent"]["messageId"].startswith("wamid.")
    assert (await chat(service, key))["claimed_by"]["user_id"] == admin
    thread = await service.client.get(f"/api/reporting/v1/conversations/{PHONE}/messages", headers=bearer(key))
    last = thread.json()["data"][-1]
    assert last["text"] == "Looking into it now." and last["sender_type"] == "agent"

    moved = await tool(service, token, "transfer_conversation",
                       {"phone": PHONE, "to_user_id": colleague, "reason": "Billing question"})
    assert moved["isError"] is False, moved
    assert moved["structuredContent"]["claimed_by"]["user_id"] == colleague
    assert (await chat(service, key))["claimed_by"]["user_id"] == colleague

    for arguments, words in (({"phone": PHONE, "to_user_id": 999_999}, ""),
                             ({"phone": "919800000099", "to_user_id": colleague}, "No such chat"),
                             ({"phone": PHONE}, "Invalid arguments")):
        refused = await tool(service, token, "transfer_conversation", arguments)
        assert refused["isError"] is True and words in refused["content"][0]["text"], (arguments, refused)
    assert (await chat(service, key))["claimed_by"]["user_id"] == colleague
    blank = await tool(service, token, "reply_in_chat", {"phone": PHONE, "text": "   "})
    assert blank["isError"] is True and "blank" in blank["content"][0]["text"]


async def test_contacts_are_created_updated_and_opted_out_and_bad_fields_change_nothing(service, workspace):
    _, _, key, token = workspace
    await expose(service, key, "create_contact", "update_contact", "opt_out_contact", "opt_in_contact")
    phone = "919811100022"

    created = await tool(service, token, "create_contact", {
        "phone": "+91 98111 00022", "name": "Ravi", "email": "ravi@example.com", "tags": ["vip"],
        "attributes": {"plan": "gold", "seats": 3}})
    assert created["isError"] is False, created
    assert created["structuredContent"]["created"] is True
    again = await tool(service, token, "create_contact", {"phone": phone, "name": "Ravi K", "tags": ["lead"]})
    assert again["structuredContent"]["created"] is False
    assert again["structuredContent"]["contact"]["tags"] == ["vip", "lead"]

    updated = await tool(service, token, "update_contact", {"phone": phone, "company": "Acme",
                                                            "attributes": {"seats": None}})
    assert updated["isError"] is False, updated
    stored = (await service.client.get(f"/api/contacts/{phone}", headers=bearer(key))).json()
    stored = stored.get("contact", stored)
    assert stored["name"] == "Ravi K" and stored["company"] == "Acme" and stored["email"] == "ravi@example.com"
    assert stored["custom_attributes"] == {"plan": "gold"}

    for name, arguments, words in (
            ("update_contact", {"phone": phone}, "Nothing to change"),
            ("update_contact", {"phone": phone, "email": "not an email"}, "Invalid arguments"),
            ("update_contact", {"phone": "919811100099", "name": "Nobody"}, "not found"),
            ("create_contact", {"phone": "12", "name": "Short"}, "Invalid"),
            ("create_contact", {"phone": phone, "name": "x" * 101}, "Invalid arguments")):
        refused = await tool(service, token, name, arguments)
        assert refused["isError"] is True and words in refused["content"][0]["text"], (arguments, refused)
    after = (await service.client.get(f"/api/contacts/{phone}", headers=bearer(key))).json()
    assert after.get("contact", after)["version"] == stored["version"]

    opted = await tool(service, token, "opt_out_contact", {"phone": phone})
    assert opted["structuredContent"]["opted_out"] is True
    back = await tool(service, token, "opt_in_contact", {"phone": phone})
    assert back["structuredContent"]["opted_out"] is False


async def test_a_broadcast_is_sent_read_and_listed_and_waits_for_approval_without_the_permission(service, workspace):
    workspace_id, _, key, token = workspace
    await expose(service, key, "send_broadcast")
    phones = ["919811100031", "919811100032"]

    sent = await tool(service, token, "send_broadcast", {"template": "promo", "parameters": ["friend"],
                                                         "phones": phones, "name": "Spring sale"})
    assert sent["isError"] is False, sent
    broadcast = sent["structuredContent"]
    assert broadcast["status"] == "sending" and broadcast["counts"]["recipients"] == 2
    assert broadcast["approval"]["required"] is False

    async def completed():
        view = await tool(service, token, "get_broadcast", {"broadcast_id": broadcast["id"]})
        return view if view["structuredContent"]["status"] == "completed" else None
    done = await eventually(completed, timeout=20.0, interval=0.1)
    rest = (await service.client.get(f"/api/broadcasts/{broadcast['id']}", headers=bearer(key))).json()
    assert done["structuredContent"]["counts"]["sent"] == rest["counts"]["sent"] == 2
    listed = await tool(service, token, "list_broadcasts", {"status": "completed"})
    assert [b["name"] for b in listed["structuredContent"]["data"]] == ["Spring sale"]

    for arguments, code in (({"template": "missing", "phones": phones}, "template_not_found"),
                            ({"template": "promo", "parameters": ["a"]}, "empty_audience"),
                            ({"template": "promo", "phones": phones}, "parameter_count_mismatch")):
        refused = await tool(service, token, "send_broadcast", arguments)
        assert refused["isError"] is True and code in refused["content"][0]["text"], (arguments, refused)
    missing = await tool(service, token, "get_broadcast", {"broadcast_id": 999_999})
    assert missing["isError"] is True

    # A member without campaign_approve: the broadcast waits for approval in the app.
    agent = await builders.member(service.db, workspace_id, "agent", permissions=["campaigns", "inbox"])
    agent_token = (await tokens.create_token(service.db, workspace_id=workspace_id, member_id=agent,
                                             name="agent assistant")).token
    pending = await tool(service, agent_token, "send_broadcast", {"template": "promo", "parameters": ["x"],
                                                                  "phones": phones})
    assert pending["isError"] is False, pending
    assert pending["structuredContent"]["status"] == "pending_approval"
    assert pending["structuredContent"]["approval"]["required"] is True
