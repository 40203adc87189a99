"""Team actions on a chat over real sockets: the state machine's legal and illegal transitions, views and
read marks, assignment events, and the assigned-only rule."""

from __future__ import annotations

from collections import Counter

from tests import builders
from tests.e2e.chat_helpers import chat, customer_writes, outbox_events, scale_workspace
from tests.e2e.conftest import bearer
from tests.waiting import eventually

PHONE = "919833333331"


async def act(service, key: str, action: str, body: dict | None = None, phone: str = PHONE):
    return await service.client.post(f"/api/inbox/conversations/{phone}/{action}", headers=bearer(key), json=body)


async def test_illegal_transitions_are_409_with_the_state_and_change_nothing(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    await customer_writes(service, number, PHONE, "hello")  # no bot answer stored: the bot hands off

    async def handed_off():
        detail = await chat(service, key, PHONE)
        return detail if detail["state"] == "HANDOFF_PENDING" else None

    before = await eventually(handed_off)
    assert before["state"] == "HANDOFF_PENDING" and before["handover_reason"] == "bot_has_no_answer"
    for action, body in (("release", None), ("transfer", {"to_user_id": admin})):
        answer = await act(service, key, action, body)
        assert answer.status_code == 409, answer.text
        assert answer.json()["error"] == "invalid_transition" and answer.json()["state"] == "HANDOFF_PENDING"
    assert (await chat(service, key, PHONE))["version"] == before["version"]
    resolved = await act(service, key, "resolve")
    assert resolved.status_code == 200 and resolved.json()["state"] == "AI_ONLY"
    again = await act(service, key, "resolve")
    assert again.status_code == 409 and again.json()["state"] == "AI_ONLY"


async def test_claim_release_transfer_and_their_events(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    agent = await builders.member(service.db, workspace_id, "agent")
    await customer_writes(service, number, PHONE, "hello")
    claimed = await act(service, key, "claim")
    assert claimed.json()["state"] == "HUMAN_ACTIVE" and claimed.json()["claimed_by"]["user_id"] == admin
    same = await act(service, key, "claim")  # claiming one's own chat again changes nothing
    assert same.status_code == 200 and same.json()["version"] == claimed.json()["version"]
    moved = await act(service, key, "transfer", {"to_user_id": agent, "reason": "billing question"})
    assert moved.status_code == 200 and moved.json()["assigned_to"]["user_id"] == agent
    taken = await act(service, key, "claim")
    assert taken.status_code == 409  # someone else holds it: transfer or release first
    released = await act(service, key, "release", {"reason": "end of shift"})
    assert released.json()["state"] == "HANDOFF_PENDING" and released.json()["assigned_to"] is None
    nobody = await act(service, key, "transfer", {"to_user_id": 99999})
    assert nobody.status_code == 409
    history = await service.db.fetch("SELECT event, from_member, to_member, by_member, reason FROM assignment_events"
                                     " ORDER BY id")
    assert [(r["event"], r["from_member"], r["to_member"], r["reason"]) for r in history] == [
        ("claimed", None, admin, None), ("transferred", admin, agent, "billing question"),
        ("released", agent, None, "end of shift")]
    assert Counter(await outbox_events(service.db, workspace_id))["conversation_assigned"] == 3


async def test_transfer_to_someone_who_is_not_an_active_member_is_a_400(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    await customer_writes(service, number, PHONE, "hello")
    await act(service, key, "claim")
    answer = await act(service, key, "transfer", {"to_user_id": 424242})
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_member"
    bad = await act(service, key, "transfer", {"to": "someone"})
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_body"


async def test_open_records_a_view_and_clears_unread_but_a_key_marking_read_is_no_view(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    await customer_writes(service, number, PHONE, "one")
    await customer_writes(service, number, PHONE, "two")
    assert (await chat(service, key, PHONE))["unread_count"] == 2
    opened = await act(service, key, "open")
    assert opened.json()["unread_count"] == 0
    views = await service.db.fetch("SELECT member_id, marked_read FROM conversation_views")
    assert [(v["member_id"], v["marked_read"]) for v in views] == [(admin, 2)]
    again = await act(service, key, "open")  # within a minute, nothing new to read: counts once
    assert again.status_code == 200
    assert await service.db.fetchval("SELECT count(*) FROM conversation_views") == 1
    await customer_writes(service, number, PHONE, "three")
    read = await act(service, key, "read")
    assert read.json()["unread_count"] == 0
    assert await service.db.fetchval("SELECT count(*) FROM conversation_views") == 1
    assert Counter(await outbox_events(service.db, workspace_id))["conversation_seen"] == 1


async def test_a_reply_claims_an_unclaimed_chat_but_not_one_held_by_another_member(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    agent = await builders.member(service.db, workspace_id, "agent")
    agent_key = (await builders.key(service.db, workspace_id, agent, ("inbox",))).key
    await customer_writes(service, number, PHONE, "hello")
    replied = await act(service, agent_key, "reply", {"message": "I can help"})
    assert replied.status_code == 200, replied.text
    assert replied.json()["conversation"]["assigned_to"]["user_id"] == agent
    message = await service.db.fetchrow("SELECT sender_type, actor_id FROM messages WHERE direction = 'outbound'")
    assert message["sender_type"] == "agent" and message["actor_id"] == agent
    blocked = await act(service, key, "reply", {"message": "me too"})
    assert blocked.status_code == 409 and blocked.json()["error"] == "invalid_transition"


async def test_assigned_only_keys_see_and_act_only_on_their_creators_chats(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    agent = await builders.member(service.db, workspace_id, "agent")
    limited = (await builders.key(service.db, workspace_id, agent, ("inbox", "inbox_assigned_only"))).key
    await customer_writes(service, number, PHONE, "hello")
    for action in ("claim", "open", "read", "resolve"):
        hidden = await act(service, limited, action)
        assert hidden.status_code == 404 and hidden.json()["error"] == "not_found", action
    seen = await service.client.get(f"/api/inbox/conversations/{PHONE}", headers=bearer(limited))
    assert seen.status_code == 404
    await act(service, key, "claim")
    await act(service, key, "transfer", {"to_user_id": agent})
    visible = await service.client.get(f"/api/inbox/conversations/{PHONE}", headers=bearer(limited))
    assert visible.status_code == 200
    assert (await act(service, limited, "resolve")).status_code == 200


async def test_unknown_chat_is_404_and_scopes_are_enforced(service):
    workspace_id, _, _, key = await scale_workspace(service.db)
    missing = await act(service, key, "claim", phone="919800000099")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    member = await builders.member(service.db, workspace_id, "admin")
    contacts_only = (await builders.key(service.db, workspace_id, member, ("contacts",))).key
    denied = await act(service, contacts_only, "claim")
    assert denied.status_code == 403 and denied.json()["error"] == "scope_denied"
    reader = (await builders.key(service.db, workspace_id, member, ("inbox:read",))).key
    assert (await act(service, reader, "claim")).json()["error"] == "read_only_key"
    growth = await builders.plaintext_key(service.db, plan="growth")
    assert (await act(service, growth.key, "claim")).json()["error"] == "api_access_not_enabled"


async def test_the_sla_deadline_follows_the_wait_for_a_person_and_breaches_past_it(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    await service.db.execute("UPDATE workspaces SET sla_seconds = 1 WHERE id = $1", workspace_id)
    await customer_writes(service, number, PHONE, "I need help")  # no bot answer: handed off

    async def breached():
        detail = await chat(service, key, PHONE)
        return detail if detail["sla_breached"] else None

    detail = await eventually(breached, timeout=5)
    assert detail["state"] == "HANDOFF_PENDING" and detail["sla_deadline_at"] is not None
    assert detail["waiting_seconds"] >= 1
    await act(service, key, "reply", {"message": "Sorry for the wait"})

    async def answered():
        detail = await chat(service, key, PHONE)
        return detail if not detail["sla_breached"] and detail["sla_deadline_at"] is None else None

    await eventually(answered)


async def test_bad_reasons_and_member_ids_are_400_and_leave_the_chat_working(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    await customer_writes(service, number, PHONE, "hello")
    await act(service, key, "claim")
    for _ in range(8):  # more than the actor's restart intensity, had these reached it
        assert (await act(service, key, "release", {"reason": "a\u0000b"})).status_code == 400
        assert (await act(service, key, "transfer", {"to_user_id": 2**63})).status_code == 400
    assert (await act(service, key, "release", {"reason": "ok"})).status_code == 200


async def test_a_reply_needs_an_existing_chat(service):
    _, _, _, key = await scale_workspace(service.db)
    answer = await act(service, key, "reply", {"type": "template", "template": {"name": "t"}}, phone="919800000077")
    assert answer.status_code == 404 and answer.json()["error"] == "not_found"
    assert await service.db.fetchval("SELECT count(*) FROM conversations") == 0
