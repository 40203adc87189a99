"""The Reporting API's reads about one chat over real sockets, with messages entering through the signed
platform webhook and leaving through the simulator: the thread and its receipts, replies on two clocks, failed
sends that are never replies, views and seen-by (API reads are never views), assignment history, and the
workspace-wide replies and messages-by-status."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from tests import builders
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.e2e.platform_webhooks import customer_message, post_envelope
from tests.waiting import eventually

BASE = "/api/reporting/v1"


async def ok(service, key: str, path: str, **params) -> dict:
    answer = await service.client.get(BASE + path, headers=bearer(key), params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


async def send_text(service, key: str, phone: str, text: str) -> str:
    answer = await service.client.post("/api/send-message", headers=bearer(key), json={"to": phone, "message": text})
    assert answer.status_code == 200, answer.text
    return answer.json()["messageId"]


async def agent_reply(service, key: str, phone: str, text: str) -> str:
    answer = await service.client.post(f"/api/inbox/conversations/{phone}/reply", headers=bearer(key),
                                       json={"message": text})
    assert answer.status_code == 200, answer.text
    return answer.json()["messageId"]


async def status_of(service, key: str, phone: str, message_id: str, wanted: str):
    thread = await ok(service, key, f"/conversations/{phone}/messages")
    found = [m for m in thread["data"] if m["message_id"] == message_id]
    return found[0] if found and found[0]["status"] == wanted else None


async def test_replies_are_timed_on_two_clocks_and_a_bot_is_never_a_human(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    phone = "919812100001"
    # The customer wrote ten minutes ago (the platform's timestamp); the bot has no answer and hands off now.
    asked_at = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(minutes=10)
    await post_envelope(service, number, messages=[customer_message("wamid.asked1", phone, "my order?", asked_at)])
    await customer_writes(service, number, phone, "hello?")  # opens the platform's 24-hour window

    async def handed_off():
        detail = await ok(service, key, f"/conversations/{phone}")
        return detail if detail["state"] == "HANDOFF_PENDING" else None

    await eventually(handed_off)
    system = await send_text(service, key, phone, "We are looking into it.")
    await eventually(lambda: status_of(service, key, phone, system, "read"))
    human = await agent_reply(service, key, phone, "Hi, I am Asha from support.")
    await eventually(lambda: status_of(service, key, phone, human, "read"))

    replies = await ok(service, key, f"/conversations/{phone}/replies")
    assert replies["phone"] == phone
    assert replies["first_customer_message_at"] == asked_at.isoformat().replace("+00:00", "Z")
    by_id = {reply["message_id"]: reply for reply in replies["replies"]}
    assert [reply["message_id"] for reply in replies["replies"]] == [system, human]
    # The system reply is timed from when the customer began waiting, ten minutes ago.
    assert 600 <= by_id[system]["response_seconds"] < 660
    assert by_id[system]["sender_type"] == "system" and by_id[system]["actor"] is None
    assert by_id[system]["answers_message_id"] is not None
    # The agent's from when the customer began waiting for a person: the hand-off, moments ago.
    assert 0 <= by_id[human]["response_seconds"] < 60
    assert by_id[human]["sender_type"] == "agent" and by_id[human]["actor"]["user_id"] == admin
    assert replies["first_response"]["message_id"] == system and replies["first_response"]["sender_type"] == "system"
    assert replies["first_human_response"]["message_id"] == human
    assert replies["first_human_response"]["response_seconds"] == by_id[human]["response_seconds"]

    workspace = await ok(service, key, "/replies")
    assert [reply["message_id"] for reply in workspace["data"]] == [human, system]  # newest first
    assert workspace["data"][0]["phone"] == phone
    assert [r["message_id"] for r in (await ok(service, key, "/replies", agent_id=str(admin)))["data"]] == [human]
    assert [r["message_id"] for r in (await ok(service, key, "/replies", sender_type="system"))["data"]] == [system]
    assert (await ok(service, key, "/replies", sender_type="bot"))["data"] == []
    assert len((await ok(service, key, "/replies", phone="+91 98121 00001"))["data"]) == 2
    assert (await ok(service, key, "/replies", phone="919812199999"))["data"] == []
    paged = await ok(service, key, "/replies", limit="1")
    rest = await ok(service, key, "/replies", limit="1", cursor=paged["next_cursor"])
    assert [paged["data"][0]["message_id"], rest["data"][0]["message_id"]] == [human, system]
    assert rest["next_cursor"] is None and rest["window"] == paged["window"]


async def test_a_bot_reply_is_reported_as_the_bot(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    from inbox_actors.conversations import bot

    await bot.add_answer(service.db, workspace_id=workspace_id, keywords=["hours"], answer="We open at 9.")
    phone = "919812100002"
    await customer_writes(service, number, phone, "what are your hours")

    async def bot_replied():
        replies = await ok(service, key, f"/conversations/{phone}/replies")
        return replies if replies["replies"] and replies["replies"][0]["status"] in ("delivered", "read") else None

    replies = await eventually(bot_replied)
    assert replies["replies"][0]["sender_type"] == "bot" and replies["replies"][0]["actor"] is None
    assert replies["first_response"]["sender_type"] == "bot"
    assert replies["first_human_response"] is None
    detail = await ok(service, key, f"/conversations/{phone}")
    assert detail["needs_reply"] is False and detail["counts"]["from_bot"] == 1


async def test_a_failed_send_is_never_a_reply(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    phone = "998121000003"  # the simulator accepts, then reports the message failed (131026)
    await customer_writes(service, number, phone, "hello")
    failed = await send_text(service, key, phone, "Your parcel is on its way.")
    await eventually(lambda: status_of(service, key, phone, failed, "failed"))

    detail = await ok(service, key, f"/conversations/{phone}")
    assert detail["needs_reply"] is True and detail["waiting_since"] is not None
    replies = await ok(service, key, f"/conversations/{phone}/replies")
    assert [(r["status"], r["response_seconds"]) for r in replies["replies"]] == [("failed", None)]
    assert replies["first_response"] is None and replies["first_human_response"] is None
    waiting = await ok(service, key, "/conversations", needs_reply="true")
    assert phone in [chat["phone"] for chat in waiting["data"]]
    failures = await ok(service, key, "/messages", status="failed")
    assert failures["status"] == "failed" and failures["window"]
    row = failures["data"][0]
    assert row["message_id"] == failed and row["phone"] == phone and row["error_code"] == 131026
    assert row["error_text"] and row["preview"] == "Your parcel is on its way." and row["sender_type"] == "system"
    assert (await ok(service, key, "/messages", status="delivered"))["data"] == []


async def test_thread_order_receipts_and_cursors(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    phone = "919812100004"
    await customer_writes(service, number, phone, "one")
    sent = await send_text(service, key, phone, "two")
    await eventually(lambda: status_of(service, key, phone, sent, "read"))
    # The platform stamps customer messages in whole seconds: "three" is written in a second after "two" was sent.
    two_sent_at = await service.db.fetchval("SELECT sent_at FROM messages WHERE platform_message_id = $1", sent)
    await eventually(lambda: datetime.now(timezone.utc).replace(microsecond=0) > two_sent_at, timeout=3)
    await customer_writes(service, number, phone, "three")

    thread = await ok(service, key, f"/conversations/{phone}/messages")
    assert [m["text"] for m in thread["data"]] == ["one", "two", "three"] and thread["phone"] == phone
    assert all("receipts" not in m for m in thread["data"])
    newest = await ok(service, key, f"/conversations/{phone}/messages", order="desc", expand="receipts")
    assert [m["text"] for m in newest["data"]] == ["three", "two", "one"]
    outbound = newest["data"][1]
    assert outbound["sender_type"] == "system" and outbound["status"] == "read" and outbound["source"] == "whatsapp"
    assert [r["status"] for r in outbound["receipts"]] == ["sent", "delivered", "read"]
    assert "receipts" not in newest["data"][0]  # inbound messages have none
    walked, cursor = [], None
    while True:
        page = await ok(service, key, f"/conversations/{phone}/messages", limit="1", order="desc",
                        **({"cursor": cursor} if cursor else {}))
        walked += [m["text"] for m in page["data"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert walked == ["three", "two", "one"]
    receipts = await ok(service, key, f"/conversations/{phone}/receipts")
    assert receipts["phone"] == phone and len(receipts["data"]) == 1
    record = receipts["data"][0]
    assert record["message_id"] == sent and record["current_status"] == "read" and record["sender_type"] == "system"
    assert [r["status"] for r in record["receipts"]] == ["sent", "delivered", "read"]
    since = thread["data"][2]["sent_at"]
    assert [m["text"] for m in (await ok(service, key, f"/conversations/{phone}/messages", since=since))["data"]] \
        == ["three"]


async def test_only_a_member_opening_the_chat_is_a_view(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    other = await builders.member(service.db, workspace_id, "admin")
    other_key = (await builders.key(service.db, workspace_id, other)).key
    phone = "919812100005"
    await customer_writes(service, number, phone, "hello")
    await customer_writes(service, number, phone, "anyone?")
    # Reads through the API, and a key marking the chat read, are nobody looking.
    for path in ("", "/messages", "/receipts", "/replies", "/seen-by", "/views", "/assignment-history"):
        await ok(service, key, f"/conversations/{phone}{path}")
    await service.client.post(f"/api/inbox/conversations/{phone}/read", headers=bearer(other_key))
    seen = await ok(service, key, f"/conversations/{phone}/seen-by")
    assert seen["seen_by"] == [] and seen["seen_by_anyone"] is False
    assert seen["recorded_from"] and seen["last_customer_message_at"]
    assert (await ok(service, key, f"/conversations/{phone}/views"))["data"] == []

    await customer_writes(service, number, phone, "hello again")
    for _ in range(3):  # repeated opens within a minute are one view
        answer = await service.client.post(f"/api/inbox/conversations/{phone}/open", headers=bearer(key))
        assert answer.status_code == 200
    views = await ok(service, key, f"/conversations/{phone}/views")
    assert [(v["user"]["user_id"], v["marked_read"]) for v in views["data"]] == [(admin, 1)]
    await customer_writes(service, number, phone, "one more")
    seen = await ok(service, key, f"/conversations/{phone}/seen-by")
    assert seen["seen_by_anyone"] is False  # nobody has opened it since the customer's last message
    [person] = seen["seen_by"]
    assert person["user_id"] == admin and person["opens"] == 1 and person["unseen_customer_messages"] >= 1
    await service.client.post(f"/api/inbox/conversations/{phone}/open", headers=bearer(other_key))
    seen = await ok(service, key, f"/conversations/{phone}/seen-by")
    assert seen["seen_by_anyone"] is True
    assert [p["user_id"] for p in seen["seen_by"]] == [other, admin]
    views = await ok(service, key, f"/conversations/{phone}/views", limit="1")
    assert views["data"][0]["user"]["user_id"] == other and views["data"][0]["marked_read"] == 1
    older = await ok(service, key, f"/conversations/{phone}/views", limit="1", cursor=views["next_cursor"])
    assert older["data"][0]["user"]["user_id"] == admin and older["next_cursor"] is None


async def test_assignment_history_newest_first_with_names(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    agent = await builders.member(service.db, workspace_id, "agent")
    phone = "919812100006"
    await customer_writes(service, number, phone, "hello")
    for action, body in (("claim", None), ("transfer", {"to_user_id": agent, "reason": "billing"}),
                         ("release", {"reason": "end of shift"}), ("resolve", None)):
        answer = await service.client.post(f"/api/inbox/conversations/{phone}/{action}", headers=bearer(key),
                                           json=body)
        assert answer.status_code == 200, (action, answer.text)
    history = await ok(service, key, f"/conversations/{phone}/assignment-history")
    assert history["phone"] == phone and history["detailed_since"]
    events = history["data"]
    assert [e["event"] for e in events] == ["resolved", "released", "transferred", "claimed"]
    assert all(e["source"] == "events" for e in events)
    transferred = events[2]
    assert transferred["from"]["user_id"] == admin and transferred["to"]["user_id"] == agent
    assert transferred["by"]["user_id"] == admin and transferred["reason"] == "billing"
    assert transferred["to"]["name"] and events[3]["from"] is None
    assert events[0]["at"] >= events[1]["at"] >= events[2]["at"] >= events[3]["at"]
    detail = await ok(service, key, f"/conversations/{phone}")
    assert detail["resolved_at"] and detail["claimed_at"] and detail["handover_at"]
    assert set(detail["contact"]) >= {"name", "email", "company", "status", "tags"}
