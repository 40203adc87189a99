"""The Reporting API's chat lists over real sockets, with customers writing through the simulator: filters,
windows, exact keyset walks, the unread summary, unanswered, every 400 code, and what an assigned-only member
sees."""

from __future__ import annotations

import base64
import re
from datetime import datetime, timedelta, timezone

from tests import builders
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.e2e.platform_webhooks import customer_message, post_envelope
from tests.waiting import eventually

BASE = "/api/reporting/v1"
ISO_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")


async def get(service, key: str, path: str, **params):
    return await service.client.get(BASE + path, headers=bearer(key), params=params)


async def ok(service, key: str, path: str, **params) -> dict:
    answer = await get(service, key, path, **params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def phones(page: dict) -> list[str]:
    return [chat["phone"] for chat in page["data"]]


def timestamps(value) -> list[str]:
    """Every string in a response that looks like a date-time."""
    if isinstance(value, dict):
        return [t for v in value.values() for t in timestamps(v)]
    if isinstance(value, list):
        return [t for v in value for t in timestamps(v)]
    return [value] if isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}T", value) else []


async def test_newest_activity_first_filters_combine_and_the_window_is_echoed(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    agent = await builders.member(service.db, workspace_id, "agent")
    for phone, name in (("919811100001", "Asha Rao"), ("919811100002", "Ravi Kumar"), ("919811100003", "Meera")):
        await customer_writes(service, number, phone, "hello", name=name)

    async def all_handed_off():  # the bot has no answers: it hands each chat off, after the webhook's answer
        page = await ok(service, key, "/conversations", state="HANDOFF_PENDING")
        return len(page["data"]) == 3

    await eventually(all_handed_off)
    await service.client.post("/api/inbox/conversations/919811100002/claim", headers=bearer(key))
    await service.client.post("/api/inbox/conversations/919811100003/open", headers=bearer(key))

    everything = await ok(service, key, "/conversations")
    assert phones(everything) == ["919811100003", "919811100002", "919811100001"]
    assert everything["next_cursor"] is None
    window = everything["window"]
    assert set(window) == {"from", "to"}
    span = datetime.fromisoformat(window["to"]) - datetime.fromisoformat(window["from"])
    assert span == timedelta(days=30)
    assert all(ISO_Z.match(stamp) for stamp in timestamps(everything))
    chat = everything["data"][1]
    assert chat["assigned_to"] == {"user_id": admin, "name": chat["assigned_to"]["name"]}
    assert chat["state"] == "HUMAN_ACTIVE" and chat["needs_reply"] is True and chat["unread_count"] == 1
    assert chat["counts"] == {"messages": 1, "from_customer": 1, "from_bot": 0}
    assert chat["last_message"]["sender_type"] == "customer" and chat["last_message"]["preview"] == "hello"

    assert phones(await ok(service, key, "/conversations", state="HUMAN_ACTIVE")) == ["919811100002"]
    assert phones(await ok(service, key, "/conversations", assigned_to=str(admin))) == ["919811100002"]
    assert phones(await ok(service, key, "/conversations", assigned_to=str(agent))) == []
    # Opening a chat reads its messages: it is no longer unread.
    assert phones(await ok(service, key, "/conversations", unread="true")) == ["919811100002", "919811100001"]
    assert phones(await ok(service, key, "/conversations", unread="false")) == ["919811100003"]
    assert phones(await ok(service, key, "/conversations", unread="true", state="HANDOFF_PENDING")) == [
        "919811100001"]
    assert phones(await ok(service, key, "/conversations", q="ravi")) == ["919811100002"]
    assert phones(await ok(service, key, "/conversations", q="+91 98111 00003")) == ["919811100003"]
    assert phones(await ok(service, key, "/conversations", q="100%")) == []  # wildcards are literal
    assert phones(await ok(service, key, "/conversations", needs_reply="true", sla_breached="false")) == phones(
        everything)
    assert phones(await ok(service, key, "/conversations", sla_breached="true")) == []
    # A window that ended before any of it happened.
    assert phones(await ok(service, key, "/conversations", since="2020-01-01", to="2020-02-01")) == []


async def test_unread_counts_only_messages_inside_the_window(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    now = datetime.now(timezone.utc)
    await post_envelope(service, number, messages=[customer_message("wamid.old1", "919811200001", "first", now
                                                                    - timedelta(hours=3))])
    await customer_writes(service, number, "919811200001", "second")
    whole = await ok(service, key, "/conversations")
    assert whole["data"][0]["unread_count"] == 2
    recent = await ok(service, key, "/conversations", since=(now - timedelta(hours=1)).isoformat())
    assert recent["data"][0]["unread_count"] == 1
    assert recent["window"]["from"] == (now - timedelta(hours=1)).isoformat().replace("+00:00", "Z")
    summary = await ok(service, key, "/conversations/unread-summary", since=(now - timedelta(hours=1)).isoformat())
    assert summary["unread_messages"] == 1 and summary["unread_chats"] == 1


async def test_a_walk_returns_every_chat_once_while_new_messages_arrive(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    chats = [f"9198113000{n:02d}" for n in range(1, 9)]
    for phone in chats:
        await customer_writes(service, number, phone, "hello")
    seen: list[str] = []
    page = await ok(service, key, "/conversations", limit="3")
    seen += phones(page)
    assert seen == list(reversed(chats))[:3]
    # Mid-walk: a chat not yet returned, and one already returned, get new messages; a new chat appears.
    await customer_writes(service, number, chats[0], "still there?")
    await customer_writes(service, number, chats[-1], "and another thing")
    await customer_writes(service, number, "919811309999", "new here")
    pages = 1
    while page["next_cursor"]:
        first_window = page["window"]
        page = await ok(service, key, "/conversations", limit="3", cursor=page["next_cursor"])
        assert page["window"] == first_window  # the walk keeps its window
        seen += phones(page)
        pages += 1
    assert sorted(seen) == sorted(chats) and len(seen) == len(chats)
    assert pages == 3
    # A fresh walk sees the new order and the new chat.
    fresh = await ok(service, key, "/conversations", limit="200")
    assert set(phones(fresh)) == {*chats, "919811309999"}


async def test_waiting_longest_and_unanswered_put_the_longest_wait_first(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    now = datetime.now(timezone.utc)
    for n, minutes in ((1, 5), (2, 120), (3, 45)):
        await post_envelope(service, number, messages=[customer_message(
            f"wamid.wait{n}", f"91981140000{n}", "hello", now - timedelta(minutes=minutes))])

    async def all_waiting():
        page = await ok(service, key, "/conversations", sort="waiting_longest")
        return page if len(page["data"]) == 3 else None

    page = await eventually(all_waiting)
    assert phones(page) == ["919811400002", "919811400003", "919811400001"]
    assert page["data"][0]["waiting_seconds"] >= 7200
    walked = []
    cursor = None
    while True:
        params = {"sort": "waiting_longest", "limit": "1", **({"cursor": cursor} if cursor else {})}
        step = await ok(service, key, "/conversations", **params)
        walked += phones(step)
        cursor = step["next_cursor"]
        if cursor is None:
            break
    assert walked == phones(page)

    default = await ok(service, key, "/conversations/unanswered")
    assert default["older_than_seconds"] == 1800
    assert phones(default) == ["919811400002", "919811400003"]
    hour = await ok(service, key, "/conversations/unanswered", older_than="1h", limit="1")
    assert phones(hour) == ["919811400002"] and hour["older_than_seconds"] == 3600 and hour["next_cursor"] is None
    days = await ok(service, key, "/conversations/unanswered", older_than="90d")
    assert days["data"] == [] and days["older_than_seconds"] == 90 * 86400


async def test_unread_summary_counts_per_assignee_and_names_no_phone(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    for phone in ("919811500001", "919811500002", "919811500003"):
        await customer_writes(service, number, phone, "hello")
    await service.client.post("/api/inbox/conversations/919811500001/claim", headers=bearer(key))
    await service.client.post("/api/inbox/conversations/919811500003/open", headers=bearer(key))
    answer = await get(service, key, "/conversations/unread-summary")
    assert answer.status_code == 200
    assert "9198115" not in answer.text
    summary = answer.json()
    assert summary["unread_chats"] == 2 and summary["unread_messages"] == 2 and summary["waiting_chats"] == 3
    assert summary["longest_wait_seconds"] is not None and summary["oldest_waiting_since"] is not None
    assert [group["assigned_to"]["user_id"] for group in summary["by_assignee"]] == [admin]
    mine = summary["by_assignee"][0]
    assert (mine["unread_chats"], mine["unread_messages"], mine["waiting_chats"]) == (1, 1, 1)
    unassigned = summary["unassigned"]
    assert unassigned["assigned_to"] is None
    assert (unassigned["unread_chats"], unassigned["unread_messages"], unassigned["waiting_chats"]) == (1, 1, 2)
    assert set(summary) == {"window", "unread_chats", "unread_messages", "oldest_unread_at", "waiting_chats",
                            "oldest_waiting_since", "longest_wait_seconds", "by_assignee", "unassigned"}


async def test_since_takes_a_date_aliases_and_window_limits(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    day = await ok(service, key, "/conversations", since="2026-01-05", to="2026-02-01")
    assert day["window"] == {"from": "2026-01-05T00:00:00Z", "to": "2026-02-01T00:00:00Z"}
    aliases = await ok(service, key, "/conversations", **{"from": "2026-01-05", "until": "2026-02-01T12:00:00Z"})
    assert aliases["window"] == {"from": "2026-01-05T00:00:00Z", "to": "2026-02-01T12:00:00Z"}
    offset = await ok(service, key, "/replies", since="2026-01-05T10:00:00+05:30", to="2026-01-06")
    assert offset["window"]["from"] == "2026-01-05T04:30:00Z"
    assert (await ok(service, key, "/replies"))["window"]["from"] < (await ok(service, key, "/replies"))["window"]["to"]
    replies_window = (await ok(service, key, "/replies"))["window"]
    assert datetime.fromisoformat(replies_window["to"]) - datetime.fromisoformat(replies_window["from"]) == \
        timedelta(days=7)
    assert (await ok(service, key, "/conversations", since="2025-01-01", to="2026-02-04"))["data"] == []  # 399 days


async def test_every_bad_parameter_is_a_400_with_its_code(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    await customer_writes(service, number, "919811600001", "hello")
    cases = [
        ("/conversations", {"state": "OPEN"}, "invalid_state"),
        ("/conversations", {"assigned_to": "abc"}, "invalid_assigned_to"),
        ("/conversations", {"assigned_to": "-3"}, "invalid_assigned_to"),
        ("/conversations", {"sort": "oldest"}, "invalid_sort"),
        ("/conversations", {"since": "yesterday"}, "invalid_since"),
        ("/conversations", {"to": "2026-13-45"}, "invalid_since"),
        ("/conversations", {"since": "2026-02-01", "to": "2026-01-01"}, "since_after_to"),
        ("/conversations", {"since": "2024-01-01", "to": "2026-01-01"}, "window_too_large"),
        ("/conversations", {"limit": "0"}, "invalid_limit"),
        ("/conversations", {"limit": "201"}, "invalid_limit"),
        ("/conversations", {"limit": "ten"}, "invalid_limit"),
        ("/conversations", {"unread": "maybe"}, "invalid_unread"),
        ("/conversations", {"cursor": "not-a-cursor"}, "invalid_cursor"),
        ("/conversations", {"cursor": base64.urlsafe_b64encode(b'["views","x",1]').decode()}, "invalid_cursor"),
        ("/conversations", {"q": "x" * 201}, "invalid_q"),
        ("/conversations/unanswered", {"older_than": "30"}, "invalid_older_than"),
        ("/conversations/unanswered", {"older_than": "91d"}, "invalid_older_than"),
        ("/conversations/unanswered", {"older_than": "2w"}, "invalid_older_than"),
        ("/conversations/unread-summary", {"since": "2024-01-01", "to": "2026-01-01"}, "window_too_large"),
        ("/conversations/919811600001/messages", {"order": "newest"}, "invalid_order"),
        ("/conversations/919811600001/messages", {"expand": "everything"}, "invalid_expand"),
        ("/conversations/919811600001/messages", {"cursor": "%%%"}, "invalid_cursor"),
        ("/conversations/919811600001/views", {"limit": "500"}, "invalid_limit"),
        ("/replies", {"agent_id": "x"}, "invalid_agent_id"),
        ("/replies", {"sender_type": "customer"}, "invalid_sender_type"),
        ("/replies", {"since": "2026-01-01", "to": "2026-04-15"}, "window_too_large"),
        ("/replies", {"phone": "12ab"}, "invalid_phone"),
        ("/messages", {}, "invalid_status"),
        ("/messages", {"status": "queued"}, "invalid_status"),
        ("/messages", {"status": "failed", "since": "2026-01-01", "to": "2026-06-01"}, "window_too_large"),
    ]
    for path, params, code in cases:
        answer = await get(service, key, path, **params)
        assert answer.status_code == 400, (path, params, answer.text)
        body = answer.json()
        assert body["error"] == code, (path, params, body)
        assert isinstance(body["message"], str) and body["message"], body
    # A cursor from one list is no cursor for another.
    page = await ok(service, key, "/conversations", limit="1")
    await customer_writes(service, number, "919811600002", "hello")
    page = await ok(service, key, "/conversations", limit="1")
    other = await get(service, key, "/replies", cursor=page["next_cursor"])
    assert other.status_code == 400 and other.json()["error"] == "invalid_cursor"
    tampered = page["next_cursor"][:-4] + "AAAA"
    answer = await get(service, key, "/conversations", cursor=tampered)
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_cursor"


async def test_a_member_limited_to_assigned_chats_sees_only_those(service):
    workspace_id, number, admin, admin_key = await scale_workspace(service.db)
    agent = await builders.member(service.db, workspace_id, "agent", permissions=["inbox", "contacts"],
                                  assigned_only=True)
    agent_key = (await builders.key(service.db, workspace_id, agent, ("inbox", "contacts"))).key
    scoped = (await builders.key(service.db, workspace_id, admin, ("inbox", "inbox_assigned_only"))).key
    for phone in ("919811700001", "919811700002"):
        await customer_writes(service, number, phone, "hello")
    answer = await service.client.post("/api/inbox/conversations/919811700001/transfer", headers=bearer(admin_key),
                                       json={"to_user_id": agent})
    assert answer.status_code == 409  # not claimed yet: claim first
    await service.client.post("/api/inbox/conversations/919811700001/claim", headers=bearer(admin_key))
    moved = await service.client.post("/api/inbox/conversations/919811700001/transfer", headers=bearer(admin_key),
                                      json={"to_user_id": agent})
    assert moved.status_code == 200, moved.text
    assert phones(await ok(service, agent_key, "/conversations")) == ["919811700001"]
    assert phones(await ok(service, scoped, "/conversations")) == []
    assert phones(await ok(service, admin_key, "/conversations")) == ["919811700002", "919811700001"]
    summary = await ok(service, agent_key, "/conversations/unread-summary")
    assert summary["unread_chats"] == 1 and summary["unassigned"]["unread_chats"] == 0
    for path in ("", "/messages", "/receipts", "/seen-by", "/views", "/replies", "/assignment-history"):
        hidden = await get(service, agent_key, f"/conversations/919811700002{path}")
        assert hidden.status_code == 404 and hidden.json()["error"] == "not_found", (path, hidden.text)
        shown = await get(service, agent_key, f"/conversations/919811700001{path}")
        assert shown.status_code == 200, (path, shown.text)
    missing = await get(service, admin_key, "/conversations/919811799999")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    nonsense = await get(service, admin_key, "/conversations/not-a-phone/messages")
    assert nonsense.status_code == 404


async def test_plans_and_scopes_decide_who_reads(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    await customer_writes(service, number, "919811800001", "hello")
    contacts_reader = (await builders.key(service.db, workspace_id, admin, ("contacts:read",))).key
    analytics = (await builders.key(service.db, workspace_id, admin, ("analytics:read",))).key
    assert (await get(service, contacts_reader, "/conversations")).status_code == 200
    denied = await get(service, contacts_reader, "/conversations/919811800001/seen-by")
    assert denied.status_code == 403 and denied.json()["error"] == "scope_denied"
    assert (await get(service, analytics, "/conversations/unread-summary")).status_code == 200
    assert (await get(service, analytics, "/conversations")).status_code == 403
    growth = await builders.plaintext_key(service.db, plan="growth")
    refused = await get(service, growth.key, "/conversations")
    assert refused.status_code == 403 and refused.json()["error"] == "api_access_not_enabled"
