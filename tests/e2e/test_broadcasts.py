"""Broadcasts over real sockets, sent through the built-in platform simulator over HTTP: the audience (phones,
a contact filter, duplicates, opted-out contacts skipped), per-recipient parameters, platform errors recorded per
recipient, progress counts and the recipients list, approval, scheduling, cancelling, credits pausing a broadcast,
Idempotency-Key, one-to-one replies going first on a busy number, and every refusal (scope, plan, read-only, bad
input changing nothing)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import httpx
import pytest
import trio

from inbox_actors.domain.credit_prices import TemplatePrices
from inbox_actors.platform import templates
from tests import builders
from tests.e2e.chat_helpers import customer_writes, scale_workspace
from tests.e2e.conftest import bearer, with_settings
from tests.waiting import eventually

BULK_SEND, BROADCASTS = "/api/bulk-send", "/api/broadcasts"
PROMO = {"name": "promo", "language": "en", "parameters": ["friend"]}


async def broadcasting_workspace(service) -> tuple[int, int, str]:
    """(workspace id, admin member id, the admin's full-access key), with templates promo (MARKETING, one
    parameter) and draft (not approved)."""
    workspace_id, _, admin, key = await scale_workspace(service.db)
    await templates.add_template(service.db, workspace_id=workspace_id, name="promo", language="en",
                                 body="Hello {{1}}, our sale starts today!", category_name="MARKETING")
    await templates.add_template(service.db, workspace_id=workspace_id, name="draft", language="en",
                                 body="Not yet", status_name="PENDING")
    return workspace_id, admin, key


async def add_contact(service, key: str, phone: str, **fields) -> None:
    answer = await service.client.post("/api/contacts", headers=bearer(key),
                                       json={"phone": phone, "name": f"Contact {phone[-3:]}", **fields})
    assert answer.status_code in (200, 201), answer.text


async def finished(service, key: str, broadcast_id: int, status: str = "completed", *, settled: bool = True,
                   timeout: float = 20.0) -> dict:
    """The broadcast once it reached `status` (and, with `settled`, nothing is in flight and every accepted
    message has been delivered or failed since)."""
    async def check():
        answer = await service.client.get(f"{BROADCASTS}/{broadcast_id}", headers=bearer(key))
        assert answer.status_code == 200, answer.text
        view = answer.json()
        counts = view["counts"]
        if view["status"] != status:
            return None
        if settled and (counts["in_flight"] or counts["delivered"] != counts["sent"]):
            return None
        return view
    return await eventually(check, timeout=timeout, interval=0.1)


async def test_a_broadcast_reaches_each_recipient_once_with_their_parameters_and_counts_its_progress(service):
    workspace_id, admin, key = await broadcasting_workspace(service)
    for phone in ("919700000001", "919700000002", "919700000003"):
        await add_contact(service, key, phone, tags=["vip"])
    await add_contact(service, key, "919700000004", tags=["vip"])
    opted = await service.client.post("/api/contacts/919700000004/opt-out", headers=bearer(key))
    assert opted.status_code == 200, opted.text
    await add_contact(service, key, "919700000005", tags=["other"])

    answer = await service.client.post(BULK_SEND, headers=bearer(key), json={
        "name": "November sale", "template": PROMO,
        "recipients": ["+91 97000 00010", {"phone": "919700000011", "parameters": ["Asha"]},
                       "919700000001",          # also matched by the filter: sent once
                       "919700000010",          # listed twice
                       "999700000012",          # the simulator refuses it (131026)
                       "998700000013"],         # accepted, then fails (131026)
        "filter": {"tags": ["vip"]}})
    assert answer.status_code == 202, answer.text
    created = answer.json()
    assert (created["status"], created["name"], created["template"]) == (
        "sending", "November sale", {"name": "promo", "language": "en", "category": "MARKETING",
                                     "parameters": ["friend"]})
    assert created["audience"] == {"phones": 6, "filter": {"tags": ["vip"], "status": None}, "duplicates": 2}
    assert created["counts"]["recipients"] == 8 and created["counts"]["skipped"] == 1
    assert created["approval"]["required"] is False and created["created_by"] == admin

    done = await finished(service, key, created["id"])
    counts = done["counts"]
    assert (counts["recipients"], counts["sent"], counts["failed"], counts["skipped"], counts["queued"],
            counts["cancelled"]) == (8, 5, 2, 1, 0, 0), counts
    # A number ending in 0 has read receipts off in the simulator; the reads come after the deliveries.
    async def receipts() -> tuple[int, int] | None:
        counts = (await service.client.get(f"{BROADCASTS}/{created['id']}", headers=bearer(key))).json()["counts"]
        return (counts["delivered"], counts["read"]) if counts["read"] == 4 else None

    assert await eventually(receipts) == (5, 4)
    assert done["finished_at"] is not None and done["rate"]["window_seconds"] == 60

    # One message per recipient: every message of the broadcast is its recipient's one claimed message.
    assert await service.db.fetchval("SELECT count(*) FROM messages WHERE broadcast_id = $1", created["id"]) == 7
    sent = await service.db.fetch(
        "SELECT r.phone, m.template_parameters, m.sender_type, m.sender_label FROM broadcast_recipients r"
        " JOIN messages m ON m.id = r.message_id WHERE r.broadcast_id = $1", created["id"])
    assert len(sent) == 7 and {row["sender_type"] for row in sent} == {"system"}
    assert {row["sender_label"] for row in sent} == {"November sale"}
    parameters = {row["phone"]: row["template_parameters"] for row in sent}
    assert parameters["919700000011"] == ["Asha"] and parameters["919700000010"] == ["friend"]

    failed = await service.client.get(f"{BROADCASTS}/{created['id']}/recipients?outcome=failed",
                                      headers=bearer(key))
    assert failed.status_code == 200, failed.text
    assert [(r["phone"], r["error_code"]) for r in failed.json()["data"]] == [
        ("999700000012", 131026), ("998700000013", 131026)]
    skipped = (await service.client.get(f"{BROADCASTS}/{created['id']}/recipients?outcome=skipped",
                                        headers=bearer(key))).json()["data"]
    assert [(r["phone"], r["skip_reason"]) for r in skipped] == [("919700000004", "opted_out")]
    everyone = (await service.client.get(f"{BROADCASTS}/{created['id']}/recipients?limit=3",
                                         headers=bearer(key))).json()
    assert [r["position"] for r in everyone["data"]] == [1, 2, 3] and everyone["next_cursor"]
    rest = (await service.client.get(f"{BROADCASTS}/{created['id']}/recipients",
                                     params={"cursor": everyone["next_cursor"]}, headers=bearer(key))).json()
    assert [r["position"] for r in rest["data"]] == [4, 5, 6, 7, 8] and rest["next_cursor"] is None

    listed = (await service.client.get(BROADCASTS, headers=bearer(key))).json()
    assert [(b["id"], b["status"], b["recipients"]) for b in listed["data"]] == [(created["id"], "completed", 8)]
    audit = (await service.client.get("/api/team/audit-log?action=broadcast.created", headers=bearer(key))).json()
    assert [entry["subject"] for entry in audit["data"]] == [f"broadcast:{created['id']}"]


async def test_a_broadcast_without_campaign_approve_waits_for_approval(service):
    workspace_id, admin, admin_key = await broadcasting_workspace(service)
    marketer = await builders.member(service.db, workspace_id, "agent", permissions=["campaigns", "contacts"])
    marketer_key = (await builders.key(service.db, workspace_id, marketer, ("campaigns",))).key
    body = {"template": PROMO, "recipients": ["919700000101", "919700000102"]}

    pending = await service.client.post(BULK_SEND, headers=bearer(marketer_key), json=body)
    assert pending.status_code == 202, pending.text
    assert pending.json()["status"] == "pending_approval" and pending.json()["approval"]["required"] is True
    refused = await service.client.post(f"{BROADCASTS}/{pending.json()['id']}/approve",
                                        headers=bearer(marketer_key))
    assert refused.status_code == 403 and refused.json()["error"] == "scope_denied", refused.text
    # Nothing goes out while it waits for approval. An absence has no event to wait for: this sleep gives a
    # broadcast started by mistake the time to send (a send through the simulator takes milliseconds).
    await trio.sleep(0.3)
    assert await service.db.fetchval("SELECT count(*) FROM messages WHERE workspace_id = $1", workspace_id) == 0

    approved = await service.client.post(f"{BROADCASTS}/{pending.json()['id']}/approve", headers=bearer(admin_key))
    assert approved.status_code == 200, approved.text
    assert approved.json()["status"] in ("sending", "completed")
    assert approved.json()["approval"]["decided_by"] == admin
    done = await finished(service, admin_key, pending.json()["id"])
    assert done["counts"]["sent"] == 2

    other = await service.client.post(BULK_SEND, headers=bearer(marketer_key), json=body)
    rejected = await service.client.post(f"{BROADCASTS}/{other.json()['id']}/reject", headers=bearer(admin_key),
                                         json={"reason": "Too many promos this week"})
    assert rejected.status_code == 200, rejected.text
    view = rejected.json()
    assert (view["status"], view["approval"]["rejection_reason"], view["counts"]["cancelled"]) == (
        "rejected", "Too many promos this week", 2)
    late = await service.client.post(f"{BROADCASTS}/{other.json()['id']}/approve", headers=bearer(admin_key))
    assert late.status_code == 409 and late.json() == {
        "error": "invalid_transition", "message": "This broadcast is rejected and cannot be approved; only a pending "
                                                  "approval broadcast can."}
    withdrawn = await service.client.post(BULK_SEND, headers=bearer(marketer_key), json=body)
    cancelled = await service.client.post(f"{BROADCASTS}/{withdrawn.json()['id']}/cancel", headers=bearer(marketer_key))
    assert (cancelled.json()["status"], cancelled.json()["approval"]["required"]) == ("cancelled", True)
    actions = [e["action"] for e in (await service.client.get("/api/team/audit-log",
                                                              headers=bearer(admin_key))).json()["data"]]
    assert actions.count("broadcast.approved") == 1 and actions.count("broadcast.rejected") == 1


async def test_scheduled_broadcasts_send_at_their_time_and_a_cancelled_one_never_sends(service):
    workspace_id, _, key = await broadcasting_workspace(service)
    soon = datetime.now(timezone.utc) + timedelta(seconds=1.5)
    scheduled = await service.client.post(BULK_SEND, headers=bearer(key), json={
        "template": PROMO, "recipients": ["919700000201"], "scheduled_at": soon.isoformat()})
    assert scheduled.status_code == 202, scheduled.text
    assert scheduled.json()["status"] == "scheduled"
    assert await service.db.fetchval("SELECT count(*) FROM messages WHERE workspace_id = $1", workspace_id) == 0
    done = await finished(service, key, scheduled.json()["id"])
    assert done["counts"]["sent"] == 1
    assert datetime.fromisoformat(done["started_at"]) >= soon - timedelta(milliseconds=50)

    later = await service.client.post(BULK_SEND, headers=bearer(key), json={
        "template": PROMO, "recipients": ["919700000202", "919700000203"],
        "scheduled_at": (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()})
    cancelled = await service.client.post(f"{BROADCASTS}/{later.json()['id']}/cancel", headers=bearer(key))
    assert cancelled.status_code == 200, cancelled.text
    assert (cancelled.json()["status"], cancelled.json()["counts"]["cancelled"]) == ("cancelled", 2)
    again = await service.client.post(f"{BROADCASTS}/{later.json()['id']}/cancel", headers=bearer(key))
    assert again.status_code == 409 and again.json()["error"] == "invalid_transition"
    assert await service.db.fetchval("SELECT count(*) FROM messages WHERE recipient IN ('919700000202',"
                                     " '919700000203') OR broadcast_id = $1", later.json()["id"]) == 0


@pytest.mark.parametrize("body, code", [
    ({"template": {"name": "nope", "language": "en"}, "recipients": ["919700000301"]}, "template_not_found"),
    ({"template": {"name": "draft", "language": "en"}, "recipients": ["919700000301"]}, "template_not_approved"),
    ({"template": {"name": "promo", "language": "en"}, "recipients": ["919700000301"]}, "parameter_count_mismatch"),
    ({"template": PROMO, "recipients": [{"phone": "919700000301", "parameters": []}]}, "parameter_count_mismatch"),
    ({"template": PROMO, "recipients": ["919700000301", "12-34"]}, "invalid_recipient"),
    ({"template": PROMO, "recipients": []}, "empty_audience"),
    ({"template": PROMO, "filter": {"tags": ["nobody-has-this"]}}, "empty_audience"),
    ({"template": PROMO, "recipients": ["919700000301"], "scheduled_at": "2026-01-01T10:00:00"}, "invalid_schedule"),
    ({"template": PROMO, "recipients": ["919700000301"], "scheduled_at": "2020-01-01T10:00:00Z"}, "invalid_schedule"),
    ({"template": PROMO, "recipients": ["919700000301"], "scheduled_at": "2099-01-01T10:00:00Z"}, "invalid_schedule"),
    ({"template": PROMO, "recipients": ["919700000301"], "colour": "red"}, "invalid_body"),
    ({"recipients": ["919700000301"]}, "invalid_body"),
])
async def test_bad_input_is_refused_and_changes_nothing(service, body, code):
    workspace_id, _, key = await broadcasting_workspace(service)
    answer = await service.client.post(BULK_SEND, headers=bearer(key), json=body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == code and answer.json()["message"].endswith("."), answer.json()
    assert await service.db.fetchval("SELECT count(*) FROM broadcasts WHERE workspace_id = $1", workspace_id) == 0


async def test_refusals_by_plan_scope_and_read_only_and_growth_may_broadcast(service):
    body = {"template": PROMO, "recipients": ["919700000401"]}
    starter = (await builders.plaintext_key(service.db, plan="starter")).key
    assert (await service.client.post(BULK_SEND, headers=bearer(starter), json=body)).json()["error"] == \
        "api_not_in_plan"
    reader = (await builders.plaintext_key(service.db, scopes=("campaigns:read",))).key
    assert (await service.client.post(BULK_SEND, headers=bearer(reader), json=body)).json()["error"] == \
        "read_only_key"
    assert (await service.client.get(BROADCASTS, headers=bearer(reader))).status_code == 200
    inbox_only = (await builders.plaintext_key(service.db, scopes=("inbox",))).key
    denied = await service.client.post(BULK_SEND, headers=bearer(inbox_only), json=body)
    assert denied.status_code == 403 and denied.json()["error"] == "scope_denied"
    assert (await service.client.get(f"{BROADCASTS}/1", headers=bearer(inbox_only))).status_code == 403

    growth_workspace = await builders.workspace(service.db, "growth")
    growth_admin = await builders.member(service.db, growth_workspace)
    growth = (await builders.key(service.db, growth_workspace, growth_admin)).key
    await templates.add_template(service.db, workspace_id=growth_workspace, name="promo", language="en",
                                 body="Hello {{1}}!")
    answer = await service.client.post(BULK_SEND, headers=bearer(growth), json=body)
    assert answer.status_code == 202, answer.text
    assert "X-RateLimit-Limit" not in answer.headers, "bulk-send is not held to the default per-key limit"
    # Another workspace's broadcast is no broadcast of this one.
    _, _, other_key = await broadcasting_workspace(service)
    assert (await service.client.get(f"{BROADCASTS}/{answer.json()['id']}", headers=bearer(other_key))
            ).status_code == 404
    assert (await service.client.post(f"{BROADCASTS}/{answer.json()['id']}/cancel", headers=bearer(other_key))
            ).json()["error"] == "broadcast_not_found"


async def test_idempotency_key_makes_one_broadcast(service):
    workspace_id, _, key = await broadcasting_workspace(service)
    body = {"template": PROMO, "recipients": ["919700000501", "919700000502"]}
    headers = {**bearer(key), "Idempotency-Key": "campaign-7"}
    answers = []

    async def post():
        answers.append(await service.client.post(BULK_SEND, headers=headers, json=body))

    async with trio.open_nursery() as nursery:
        for _ in range(5):
            nursery.start_soon(post)
    assert {a.status_code for a in answers} == {202}
    assert len({a.json()["id"] for a in answers}) == 1
    assert sum(a.headers.get("Idempotent-Replayed") == "true" for a in answers) == 4
    other = await service.client.post(BULK_SEND, headers=headers, json={**body, "recipients": ["919700000503"]})
    assert other.status_code == 422 and other.json()["error"] == "idempotency_key_reused"
    await finished(service, key, answers[0].json()["id"])
    assert await service.db.fetchval("SELECT count(*) FROM messages WHERE workspace_id = $1", workspace_id) == 2


class TestCredits:
    @pytest.fixture
    def service_settings(self, service_settings):
        return with_settings(service_settings, template_prices=TemplatePrices(marketing=5, utility=1))

    async def test_a_broadcast_pauses_when_credits_run_short_and_resumes_after_a_top_up(self, service):
        workspace_id, _, key = await broadcasting_workspace(service)
        await service.client.post("/api/credits/top-up", headers=bearer(key), json={"amount": 10})
        created = await service.client.post(BULK_SEND, headers=bearer(key), json={
            "template": PROMO, "recipients": [f"91970000060{n}" for n in range(4)]})
        paused = await finished(service, key, created.json()["id"], "paused")
        assert paused["paused_reason"] == "insufficient_credits"
        assert (paused["counts"]["sent"], paused["counts"]["queued"]) == (2, 2)
        await service.client.post("/api/credits/top-up", headers=bearer(key), json={"amount": 10})
        resumed = await service.client.post(f"{BROADCASTS}/{created.json()['id']}/resume", headers=bearer(key))
        assert resumed.status_code == 200, resumed.text
        done = await finished(service, key, created.json()["id"])
        assert done["counts"]["sent"] == 4
        ledger = await service.db.fetch("SELECT delta, broadcast_id FROM credit_ledger WHERE workspace_id = $1"
                                        " AND reason = 'template_send'", workspace_id)
        assert [(row["delta"], row["broadcast_id"]) for row in ledger] == [(-5, created.json()["id"])] * 4


class TestBusyNumber:
    @pytest.fixture
    def service_settings(self, service_settings):
        return with_settings(service_settings, platform_sends_per_second=10)

    async def test_a_reply_goes_out_while_a_broadcast_keeps_the_number_busy(self, service):
        """At 10 sends a second a broadcast of 60 takes several seconds; a one-to-one send in the middle is not
        queued behind it (nor refused as saturated)."""
        workspace_id, _, key = await broadcasting_workspace(service)
        created = await service.client.post(BULK_SEND, headers=bearer(key), json={
            "template": PROMO, "recipients": [f"9197000007{n:02}" for n in range(60)]})

        async def under_way():
            view = (await service.client.get(f"{BROADCASTS}/{created.json()['id']}", headers=bearer(key))).json()
            return view["counts"]["sent"] >= 5  # half a second's worth: the number is busy with the broadcast
        await eventually(under_way, interval=0.05)
        for n in range(2):
            reply = await service.client.post("/api/send-message", headers=bearer(key), json={
                "to": f"91970000079{n}", "type": "template", "template": PROMO})
            assert reply.status_code == 200, reply.text
        view = (await service.client.get(f"{BROADCASTS}/{created.json()['id']}", headers=bearer(key))).json()
        assert view["status"] == "sending" and view["counts"]["queued"] > 0
        pause = await service.client.post(f"{BROADCASTS}/{created.json()['id']}/pause", headers=bearer(key))
        assert pause.status_code == 200 and pause.json()["status"] == "paused"
        await service.client.post(f"{BROADCASTS}/{created.json()['id']}/cancel", headers=bearer(key))


async def test_a_broadcast_message_answers_nobody(service):
    """A customer waiting for an answer still waits after a campaign's message reached them."""
    workspace_id, _, key = await broadcasting_workspace(service)
    phone_number_id = await service.db.fetchval("SELECT phone_number_id FROM workspaces WHERE id = $1", workspace_id)
    await customer_writes(service, phone_number_id, "919700000801", "Is my order on its way?")
    created = await service.client.post(BULK_SEND, headers=bearer(key), json={
        "template": PROMO, "recipients": ["919700000801"]})
    await finished(service, key, created.json()["id"])
    chat = await service.db.fetchrow("SELECT waiting_since, waiting_for_person_since FROM conversations"
                                     " WHERE workspace_id = $1 AND phone = '919700000801'", workspace_id)
    assert chat["waiting_since"] is not None
    message = await service.db.fetchrow("SELECT answers_message_id, waited_from FROM messages WHERE broadcast_id = $1",
                                        created.json()["id"])
    assert (message["answers_message_id"], message["waited_from"]) == (None, None)


class TestThroughputRefusals:
    @pytest.fixture
    def service_settings(self, service_settings):
        # The service paces far above what the platform takes: the platform answers 130429.
        return with_settings(service_settings, platform_sends_per_second=1000, simulator_throughput=3)

    async def test_a_recipient_refused_for_throughput_is_sent_later_once(self, service, monkeypatch):
        from inbox_actors.broadcasts import broadcast

        monkeypatch.setattr(broadcast, "RETRY_DELAYS", (timedelta(seconds=0.4),) * 3)
        monkeypatch.setattr(broadcast, "MAX_ATTEMPTS", 30)
        workspace_id, _, key = await broadcasting_workspace(service)
        phones = [f"91970000090{n}" for n in range(8)]
        created = await service.client.post(BULK_SEND, headers=bearer(key), json={"template": PROMO,
                                                                                   "recipients": phones})
        done = await finished(service, key, created.json()["id"], timeout=30)
        assert (done["counts"]["sent"], done["counts"]["failed"]) == (8, 0), done["counts"]
        refused = await service.db.fetchval("SELECT count(*) FROM messages WHERE broadcast_id = $1 AND error_code ="
                                            " 130429", created.json()["id"])
        assert refused > 0, "the platform refused some sends for throughput"
        recipients = (await service.client.get(f"{BROADCASTS}/{created.json()['id']}/recipients",
                                               headers=bearer(key))).json()["data"]
        assert sum(r["attempts"] for r in recipients) == 8 + refused
        accepted = await service.db.fetch("SELECT recipient FROM broadcast_recipients r JOIN messages m ON"
                                          " m.id = r.message_id WHERE r.broadcast_id = $1 AND m.status <> 'failed'",
                                          created.json()["id"])
        assert len(accepted) == 8


async def test_dashboard_sessions_broadcast_and_approve_with_their_permissions(service):
    from inbox_actors.access.sessions import create_session

    workspace_id, _, key = await broadcasting_workspace(service)
    marketer = await builders.member(service.db, workspace_id, "agent", permissions=["campaigns"])
    marketer_session, _ = await create_session(service.db, member_id=marketer, hours=1)
    admin = await builders.member(service.db, workspace_id, "admin")
    admin_session, _ = await create_session(service.db, member_id=admin, hours=1)

    pending = await service.client.post(BULK_SEND, headers=bearer(marketer_session), json={
        "template": PROMO, "recipients": ["919700001001"]})
    assert pending.status_code == 202 and pending.json()["status"] == "pending_approval", pending.text
    refused = await service.client.post(f"{BROADCASTS}/{pending.json()['id']}/approve",
                                        headers=bearer(marketer_session))
    assert refused.status_code == 403 and refused.json()["error"] == "permission_denied", refused.text
    approved = await service.client.post(f"{BROADCASTS}/{pending.json()['id']}/approve",
                                         headers=bearer(admin_session))
    assert approved.status_code == 200 and approved.json()["approval"]["decided_by"] == admin, approved.text
    direct = await service.client.post(BULK_SEND, headers=bearer(admin_session), json={
        "template": PROMO, "recipients": ["919700001002"]})
    assert direct.status_code == 202 and direct.json()["status"] == "sending", direct.text
    await finished(service, key, direct.json()["id"])


async def test_a_limit_set_on_the_key_counts_bulk_send(service):
    workspace_id, admin, _ = await broadcasting_workspace(service)
    limited = (await builders.key(service.db, workspace_id, admin, rate_limit_per_minute=10)).key
    answers = [await service.client.post(BULK_SEND, headers=bearer(limited), json={
        "template": PROMO, "recipients": [f"91970000110{n}"]}) for n in range(11)]
    assert [a.status_code for a in answers] == [202] * 10 + [429]
    assert answers[0].headers["X-RateLimit-Limit"] == "10" and answers[-1].json()["error"] == "rate_limited"


async def test_a_throughput_refusal_whose_retry_a_crash_lost_is_sent_when_the_broadcast_resumes(service):
    from inbox_actors.broadcasts import schedule

    workspace_id, _, key = await broadcasting_workspace(service)
    created = await service.client.post(BULK_SEND, headers=bearer(key), json={
        "template": PROMO, "recipients": ["919700001201"],
        "scheduled_at": (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()})
    broadcast_id = created.json()["id"]
    # As a stop between the refusal and its retry leaves it: claimed, its message failed with 130429.
    refused = await service.db.fetchval(
        "INSERT INTO messages (workspace_id, recipient, direction, sender_type, type, template_name, status,"
        " error_code, error_text, broadcast_id) VALUES ($1, '919700001201', 'outbound', 'system', 'template',"
        " 'promo', 'failed', 130429, 'Rate limit hit', $2) RETURNING id", workspace_id, broadcast_id)
    await service.db.execute("UPDATE broadcast_recipients SET state = 'claimed', message_id = $2, attempts = 1"
                             " WHERE broadcast_id = $1", broadcast_id, refused)
    await service.db.execute("UPDATE broadcasts SET scheduled_at = now() WHERE id = $1", broadcast_id)
    schedule.scheduled(service.actors, datetime.now(timezone.utc))
    done = await finished(service, key, broadcast_id)
    assert (done["counts"]["sent"], done["counts"]["failed"]) == (1, 0)
    assert (await service.client.get(f"{BROADCASTS}/{broadcast_id}/recipients", headers=bearer(key))
            ).json()["data"][0]["attempts"] == 2


async def left_in_flight(service, workspace_id: int, broadcast_id: int, phone: str) -> int:
    """The recipient as a node killed between committing its message and the platform's answer leaves it: claimed,
    its message pending (the platform never got it). The message's id."""
    pending = await service.db.fetchval(
        "INSERT INTO messages (workspace_id, recipient, direction, sender_type, type, template_name, status,"
        " broadcast_id) VALUES ($1, $2, 'outbound', 'system', 'template', 'promo', 'pending', $3) RETURNING id",
        workspace_id, phone, broadcast_id)
    await service.db.execute("UPDATE broadcast_recipients SET state = 'claimed', message_id = $3, attempts = 1"
                             " WHERE broadcast_id = $1 AND phone = $2", broadcast_id, phone, pending)
    return pending


async def platform_sends_to(service, phone_number_id: str, phone: str) -> int:
    async with httpx.AsyncClient(base_url=service.simulator_url) as simulator:
        record = (await simulator.get(f"/simulator/numbers/{phone_number_id}/messages")).json()["data"]
    return sum(1 for send in record if send["to"] == phone)


async def test_a_recipient_a_stopped_node_left_in_flight_is_sent_once_before_the_broadcast_completes(
        service, monkeypatch):
    """Before: the resumed broadcast completed at once, its in-flight recipient never sent (1 to 5 of 1,000 in a
    failover)."""
    from inbox_actors.broadcasts import broadcast, schedule

    monkeypatch.setattr(broadcast, "ORPHANED_SEND_SECONDS", 0.5)
    workspace_id, phone_number_id, _, key = await scale_workspace(service.db)
    await templates.add_template(service.db, workspace_id=workspace_id, name="promo", language="en",
                                 body="Hello {{1}}, our sale starts today!", category_name="MARKETING")
    created = await service.client.post(BULK_SEND, headers=bearer(key), json={
        "template": PROMO, "recipients": ["919700001301", "919700001302"],
        "scheduled_at": (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()})
    broadcast_id = created.json()["id"]
    stale = await left_in_flight(service, workspace_id, broadcast_id, "919700001301")
    await service.db.execute("UPDATE broadcasts SET status = 'sending', started_at = now() WHERE id = $1",
                             broadcast_id)
    schedule.workspace_taken(service.actors, workspace_id)       # as the node taking the workspace tells it

    done = await finished(service, key, broadcast_id)
    assert (done["counts"]["sent"], done["counts"]["failed"], done["counts"]["in_flight"]) == (2, 0, 0)
    assert await platform_sends_to(service, phone_number_id, "919700001301") == 1
    messages = await service.db.fetch("SELECT id, status, error_code FROM messages WHERE broadcast_id = $1"
                                      " AND recipient = '919700001301' ORDER BY id", broadcast_id)
    assert [(row["id"] == stale, row["status"], row["error_code"]) for row in messages[:1]] == [
        (True, "failed", 131000)]                               # given up as never sent, kept in the chat
    assert len(messages) == 2 and messages[1]["status"] in ("delivered", "read")


async def test_a_recipient_in_flight_whose_status_comes_is_not_sent_again(service, monkeypatch):
    """The node died after the platform accepted the message and before its answer was written: the status settles
    it, and the broadcast completes without a second send."""
    from inbox_actors.broadcasts import broadcast, schedule

    monkeypatch.setattr(broadcast, "ORPHANED_SEND_SECONDS", 3.0)
    workspace_id, phone_number_id, _, key = await scale_workspace(service.db)
    await templates.add_template(service.db, workspace_id=workspace_id, name="promo", language="en",
                                 body="Hello {{1}}, our sale starts today!", category_name="MARKETING")
    created = await service.client.post(BULK_SEND, headers=bearer(key), json={
        "template": PROMO, "recipients": ["919700001401"],
        "scheduled_at": (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()})
    broadcast_id = created.json()["id"]
    pending = await left_in_flight(service, workspace_id, broadcast_id, "919700001401")
    await service.db.execute("UPDATE broadcasts SET status = 'sending', started_at = now() WHERE id = $1",
                             broadcast_id)
    schedule.workspace_taken(service.actors, workspace_id)
    await trio.sleep(0.5)
    view = (await service.client.get(f"{BROADCASTS}/{broadcast_id}", headers=bearer(key))).json()
    assert (view["status"], view["counts"]["in_flight"]) == ("sending", 1)      # not completed while in flight
    # The platform's status for it, which carries the message's id as its callback data.
    await service.db.execute("UPDATE messages SET status = 'sent', platform_message_id = 'wamid.settled'"
                             " WHERE id = $1", pending)
    done = await finished(service, key, broadcast_id, settled=False)
    assert (done["counts"]["sent"], done["counts"]["in_flight"]) == (1, 0)
    assert await platform_sends_to(service, phone_number_id, "919700001401") == 0
    assert await service.db.fetchval("SELECT count(*) FROM messages WHERE broadcast_id = $1", broadcast_id) == 1


@pytest.mark.single_node("takes a workspace from its own node")
async def test_a_node_taking_a_workspace_resumes_its_broadcast_at_once_not_at_the_schedules_recheck(service):
    """Before: only the schedule's round, every 60 s, resumed a broadcast whose node had died."""
    workspace_id, _, key = await broadcasting_workspace(service)
    created = await service.client.post(BULK_SEND, headers=bearer(key), json={
        "template": PROMO, "recipients": ["919700001501", "919700001502"],
        "scheduled_at": (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()})
    broadcast_id = created.json()["id"]
    # The workspace leaves this node (as its node died), with its broadcast sending and nothing sending it.
    node = service.nodes[0]
    node.state.actors.evict_workspace(workspace_id)
    await eventually(lambda: not node.state.actors.live_in_workspace(workspace_id))
    await node.state.placement.keeper.release(workspace_id)
    await service.db.execute("UPDATE broadcasts SET status = 'sending', started_at = now() WHERE id = $1",
                             broadcast_id)
    # A request for the workspace takes its lease again, under a new epoch.
    assert (await service.client.get(f"{BROADCASTS}/{broadcast_id}", headers=bearer(key))).status_code == 200
    done = await finished(service, key, broadcast_id, settled=False, timeout=10.0)
    assert done["counts"]["sent"] == 2
