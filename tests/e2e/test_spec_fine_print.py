"""The specification's fine print: each test quotes the line of the spec it holds the service to."""

from __future__ import annotations

import base64
from datetime import datetime, timedelta, timezone

import httpx

from tests import builders
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.e2e.platform_webhooks import customer_message, post_envelope
from tests.waiting import eventually

# The spec, Plans: "Core API (Growth and Scale):" and the calls it lists (the connectors are checked in
# test_connectors.py).
CORE_API = [
    ("POST", "/api/send-message"),
    ("POST", "/api/bulk-send"),
    ("GET", "/api/templates"),
    ("POST", "/api/contacts"),
    ("PUT", "/api/contacts/{phone}/name"),
    ("PUT", "/api/contacts/{phone}/status"),
    ("PUT", "/api/contacts/{phone}/email"),
    ("PUT", "/api/contacts/{phone}/company"),
    ("PUT", "/api/contacts/{phone}/tags"),
    ("PUT", "/api/contacts/{phone}/notes"),
    ("PUT", "/api/contacts/{phone}/attributes"),
    ("DELETE", "/api/contacts/{phone}/attributes/{key}"),
    ("POST", "/api/contacts/{phone}/opt-out"),
    ("POST", "/api/contacts/{phone}/opt-in"),
    ("GET", "/api/reporting/v1/whoami"),
]
# "Endpoints named without a shape": those with a path.
NAMED = [
    ("GET", "/api/reporting/v1/messages"),
    ("POST", "/api/webhook/outbound/test"),
    ("GET", "/api/webhook/outbound/deliveries"),
    ("POST", "/api/webhook/outbound/rotate-secret"),
    ("POST", "/api/mcp"),
    # General conventions, 4: "`GET /api/docs/routes` lists those routes (over 500) for reference only."
    ("GET", "/api/docs/routes"),
]


async def test_every_call_the_spec_names_is_listed_as_documented(service):
    # General conventions, 4: "Only the calls documented here are supported for integrations and keep their
    # shape. Every other route accepts the same key but is the web app's internal interface: undocumented,
    # unsupported, and may change or vanish without notice."
    _, _, _, key = await scale_workspace(service.db)
    answer = await service.client.get("/api/docs/routes", headers=bearer(key))
    assert answer.status_code == 200, answer.text
    rows = {(row["method"], row["path"]): row for row in answer.json()["data"]}
    for call in CORE_API:
        assert rows[call]["documented"] is True and rows[call]["tier"] == "core", rows[call]
    for call in NAMED:
        assert rows[call]["documented"] is True, rows[call]
    # The service's own calls (the spec gives no path) are not promised to integrations.
    for call in (("POST", "/api/inbox/conversations/{phone}/claim"), ("GET", "/api/team/members"),
                 ("POST", "/api/keys")):
        assert rows[call]["documented"] is False, rows[call]


async def test_a_cursor_passed_with_other_filters_or_sort_is_400_invalid_cursor(service):
    # Conventions, Pagination: "lists return data and next_cursor; pass next_cursor back as cursor; null means
    # last page; the cursor is opaque." A cursor belongs to the listing that gave it out: with other filters or
    # another sort it would mix two listings, so it is refused; with the same ones (any limit) the walk goes on.
    _, number, _, key = await scale_workspace(service.db)
    for n in range(1, 5):
        await customer_writes(service, number, f"91981140000{n}", "hello")
    path = "/api/reporting/v1/conversations"
    first = await service.client.get(path, headers=bearer(key), params={"limit": "2", "needs_reply": "true"})
    assert first.status_code == 200, first.text
    cursor = first.json()["next_cursor"]
    assert cursor is not None
    for other in ({"needs_reply": "false"}, {}, {"needs_reply": "true", "sort": "waiting_longest"},
                  {"needs_reply": "true", "q": "Asha"}):
        refused = await service.client.get(path, headers=bearer(key), params={**other, "cursor": cursor})
        assert refused.status_code == 400, (other, refused.text)
        assert refused.json()["error"] == "invalid_cursor", refused.json()
        if "sort" not in other:  # a cursor of the other sort is of another list altogether
            assert "other filters" in refused.json()["message"]
    going_on = await service.client.get(path, headers=bearer(key),
                                        params={"needs_reply": "true", "limit": "5", "cursor": cursor})
    assert going_on.status_code == 200, going_on.text
    walked = {chat["phone"] for chat in first.json()["data"]} | {chat["phone"] for chat in going_on.json()["data"]}
    assert walked == {f"91981140000{n}" for n in range(1, 5)}


async def test_fields_the_conversation_table_does_not_make_nullable_are_never_null(service):
    # Resources, Conversation: "| handover_reason | string | |" and "| last_message | object | message_id
    # (string), sender_type, sent_at (date-time), preview (string) |", where the nullable ones say "nullable".
    _, number, _, key = await scale_workspace(service.db)
    phone = "919811500001"
    await customer_writes(service, number, phone, "hello")
    chat = await service.client.get(f"/api/reporting/v1/conversations/{phone}", headers=bearer(key))
    assert chat.status_code == 200, chat.text
    listed = (await service.client.get("/api/reporting/v1/conversations", headers=bearer(key))).json()["data"]
    for conversation in (chat.json(), *listed):
        if conversation["state"] == "AI_ONLY":
            assert conversation["handover_reason"] == ""
        else:
            assert isinstance(conversation["handover_reason"], str) and conversation["handover_reason"]
        last = conversation["last_message"]
        assert isinstance(last, dict) and isinstance(last["message_id"], str) and isinstance(last["preview"], str)
        assert last["sent_at"] and last["sender_type"] in ("customer", "bot", "agent", "system")
    claimed = await service.client.post(f"/api/inbox/conversations/{phone}/claim", headers=bearer(key))
    assert claimed.status_code == 200 and claimed.json()["handover_reason"] != "", claimed.text


async def test_a_chat_s_replies_and_assignment_history_hold_every_item(service):
    # GET …/conversations/{phone}/replies: "Response: phone, first_customer_message_at, replies (array of Reply),
    # …"; GET …/assignment-history: "Response: phone, data (array of assignment events, newest first), …". Neither
    # has a cursor, so the answer holds every item: 2,500 here, past the 1,000 it used to stop at silently.
    workspace_id, number, admin, key = await scale_workspace(service.db)
    phone = "919811600001"
    await customer_writes(service, number, phone, "hello")
    chat = await service.db.fetchval("SELECT id FROM conversations WHERE workspace_id = $1 AND phone = $2",
                                     workspace_id, phone)
    await service.db.execute(
        "INSERT INTO messages (workspace_id, conversation_id, platform_message_id, direction, sender_type, text,"
        " status, sent_at) SELECT $1, $2, 'wamid.bulk' || n, 'outbound', 'system', 'update ' || n, 'delivered',"
        " now() + n * interval '1 second' FROM generate_series(1, 2500) AS n", workspace_id, chat)
    await service.db.execute(
        "INSERT INTO assignment_events (conversation_id, event, at, to_member, by_member)"
        " SELECT $1, CASE WHEN n % 2 = 1 THEN 'claimed' ELSE 'released' END, now() + n * interval '1 second',"
        " $2, $2 FROM generate_series(1, 2500) AS n", chat, admin)

    replies = await service.client.get(f"/api/reporting/v1/conversations/{phone}/replies", headers=bearer(key))
    assert replies.status_code == 200, replies.text
    sent = [reply for reply in replies.json()["replies"] if reply["message_id"].startswith("wamid.bulk")]
    assert len(sent) == 2500
    assert sent[0]["message_id"] == "wamid.bulk1" and sent[-1]["message_id"] == "wamid.bulk2500"  # oldest first
    history = await service.client.get(f"/api/reporting/v1/conversations/{phone}/assignment-history",
                                       headers=bearer(key))
    assert history.status_code == 200, history.text
    events = history.json()["data"]
    assert len(events) == 2500 and events[0]["event"] == "released" and events[-1]["event"] == "claimed"


async def test_unanswered_returns_every_wait_longer_than_older_than_and_agrees_with_the_conversation_list(service):
    # GET …/conversations/unanswered: "Chats whose customer has waited longer than older_than, longest wait first.
    # Params: older_than (…; default 30m; up to 90 days), state, assigned_to, q, since, to, limit (default 50),
    # cursor." A wait is not left out for having begun before the default window.
    _, number, _, key = await scale_workspace(service.db)
    now = datetime.now(timezone.utc)
    long_wait, wrote_again, recent = "919811700001", "919811700002", "919811700003"
    await post_envelope(service, number, messages=[
        customer_message("wamid.old1", long_wait, "still no answer?", now - timedelta(days=60)),
        customer_message("wamid.old2", wrote_again, "first question", now - timedelta(days=40)),
        customer_message("wamid.old3", wrote_again, "anyone?", now - timedelta(hours=1)),
        customer_message("wamid.new1", recent, "hello", now - timedelta(minutes=45)),
    ])
    lists = "/api/reporting/v1/conversations"

    async def all_waiting():
        answer = await service.client.get(f"{lists}/unanswered", headers=bearer(key))
        return answer.json() if len(answer.json()["data"]) == 3 else None

    default = await eventually(all_waiting)
    assert [chat["phone"] for chat in default["data"]] == [long_wait, wrote_again, recent]
    window_from = datetime.fromisoformat(default["window"]["from"].replace("Z", "+00:00"))
    assert window_from <= now - timedelta(days=60) + timedelta(seconds=1)  # the window reaches the longest wait
    sixty = (await service.client.get(f"{lists}/unanswered", headers=bearer(key),
                                      params={"older_than": "59d"})).json()
    assert [chat["phone"] for chat in sixty["data"]] == [long_wait]
    # The chat whose customer wrote 40 days ago and again an hour ago: both default lists show it, waiting.
    listed = (await service.client.get(lists, headers=bearer(key))).json()["data"]
    again = next(chat for chat in listed if chat["phone"] == wrote_again)
    assert again["needs_reply"] is True and again["waiting_seconds"] >= 40 * 86400
    assert wrote_again in {chat["phone"] for chat in default["data"]}
    # since/to narrow it to chats with activity inside them, as in the conversation list.
    narrowed = (await service.client.get(f"{lists}/unanswered", headers=bearer(key), params={
        "since": (now - timedelta(days=2)).isoformat()})).json()
    assert [chat["phone"] for chat in narrowed["data"]] == [wrote_again, recent]


async def test_a_customer_s_media_keeps_its_id_type_and_name_and_is_served_by_the_service(service):
    # Resources, Message: "| media_url | string, nullable |" and "| type | string | text is shown |". A customer's
    # image or document is the platform's media: its media_url is this service's authenticated route, which
    # fetches the file from the platform (GET /{media-id}, then the file with the access token).
    _, number, _, key = await scale_workspace(service.db)
    phone = "919811800001"
    picture = bytes(range(256)) * 8
    async with httpx.AsyncClient(base_url=service.simulator_url, timeout=10) as simulator:
        sent = await simulator.post(f"/simulator/customers/{phone}/messages", json={
            "phone_number_id": number, "type": "image", "text": "the broken part", "mime_type": "image/png",
            "content_base64": base64.b64encode(picture).decode()})
        document = await simulator.post(f"/simulator/customers/{phone}/messages", json={
            "phone_number_id": number, "type": "document", "filename": "invoice 42.pdf"})
        assert sent.status_code == 200 and document.status_code == 200, (sent.text, document.text)

        thread = (await service.client.get(f"/api/reporting/v1/conversations/{phone}/messages",
                                           headers=bearer(key))).json()["data"]
        image, pdf = [message for message in thread if message["sender_type"] == "customer"]
        assert image["type"] == "image" and image["text"] == "the broken part" and image["mime_type"] == "image/png"
        assert image["media_url"] == f"/api/reporting/v1/conversations/{phone}/messages/{image['id']}/media"
        assert pdf["type"] == "document" and pdf["filename"] == "invoice 42.pdf"
        assert pdf["mime_type"] == "application/pdf"

        fetched = await service.client.get(image["media_url"], headers=bearer(key))
        assert fetched.status_code == 200 and fetched.content == picture
        assert fetched.headers["content-type"] == "image/png"
        again = await service.client.get(image["media_url"], headers=bearer(key))
        assert again.content == picture
        assert (await simulator.get("/simulator/stats")).json()["media_downloads"] == 1  # the second was cached
        named = await service.client.get(pdf["media_url"], headers=bearer(key))
        assert named.status_code == 200 and "invoice%2042.pdf" in named.headers["content-disposition"]

    assert (await service.client.get(image["media_url"])).status_code == 401
    other = await service.client.get(f"/api/reporting/v1/conversations/{phone}/messages/999999/media",
                                     headers=bearer(key))
    assert other.status_code == 404 and other.json()["error"] == "not_found"


async def test_a_member_notes_a_chat_for_the_team_and_the_customer_never_sees_it(service):
    # Scopes: "| inbox | inbox:read | read chats and messages; claim, release, transfer, snooze, label, note
    # conversations |". A note is in the thread with its author, never sent, and counts as no message of the chat.
    workspace_id, number, admin, key = await scale_workspace(service.db)
    phone = "919811900001"
    await customer_writes(service, number, phone, "my order is late")
    path = f"/api/inbox/conversations/{phone}/notes"

    async def handed_off():  # the bot has no answer: the chat waits for a person
        chat = (await service.client.get(f"/api/inbox/conversations/{phone}", headers=bearer(key))).json()
        return chat if chat["state"] == "HANDOFF_PENDING" else None

    before = await eventually(handed_off)

    noted = await service.client.post(path, headers=bearer(key), json={"text": "Courier says Friday.\nCall back."})
    assert noted.status_code == 201, noted.text
    note = noted.json()
    assert note["type"] == "note" and note["sender_type"] == "agent" and note["status"] == "internal"
    assert note["actor"]["user_id"] == admin and note["text"] == "Courier says Friday.\nCall back."
    thread = (await service.client.get(f"/api/reporting/v1/conversations/{phone}/messages",
                                       headers=bearer(key))).json()["data"]
    assert [m["type"] for m in thread][-1] == "note"
    after = (await service.client.get(f"/api/inbox/conversations/{phone}", headers=bearer(key))).json()
    for field in ("counts", "last_message", "needs_reply", "waiting_since", "unread_count", "state"):
        assert after[field] == before[field], field
    async with httpx.AsyncClient(base_url=service.simulator_url, timeout=10) as simulator:
        sent = (await simulator.get(f"/simulator/numbers/{number}/messages", params={"to": phone})).json()["data"]
    assert all("Courier" not in (message.get("text") or "") for message in sent)
    audit = (await service.client.get("/api/team/audit-log", headers=bearer(key))).json()["data"]
    assert audit[0]["action"] == "chat.note_added" and audit[0]["subject"] == phone

    read_only = (await builders.key(service.db, workspace_id, admin, ("inbox:read",))).key
    refused = await service.client.post(path, headers=bearer(read_only), json={"text": "x"})
    assert refused.status_code == 403 and refused.json()["error"] == "read_only_key"
    for bad in ({"text": ""}, {"text": "a\x00b"}, {"text": "x" * 4097}, {}):
        assert (await service.client.post(path, headers=bearer(key), json=bad)).status_code == 400, bad
    missing = await service.client.post("/api/inbox/conversations/919811900009/notes", headers=bearer(key),
                                        json={"text": "hello"})
    assert missing.status_code == 404


async def test_labels_from_the_workspace_s_set_go_on_chats_and_filter_the_lists(service):
    # Scopes: "inbox … label … conversations"; Conversation: "| labels | array of string | |".
    workspace_id, number, admin, key = await scale_workspace(service.db)
    vip, late = "919812000001", "919812000002"
    for phone in (vip, late):
        await customer_writes(service, number, phone, "hello")
    made = await service.client.post("/api/labels", headers=bearer(key), json={"name": "VIP", "colour": "#2563EB"})
    assert made.status_code == 201 and made.json()["colour"] == "#2563eb", made.text
    assert (await service.client.post("/api/labels", headers=bearer(key), json={"name": "vip"})).status_code == 409
    await service.client.post("/api/labels", headers=bearer(key), json={"name": "Late delivery"})

    chats = "/api/inbox/conversations"
    labelled = await service.client.post(f"{chats}/{vip}/labels", headers=bearer(key), json={"label": "vip"})
    assert labelled.status_code == 200 and labelled.json()["labels"] == ["VIP"], labelled.text
    await service.client.post(f"{chats}/{late}/labels", headers=bearer(key), json={"label": "Late delivery"})
    unknown = await service.client.post(f"{chats}/{vip}/labels", headers=bearer(key), json={"label": "nope"})
    assert unknown.status_code == 404 and unknown.json()["error"] == "label_not_found"

    lists = "/api/reporting/v1/conversations"
    only_vip = (await service.client.get(lists, headers=bearer(key), params={"label": "VIP"})).json()["data"]
    assert [chat["phone"] for chat in only_vip] == [vip] and only_vip[0]["labels"] == ["VIP"]
    waiting = (await service.client.get(f"{lists}/unanswered", headers=bearer(key),
                                        params={"label": "late delivery", "older_than": "0s"})).json()["data"]
    assert [chat["phone"] for chat in waiting] == [late]

    # A rename reaches every chat; a deletion takes the label off them.
    renamed = await service.client.patch(f"/api/labels/{made.json()['id']}", headers=bearer(key),
                                         json={"name": "Gold"})
    assert renamed.status_code == 200 and renamed.json()["name"] == "Gold"
    detail = (await service.client.get(f"{chats}/{vip}", headers=bearer(key))).json()
    assert detail["labels"] == ["Gold"]
    deleted = await service.client.delete(f"/api/labels/{made.json()['id']}", headers=bearer(key))
    assert deleted.json() == {"id": made.json()["id"], "name": "Gold", "removed_from_chats": 1}
    assert (await service.client.get(f"{chats}/{vip}", headers=bearer(key))).json()["labels"] == []
    off = await service.client.delete(f"{chats}/{late}/labels/late%20delivery", headers=bearer(key))
    assert off.status_code == 200 and off.json()["labels"] == []
    audit = [entry["action"] for entry in
             (await service.client.get("/api/team/audit-log", headers=bearer(key))).json()["data"]]
    assert {"label.created", "label.changed", "label.deleted", "chat.labeled", "chat.unlabeled"} <= set(audit)

    read_only = (await builders.key(service.db, workspace_id, admin, ("inbox:read",))).key
    assert (await service.client.get("/api/labels", headers=bearer(read_only))).status_code == 200
    assert (await service.client.post(f"{chats}/{vip}/labels", headers=bearer(read_only),
                                      json={"label": "x"})).status_code == 403


async def test_a_snoozed_chat_leaves_the_open_views_until_the_customer_writes(service):
    # Scopes: "inbox … snooze … conversations". Snoozed, a chat leaves the hand-off queue and the `snoozed=false`
    # lists; the customer writing brings it back (a timed snooze's end is tested with the snooze clock).
    _, number, _, key = await scale_workspace(service.db)
    phone = "919812100001"
    await customer_writes(service, number, phone, "my order")

    async def queued():
        queue = (await service.client.get("/api/team/handoff-queue", headers=bearer(key))).json()["data"]
        return queue if [chat["phone"] for chat in queue] == [phone] else None

    await eventually(queued)  # the bot has no answer: handed off
    later = (datetime.now(timezone.utc) + timedelta(hours=2)).isoformat()
    snoozed = await service.client.post(f"/api/inbox/conversations/{phone}/snooze", headers=bearer(key),
                                        json={"until": later})
    assert snoozed.status_code == 200 and snoozed.json()["snoozed"] is True, snoozed.text
    assert snoozed.json()["snoozed_until"] is not None
    assert (await service.client.get("/api/team/handoff-queue", headers=bearer(key))).json()["data"] == []
    open_view = (await service.client.get("/api/reporting/v1/conversations", headers=bearer(key),
                                          params={"snoozed": "false"})).json()["data"]
    assert open_view == []
    past = await service.client.post(f"/api/inbox/conversations/{phone}/snooze", headers=bearer(key),
                                     json={"until": "2020-01-01T00:00:00Z"})
    assert past.status_code == 400 and past.json()["error"] == "invalid_until"

    until_reply = await service.client.post(f"/api/inbox/conversations/{phone}/snooze", headers=bearer(key))
    assert until_reply.json()["snoozed"] is True and until_reply.json()["snoozed_until"] is None
    await customer_writes(service, number, phone, "any news?")
    back = await eventually(queued)
    assert back[0]["snoozed"] is False
    unsnoozed = await service.client.post(f"/api/inbox/conversations/{phone}/unsnooze", headers=bearer(key))
    assert unsnoozed.status_code == 200 and unsnoozed.json()["snoozed"] is False


async def test_admins_run_the_bot_under_the_ai_scopes(service):
    # Scopes: ai_agent, ai_kb_edit, ai_behavior_edit, ai_provision and ai_audit_view, each under its own name: the
    # FAQ answers, the persona and hand-off words, on or off, and the trail of hand-offs.
    workspace_id, number, admin, key = await scale_workspace(service.db)

    def scoped(*scopes):
        return builders.key(service.db, workspace_id, admin, scopes)

    reader, knowledge, behaviour, provision, audit = [
        (await scoped(scope)).key for scope in ("ai_agent:read", "ai_kb_edit", "ai_behavior_edit", "ai_provision",
                                               "ai_audit_view")]
    added = await service.client.post("/api/bot/answers", headers=bearer(knowledge),
                                      json={"keywords": ["opening hours", "open"],
                                            "answer": "9 to 5, Monday to Friday."})
    assert added.status_code == 201, added.text
    assert (await service.client.post("/api/bot/answers", headers=bearer(reader),
                                      json={"keywords": ["x"], "answer": "y"})).status_code == 403
    listed = (await service.client.get("/api/bot/answers", headers=bearer(reader))).json()["data"]
    assert [a["answer"] for a in listed] == ["9 to 5, Monday to Friday."]
    changed = await service.client.patch("/api/bot/settings", headers=bearer(behaviour), json={
        "persona": "Ada", "handoff_message": "A person from our team will answer you shortly."})
    assert changed.status_code == 200 and changed.json()["persona"] == "Ada", changed.text
    assert (await service.client.patch("/api/bot/settings", headers=bearer(provision),
                                       json={"persona": "x"})).status_code == 403

    # The bot answers as Ada, and its hand-off words reach the customer as it hands off. (Each message once the
    # bot has answered the one before: words written while it thinks are answered together.)
    phone = "919812200001"
    messages = "/api/reporting/v1/conversations/{}/messages".format(phone)

    async def answered_times(count):
        thread = (await service.client.get(messages, headers=bearer(key))).json()["data"]
        bot = [m for m in thread if m["sender_type"] == "bot"]
        return bot if len(bot) == count else None

    await customer_writes(service, number, phone, "When are you open?")
    await eventually(lambda: answered_times(1))
    await customer_writes(service, number, phone, "Can I talk to a person?")
    answered = await eventually(lambda: answered_times(2))
    assert [m["text"] for m in answered] == ["9 to 5, Monday to Friday.",
                                              "A person from our team will answer you shortly."]
    assert {m["sender_label"] for m in answered} == {"Ada"}

    # Switched off, every customer message goes to a person.
    off = await service.client.put("/api/bot/enabled", headers=bearer(provision), json={"enabled": False})
    assert off.status_code == 200 and off.json()["enabled"] is False
    other = "919812200002"
    await customer_writes(service, number, other, "When are you open?")

    async def handed_off():
        detail = (await service.client.get(f"/api/inbox/conversations/{other}", headers=bearer(key))).json()
        return detail if detail["state"] == "HANDOFF_PENDING" else None

    assert (await eventually(handed_off))["handover_reason"] == "bot_off"
    trail = await service.client.get("/api/bot/handoffs", headers=bearer(audit))
    assert trail.status_code == 200, trail.text
    assert [(h["phone"], h["reason"]) for h in trail.json()["data"]] == [
        (other, "bot_off"), (phone, "customer_asked_for_person")]
    assert (await service.client.get("/api/bot/handoffs", headers=bearer(reader))).status_code == 403
    removed = await service.client.delete(f"/api/bot/answers/{added.json()['answer_id']}", headers=bearer(knowledge))
    assert removed.status_code == 200
    assert removed.json() == {"answer_id": added.json()["answer_id"], "removed": True}
    actions = {entry["action"] for entry in
               (await service.client.get("/api/team/audit-log", headers=bearer(key))).json()["data"]}
    assert {"bot.changed", "bot_answer.added", "bot_answer.removed"} <= actions
